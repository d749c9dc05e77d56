import { z } from "zod";
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from "zod-openapi";
import type { oas31 } from "zod-openapi";
import { ERROR_STATUS, type ErrorCode } from "../errors";
import type { Operation } from "./operation";
import { API_OPERATIONS } from "./operations";
import { Conditional, ERROR_MEANING, errorResponse } from "./openapi-parts";
import { ErrorEnvelope } from "./responses";

export { ERROR_MEANING };
export type OpenApiDocument = oas31.OpenAPIObject;

/** An operation as the document shows it: what it reads from the request, and the rest as written. */
function documented(operation: Operation): ZodOpenApiOperationObject {
  const { requestBody, ...rest } = operation.openapi;
  const header =
    operation.conditional || operation.headers
      ? z.object({ ...(operation.headers?.shape ?? {}), ...(operation.conditional ? Conditional.shape : {}) })
      : undefined;
  return {
    ...rest,
    requestParams: {
      ...(operation.params ? { path: operation.params } : {}),
      ...(operation.query ? { query: operation.query } : {}),
      ...(header ? { header } : {}),
    },
    ...(operation.body
      ? {
          requestBody: {
            required: requestBody?.required,
            description: requestBody?.description,
            content:
              operation.bodyType === "form"
                ? // A form repeats a name for each item of an array (`paths=a&paths=b`), as the Hub's clients send it.
                  { [FORM]: { schema: operation.body, encoding: formEncoding(operation.body) } }
                : { "application/json": { schema: operation.body, examples: requestBody?.examples as never } },
          },
        }
      : {}),
  };
}

const FORM = "application/x-www-form-urlencoded";

function formEncoding(body: z.ZodType): Record<string, { style: "form"; explode: true }> {
  const shape = body instanceof z.ZodObject ? (body.shape as Record<string, z.ZodType>) : {};
  return Object.fromEntries(
    Object.entries(shape)
      .filter(([, field]) => field instanceof z.ZodArray)
      .map(([name]) => [name, { style: "form", explode: true }]),
  );
}

function paths(operations: readonly Operation[]): ZodOpenApiPathsObject {
  const byPath: ZodOpenApiPathsObject = {};
  for (const operation of operations) {
    byPath[operation.path] = { ...byPath[operation.path], [operation.method.toLowerCase()]: documented(operation) };
  }
  return byPath;
}

const DESCRIPTION = `A read-only JSON API over the datasets and dataset versions your organisation holds a licence for, and short-lived signed URLs to download their files or preview an episode's video. Every download and every preview is recorded in a disclosure log.

- **Authentication:** \`Authorization: Bearer <key>\` on every request except this document. A missing or invalid key is 401 with \`WWW-Authenticate: Bearer\`.
- **Visibility:** a dataset you hold no licence for answers exactly like one that does not exist (404); an existing but unlicensed version of a visible dataset is 403 \`version_not_licensed\`. An episode whose contributor withdrew consent is gone from every list, total and manifest; naming it directly is 410 \`episode_withdrawn\`, and a file it shares with other episodes is not delivered (422 \`withdrawn_content\`).
- **Errors:** always \`{"error":{"code","message","request_id"}}\` with a stable \`code\` (table under \`x-error-codes\`). Any method a path does not support is 405 \`method_not_allowed\` with \`Allow\`; a path that does not exist is 404 \`not_found\`.
- **Headers:** every response carries \`X-Request-Id\` and \`RateLimit-Limit\` / \`RateLimit-Remaining\` / \`RateLimit-Reset\`; 429 and 503 carry \`Retry-After\` in whole seconds.
- **Conditional requests:** catalog reads carry a strong \`ETag\` and \`Cache-Control: private\`; send the ETag back in \`If-None-Match\` to get 304 without a body while the answer is unchanged. Every request counts against the rate limit, 304s included.
- **Pagination:** lists carry \`next_cursor\`; pass it back as \`cursor\` until it is \`null\`.`;

function build(): OpenApiDocument {
  const document = createDocument({
    openapi: "3.1.0",
    info: { title: "Dataset Access Service API", version: "1.0.0", description: DESCRIPTION },
    servers: [{ url: "/", description: "This server" }],
    security: [{ bearerAuth: [] }],
    tags: [
      {
        name: "Catalog",
        description: "Datasets, versions, manifests, episodes and annotations, scoped by the key's licences.",
      },
      {
        name: "Downloads",
        description:
          "Signed URLs to download files or watch an episode's video; every request is written to the disclosure log.",
      },
      {
        name: "Notices",
        description:
          "What the data owner tells your organisation: episodes withdrawn (a contributor withdrew consent) that you received, and your acknowledgements of what you deleted.",
      },
      {
        name: "Hub",
        description:
          "The Hugging Face Hub's read protocol, under /hub: dataset repositories `das/<dataset_id>` for huggingface_hub, `datasets` and LeRobot (`HF_ENDPOINT=<this service>/hub`, `HF_TOKEN=<your key>`). A GET of a file is recorded in the disclosure log (channel `hub`).",
      },
      { name: "Meta", description: "About the API itself." },
    ],
    paths: paths(API_OPERATIONS),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "das_<43 base62 characters>",
          description:
            "An API key issued by your administrator, shown once. Send it as `Authorization: Bearer das_...`.",
        },
      },
      schemas: { Error: ErrorEnvelope },
      responses: {
        MethodNotAllowed: errorResponse(405, ["method_not_allowed"]),
        NotFound: errorResponse(404, ["not_found"]),
      },
    },
  });
  return {
    ...document,
    "x-error-codes": Object.entries(ERROR_STATUS).map(([code, status]) => ({
      code,
      status,
      meaning: ERROR_MEANING[code as ErrorCode],
    })),
  } as OpenApiDocument;
}

let cached: OpenApiDocument | undefined;

/** The API's OpenAPI 3.1 document, generated from the request and response schemas (built once per process). */
export function openApiDocument(): OpenApiDocument {
  cached ??= build();
  return cached;
}
