import type { z } from "zod";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import type { ApiKeyPrincipal } from "../auth/principal";
import type { Ctx } from "../context";

/**
 * One endpoint of /api/v1 or of the Hub protocol under /hub, written once: its method and path,
 * what it reads from the request (path, query, headers, body, each a zod schema that both
 * validates and documents), its OpenAPI operation, and the handler that calls its verb. The router
 * (lib/http/route.ts) and the OpenAPI document (lib/api/openapi.ts) are both derived from the list
 * in lib/api/operations/index.ts, one file per operation beside it.
 *
 * An operation under /hub speaks the Hugging Face Hub's protocol to its clients (lib/http/hub.ts):
 * the same keys, limits and envelope, plus the Hub's error headers, its query and form rules, and
 * answers without a body (a HEAD's metadata, a redirect to a signed URL).
 */
export type Operation = {
  method: "GET" | "POST" | "HEAD";
  /**
   * The OpenAPI path template, e.g. `/api/v1/datasets/{id}/versions`; a `{name}` is one path
   * segment, except the one named by `rest`.
   */
  path: `/api/v1/${string}` | `/hub/${string}`;
  /** The last path parameter, which takes every remaining segment (a file's path in a repository), each percent-decoded, joined by '/'. */
  rest?: string;
  /** How the body is sent: JSON (default) or an HTML form (`application/x-www-form-urlencoded`, repeated names as arrays). */
  bodyType?: "json" | "form";
  /** "none": no key (still rate-limited per client address). Default: a bearer API key. */
  auth?: "api_key" | "none";
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Request headers the operation reads; validated like the query (400 `invalid_parameter`). */
  headers?: z.ZodObject;
  body?: z.ZodType;
  /** Whether the client may send `If-None-Match` (a catalog read answered with an ETag). */
  conditional?: boolean;
  /** The OpenAPI operation without what is derived from the fields above. */
  openapi: Omit<ZodOpenApiOperationObject, "requestParams" | "requestBody"> & {
    requestBody?: Omit<NonNullable<ZodOpenApiOperationObject["requestBody"]>, "content"> & {
      examples?: Record<string, unknown>;
    };
  };
  handler: (ctx: Ctx<ApiKeyPrincipal>, input: OperationInput) => Promise<Reply>;
};

export type OperationInput = {
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
};

/**
 * What a handler returns: a plain object (200 JSON), a CacheableRead (from the instance's cache,
 * with an ETag), a JsonReply with its own status, or a StreamedJsonObject. Never a Response: how an
 * answer is written (headers, streaming, errors) is the delivery layer's.
 */
export type Reply = object;

/**
 * A JSON answer with a status other than 200 (201 for what a request created), or with headers of
 * its own; `nextPage`: the query of the next page, which the router sends as a `Link: <...>;
 * rel="next"` header on the request's own URL (the Hub's paging). The body is an object, or its
 * JSON already written as UTF-8 bytes (a download's, written while its entry was appended).
 */
export class JsonReply {
  constructor(
    readonly status: number,
    readonly body: object | Uint8Array<ArrayBuffer>,
    readonly options: { headers?: Record<string, string>; nextPage?: Record<string, string> | null } = {},
  ) {}
}

/** An answer without a body: a HEAD's metadata (200) or a redirect (302, `Location` among the headers). */
export class BodilessReply {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
  ) {}
}

/** A JSON object whose last member is a long array, written as it is read (memory stays flat). */
export class StreamedJsonObject {
  constructor(
    readonly head: object,
    readonly arrayName: string,
    readonly items: AsyncIterable<unknown>,
  ) {}
}

/**
 * Typed at the definition: the handler sees its own query and body types, while the list of
 * operations holds them all as `Operation`.
 */
export function defineOperation<
  Q extends z.ZodObject = z.ZodObject<Record<string, never>>,
  B extends z.ZodType = z.ZodUndefined,
  H extends z.ZodObject = z.ZodObject<Record<string, never>>,
  P extends z.ZodObject = z.ZodObject<Record<string, never>>,
>(
  operation: Omit<Operation, "query" | "body" | "headers" | "params" | "handler"> & {
    query?: Q;
    body?: B;
    headers?: H;
    params?: P;
    handler: (
      ctx: Ctx<ApiKeyPrincipal>,
      input: { params: z.infer<P>; query: z.infer<Q>; headers: z.infer<H>; body: z.infer<B> },
    ) => Promise<Reply>;
  },
): Operation {
  return operation as unknown as Operation;
}
