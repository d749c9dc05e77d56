import { z } from "zod";
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiResponseObject } from "zod-openapi";
import type { oas31 } from "zod-openapi";
import { ERROR_STATUS, type ErrorCode } from "../errors";
import { URL_TTL_SECONDS } from "../storage/config";
import { MAX_FILES_PER_DOWNLOAD } from "../downloads/scope";
import {
  AnnotationsQuery,
  DEFAULT_LIMIT,
  DownloadBody,
  DownloadHeaders,
  EpisodesQuery,
  MAX_LIMIT,
  PageQuery,
  PreviewBody,
} from "./requests";
import {
  AnnotationPage,
  DatasetId,
  DatasetList,
  Download,
  EpisodeId,
  EpisodePage,
  Manifest,
  Preview,
  VersionList,
  VersionNumber,
  errorEnvelope,
  ErrorEnvelope,
} from "./responses";
import { EXAMPLES } from "./openapi-examples";

export type OpenApiDocument = oas31.OpenAPIObject;

// ---- Headers every response carries, and those some errors add.

const rateLimitHeader = (name: string, description: string, example: string) =>
  z
    .string()
    .regex(/^[0-9]+$/)
    .meta({ header: { id: name, required: true }, description, example });

const XRequestId = z
  .string()
  .regex(/^req_[0-9A-Za-z]+$/)
  .meta({
    header: { id: "X-Request-Id", required: true },
    description: "Minted for every response; the same value as `error.request_id` in an error.",
    example: "req_7QdRk2mZpL1xYbN4",
  });
const RateLimitLimit = rateLimitHeader(
  "RateLimit-Limit",
  "Requests allowed per minute for this key (or, without a key, this client address).",
  "600",
);
const RateLimitRemaining = rateLimitHeader("RateLimit-Remaining", "Requests left in the current window.", "599");
const RateLimitReset = rateLimitHeader("RateLimit-Reset", "Seconds until the window resets.", "42");
const RetryAfter = z
  .string()
  .regex(/^[1-9][0-9]*$/)
  .meta({
    header: { id: "Retry-After", required: true },
    description: "Whole seconds to wait before retrying.",
    example: "17",
  });
const WwwAuthenticate = z
  .string()
  .meta({
    header: { id: "WWW-Authenticate", required: true },
    description: "The scheme to authenticate with.",
    example: "Bearer",
  });
const Allow = z
  .string()
  .meta({ header: { id: "Allow", required: true }, description: "The methods this path supports.", example: "GET" });

const ETag = z
  .string()
  .regex(/^"[\x21\x23-\x7e]*"$/)
  .meta({
    header: { id: "ETag", required: true },
    description:
      "A strong validator of exactly this body. Send it back in `If-None-Match` to get 304 without a body while the answer is unchanged.",
    example: '"q5x0mC7cS2l8pHqzJX5tY1o0i0m9mV7b8p4Y0kXk3yE"',
  });
const CacheControl = z.string().meta({
  header: { id: "Cache-Control", required: true },
  description:
    "`private, max-age=3600` for what the URL names once and for all (a page of a released version, its manifest, spans of a pinned version); `private, no-cache` for lists that change with licences and new versions (reuse them only after a 304). Errors are `no-store`.",
  example: "private, max-age=3600",
});
const CACHE_HEADERS = { ETag, "Cache-Control": CacheControl };

const COMMON_HEADERS = {
  "X-Request-Id": XRequestId,
  "RateLimit-Limit": RateLimitLimit,
  "RateLimit-Remaining": RateLimitRemaining,
  "RateLimit-Reset": RateLimitReset,
};
const EXTRA_HEADERS: Partial<Record<ErrorCode, Record<string, z.ZodType>>> = {
  unauthorized: { "WWW-Authenticate": WwwAuthenticate },
  method_not_allowed: { Allow },
  rate_limited: { "Retry-After": RetryAfter },
  unavailable: { "Retry-After": RetryAfter },
};

// ---- Error responses: one per status, narrowed to the codes that status can carry on that operation.

const STATUS_TEXT: Record<number, string> = {
  400: "Bad request",
  401: "No valid API key",
  403: "Forbidden",
  404: "Not found, or not visible to this key",
  405: "Method not allowed",
  406: "Not acceptable",
  409: "Conflict",
  422: "Scope too large",
  429: "Too many requests",
  500: "Internal error",
  503: "Temporarily unavailable",
};

/** When each code is returned; shown in the document and on the reference page. */
export const ERROR_MEANING: Record<ErrorCode, string> = {
  invalid_parameter:
    "A query parameter (or the Idempotency-Key header) is unknown, repeated or malformed; nothing is returned silently widened.",
  invalid_cursor: "The cursor was altered, or does not belong to this query (only `limit` may change between pages).",
  invalid_body:
    "The JSON body is missing, malformed or names unknown episodes or streams; the message says what and where.",
  unauthorized: "The key is missing, malformed, unknown, revoked or expired.",
  version_not_licensed:
    "The dataset is visible to the key, but this version is not licensed to it; the message names the version and dataset.",
  https_required:
    "A plain-HTTP request in production. Repeat it over HTTPS (and consider rotating the key it carried).",
  forbidden: "The signed-in portal user's role does not allow this.",
  not_found: "No such dataset, version or episode, or none visible to the key: the two cannot be told apart.",
  method_not_allowed: "The path exists but not with this method; `Allow` lists the methods it has.",
  not_acceptable: "The `Accept` header rules out application/json, the only representation.",
  idempotency_conflict: "The Idempotency-Key was already used with a different body.",
  scope_too_large: `The scope covers more than ${MAX_FILES_PER_DOWNLOAD.toLocaleString("en")} files; split it by episode_ids, filter or streams.`,
  rate_limited: "Too many requests in the current minute; wait the seconds in `Retry-After`.",
  internal_error: "An unexpected failure on the server; the cause is logged, never returned. Quote the request id.",
  unavailable: "The database or object store is unreachable for now; retry after `Retry-After` seconds.",
};

function errorResponse(status: number, codes: readonly ErrorCode[]): ZodOpenApiResponseObject {
  const headers = Object.assign({}, COMMON_HEADERS, ...codes.map((code) => EXTRA_HEADERS[code] ?? {}));
  return {
    description: `${STATUS_TEXT[status]}: ${codes.map((c) => `\`${c}\``).join(", ")}. ${codes.map((c) => ERROR_MEANING[c]).join(" ")}`,
    headers: z.object(headers),
    content: {
      "application/json": {
        schema: errorEnvelope(codes),
        examples: Object.fromEntries(codes.map((code) => [code, { summary: code, value: EXAMPLES.errors[code] }])),
      },
    },
  };
}

/** The error responses of an operation, grouped by status from the codes it can return. */
function errorResponses(codes: readonly ErrorCode[]): Record<string, ZodOpenApiResponseObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, grouped]) => [String(status), errorResponse(status, grouped)]),
  );
}

const TRANSPORT: ErrorCode[] = ["https_required", "not_acceptable", "rate_limited", "internal_error"];
const KEYED: ErrorCode[] = ["invalid_parameter", "unauthorized", ...TRANSPORT, "unavailable"];
const LIST: ErrorCode[] = [...KEYED, "invalid_cursor"];

function ok(
  description: string,
  schema: z.ZodType,
  example: unknown,
  status = "200",
): Record<string, ZodOpenApiResponseObject> {
  return {
    [status]: { description, headers: z.object(COMMON_HEADERS), content: { "application/json": { schema, example } } },
  };
}

/**
 * A catalog read: 200 with an ETag and Cache-Control, or 304 without a body when `If-None-Match`
 * names the current ETag. `etag: "optional"` where a large answer is streamed without one.
 */
function cacheable(
  description: string,
  schema: z.ZodType,
  example: unknown,
  etag: "required" | "optional" = "required",
): Record<string, ZodOpenApiResponseObject> {
  const etagHeader = etag === "required" ? ETag : ETag.optional().meta({ header: { required: false } });
  return {
    "200": {
      description,
      headers: z.object({ ...COMMON_HEADERS, ...CACHE_HEADERS, ETag: etagHeader }),
      content: { "application/json": { schema, example } },
    },
    "304": {
      description:
        "Not modified: `If-None-Match` names the current ETag (or is `*`). No body; the rate limit counted the request.",
      headers: z.object({ ...COMMON_HEADERS, ...CACHE_HEADERS }),
    },
  };
}

const Conditional = z.object({
  "If-None-Match": z
    .string()
    .optional()
    .meta({
      description: "ETags of answers the client holds (or `*`): if one is current, the answer is 304 without a body.",
      example: '"q5x0mC7cS2l8pHqzJX5tY1o0i0m9mV7b8p4Y0kXk3yE"',
    }),
});

// ---- Path parameters (identifiers of another shape cannot exist: such a request is 404, not 400).

const DatasetPath = z.object({ id: DatasetId.meta({ description: "Identifier of the dataset." }) });
const VersionPath = DatasetPath.extend({
  version: VersionNumber.meta({ description: "A version of the dataset, x.y.z." }),
});
const EpisodePath = z.object({ episode_id: EpisodeId.meta({ description: "Identifier of the episode." }) });

const paging = `Cursor-paginated: pass \`next_cursor\` back as \`cursor\` until it is \`null\`. \`limit\` is ${1}–${MAX_LIMIT}, default ${DEFAULT_LIMIT}.`;

const operations: Record<string, Record<"get" | "post", ZodOpenApiOperationObject | undefined>> = {
  "/api/v1/datasets": {
    get: {
      operationId: "listDatasets",
      tags: ["Catalog"],
      summary: "Datasets the key holds a licence for",
      description: `Every dataset in which the key is licensed for at least one version, ordered by \`dataset_id\`. ${paging}`,
      requestParams: { query: PageQuery, header: Conditional },
      responses: { ...cacheable("One page of datasets.", DatasetList, EXAMPLES.datasets), ...errorResponses(LIST) },
    },
    post: undefined,
  },
  "/api/v1/datasets/{id}/versions": {
    get: {
      operationId: "listVersions",
      tags: ["Catalog"],
      summary: "Released versions of a dataset, with changelogs",
      description: `All released versions of a visible dataset, newest first, each saying whether the key holds a licence for it. ${paging}`,
      requestParams: { path: DatasetPath, query: PageQuery, header: Conditional },
      responses: {
        ...cacheable("One page of versions.", VersionList, EXAMPLES.versions),
        ...errorResponses([...LIST, "not_found"]),
      },
    },
    post: undefined,
  },
  "/api/v1/datasets/{id}/versions/{version}/manifest": {
    get: {
      operationId: "getManifest",
      tags: ["Catalog"],
      summary: "Every file of a version",
      description:
        "The full manifest of a licensed version: totals, stream names and every file with its size and SHA-256, by path. One document (not paginated), streamed: a failure half way ends the body early as invalid JSON, never as a shorter valid list. A manifest of more than 2,000 files is streamed as it is read and has no ETag.",
      requestParams: { path: VersionPath, header: Conditional },
      responses: {
        ...cacheable("The manifest.", Manifest, EXAMPLES.manifest, "optional"),
        ...errorResponses([...KEYED, "version_not_licensed", "not_found"]),
      },
    },
    post: undefined,
  },
  "/api/v1/datasets/{id}/versions/{version}/episodes": {
    get: {
      operationId: "listEpisodes",
      tags: ["Catalog"],
      summary: "Episodes of a version, filtered",
      description: `Episode metadata of a licensed version in \`episode_id\` byte order. \`total\` counts every episode matching the filters. Unknown parameters are refused (a typo never silently returns everything). ${paging}`,
      requestParams: { path: VersionPath, query: EpisodesQuery, header: Conditional },
      responses: {
        ...cacheable("One page of episodes.", EpisodePage, EXAMPLES.episodes),
        ...errorResponses([...LIST, "version_not_licensed", "not_found"]),
      },
    },
    post: undefined,
  },
  "/api/v1/episodes/{episode_id}/annotations": {
    get: {
      operationId: "listAnnotations",
      tags: ["Catalog"],
      summary: "Subtask spans of an episode",
      description: `The episode's spans, ordered by \`start_s\`, in the newest version licensed to the key that contains it, or in the pinned \`version\`. ${paging}`,
      requestParams: { path: EpisodePath, query: AnnotationsQuery, header: Conditional },
      responses: {
        ...cacheable("One page of spans.", AnnotationPage, EXAMPLES.annotations),
        ...errorResponses([...LIST, "version_not_licensed", "not_found"]),
      },
    },
    post: undefined,
  },
  "/api/v1/downloads": {
    get: undefined,
    post: {
      operationId: "createDownload",
      tags: ["Downloads"],
      summary: "Signed URLs for a scope of a version",
      description: `Resolves the scope, records it in the disclosure log and returns one signed GET URL per file, each valid for ${URL_TTL_SECONDS} s (URLs accept HTTP Range requests). Every request, including one that re-requests expired URLs, is a new disclosure. At most ${MAX_FILES_PER_DOWNLOAD.toLocaleString("en")} files per request: split larger scopes by \`episode_ids\`, \`filter\` or \`streams\`.`,
      requestParams: { header: DownloadHeaders },
      requestBody: {
        required: true,
        content: { "application/json": { schema: DownloadBody, examples: EXAMPLES.downloadRequests } },
      },
      responses: {
        ...ok("A new download.", Download, EXAMPLES.download, "201"),
        ...ok(
          "The download made earlier with this Idempotency-Key and body (no new disclosure).",
          Download,
          EXAMPLES.download,
          "200",
        ),
        ...errorResponses([
          ...KEYED,
          "invalid_body",
          "version_not_licensed",
          "not_found",
          "idempotency_conflict",
          "scope_too_large",
        ]),
      },
    },
  },
  "/api/v1/previews": {
    get: undefined,
    post: {
      operationId: "createPreview",
      tags: ["Downloads"],
      summary: "Signed URLs to watch an episode's video",
      description: `One signed GET URL per video stream of an episode, each valid for ${URL_TTL_SECONDS} s, with where the episode lies in the file (\`start_s\` to \`end_s\`: a file may hold several episodes). A preview is a disclosure: it is recorded in the disclosure log with channel \`preview\` before any URL is returned. Asking again for the same episode, version and streams while an earlier preview's URLs are still valid for at least a minute returns that preview (200, same id, URLs and expiry) without a new entry. Streams that are not video are not previewed; download them.`,
      requestBody: {
        required: true,
        content: { "application/json": { schema: PreviewBody, examples: EXAMPLES.previewRequests } },
      },
      responses: {
        ...ok("A new preview, recorded in the disclosure log.", Preview, EXAMPLES.preview, "201"),
        ...ok(
          "The preview already issued for the same episode, version and streams, still valid (no new disclosure).",
          Preview,
          EXAMPLES.preview,
          "200",
        ),
        ...errorResponses([...KEYED, "invalid_body", "version_not_licensed", "not_found"]),
      },
    },
  },
  "/api/v1/openapi.json": {
    get: {
      operationId: "getOpenApiDocument",
      tags: ["Meta"],
      summary: "This document",
      description: "The OpenAPI 3.1 description of the API. Needs no key; rate-limited per client address.",
      security: [],
      responses: {
        "200": {
          description: "The OpenAPI document.",
          headers: z.object(COMMON_HEADERS),
          content: { "application/json": { schema: { type: "object" } } },
        },
        ...errorResponses(["invalid_parameter", ...TRANSPORT]),
      },
    },
    post: undefined,
  },
};

const DESCRIPTION = `A read-only JSON API over the datasets and dataset versions your organisation holds a licence for, and short-lived signed URLs to download their files or preview an episode's video. Every download and every preview is recorded in a disclosure log.

- **Authentication:** \`Authorization: Bearer <key>\` on every request except this document. A missing or invalid key is 401 with \`WWW-Authenticate: Bearer\`.
- **Visibility:** a dataset you hold no licence for answers exactly like one that does not exist (404); an existing but unlicensed version of a visible dataset is 403 \`version_not_licensed\`.
- **Errors:** always \`{"error":{"code","message","request_id"}}\` with a stable \`code\` (table under \`x-error-codes\`). Any method a path does not support is 405 \`method_not_allowed\` with \`Allow\`; a path that does not exist is 404 \`not_found\`.
- **Headers:** every response carries \`X-Request-Id\` and \`RateLimit-Limit\` / \`RateLimit-Remaining\` / \`RateLimit-Reset\`; 429 and 503 carry \`Retry-After\` in whole seconds.
- **Conditional requests:** catalog reads carry a strong \`ETag\` and \`Cache-Control: private\`; send the ETag back in \`If-None-Match\` to get 304 without a body while the answer is unchanged. Every request counts against the rate limit, 304s included.
- **Pagination:** lists carry \`next_cursor\`; pass it back as \`cursor\` until it is \`null\`.`;

function build(): OpenApiDocument {
  const paths = Object.fromEntries(
    Object.entries(operations).map(([path, methods]) => [
      path,
      Object.fromEntries(Object.entries(methods).filter(([, operation]) => operation !== undefined)),
    ]),
  );
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
      { name: "Meta", description: "About the API itself." },
    ],
    paths,
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
