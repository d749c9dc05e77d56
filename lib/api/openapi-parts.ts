// The pieces every operation's OpenAPI description is made of: the headers every answer carries,
// the error responses grouped by status, success and conditional (ETag) responses, path parameters.
import { z } from "zod";
import type { ZodOpenApiResponseObject } from "zod-openapi";
import { ERROR_STATUS, type ErrorCode } from "../errors";
import { MAX_FILES_PER_DOWNLOAD } from "../downloads/scope";
import { NAMESPACE as HUB_NAMESPACE } from "../hub/repository";
import { DEFAULT_LIMIT, MAX_LIMIT } from "./requests";
import { DatasetId, EpisodeId, VersionNumber, errorEnvelope } from "./responses";
import { EXAMPLES } from "./openapi-examples";

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
const WwwAuthenticate = z.string().meta({
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
    "`private, no-cache`: keep the answer, but ask again before each use, with its ETag in `If-None-Match` (a 304 without a body while it is unchanged). Lists change with licences and new versions, and a released version's pages and manifest change when an episode is withdrawn. Errors are `no-store`.",
  example: "private, no-cache",
});
const CACHE_HEADERS = { ETag, "Cache-Control": CacheControl };

export const COMMON_HEADERS = {
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

export const STATUS_TEXT: Record<number, string> = {
  400: "Bad request",
  401: "No valid API key",
  403: "Forbidden",
  404: "Not found, or not visible to this key",
  405: "Method not allowed",
  406: "Not acceptable",
  409: "Conflict",
  410: "Gone",
  413: "Body too large",
  422: "Unprocessable",
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
  episode_withdrawn:
    "The episode is in a version licensed to the key, but its contributor's consent was withdrawn: it is no longer available in any version.",
  withdrawn_content:
    "A file the request would deliver also holds a withdrawn episode (several episodes packed into one file); the message names the files and the withdrawn episodes. Narrow the scope to leave those files out.",
  method_not_allowed: "The path exists but not with this method; `Allow` lists the methods it has.",
  not_acceptable: "The `Accept` header rules out application/json, the only representation.",
  idempotency_conflict: "The Idempotency-Key was already used with a different body.",
  acknowledgement_limit:
    "The notice has 10 acknowledgements already, the most one notice takes; each of them is kept and shown to the data owner.",
  body_too_large:
    "The body is larger than 1,000,000 bytes (counted as it arrives, chunked or not); the server stops reading it and then closes the connection. Split the request.",
  scope_too_large: `The scope covers more than ${MAX_FILES_PER_DOWNLOAD.toLocaleString("en")} files; split it by episode_ids, filter or streams.`,
  rate_limited: "Too many requests in the current minute; wait the seconds in `Retry-After`.",
  internal_error: "An unexpected failure on the server; the cause is logged, never returned. Quote the request id.",
  unavailable:
    "The database or object store is unreachable for now, or (a fingerprinted version) the caller's licence's own copies of the files are still being made; retry after `Retry-After` seconds.",
};

export function errorResponse(status: number, codes: readonly ErrorCode[]): ZodOpenApiResponseObject {
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
export function errorResponses(codes: readonly ErrorCode[]): Record<string, ZodOpenApiResponseObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, grouped]) => [String(status), errorResponse(status, grouped)]),
  );
}

export const TRANSPORT: ErrorCode[] = ["https_required", "not_acceptable", "rate_limited", "internal_error"];
export const KEYED: ErrorCode[] = ["invalid_parameter", "unauthorized", ...TRANSPORT, "unavailable"];
export const LIST: ErrorCode[] = [...KEYED, "invalid_cursor"];

export function ok(
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
export function cacheable(
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

export const Conditional = z.object({
  "If-None-Match": z.string().optional().meta({
    description: "ETags of answers the client holds (or `*`): if one is current, the answer is 304 without a body.",
    example: '"q5x0mC7cS2l8pHqzJX5tY1o0i0m9mV7b8p4Y0kXk3yE"',
  }),
});

// ---- Path parameters (identifiers of another shape cannot exist: such a request is 404, not 400).

export const DatasetPath = z.object({ id: DatasetId.meta({ description: "Identifier of the dataset." }) });
export const VersionPath = DatasetPath.extend({
  version: VersionNumber.meta({ description: "A version of the dataset, x.y.z." }),
});
export const EpisodePath = z.object({ episode_id: EpisodeId.meta({ description: "Identifier of the episode." }) });

export const paging = `Cursor-paginated: pass \`next_cursor\` back as \`cursor\` until it is \`null\`. \`limit\` is ${1}–${MAX_LIMIT}, default ${DEFAULT_LIMIT}.`;

// ---- Links: where the identifiers an answer holds are taken next. A client (or a stateful fuzzer)
// follows them from the lists to the operations that take their ids, and from a page to the next.

type Link = {
  operationId: string;
  description: string;
  /** Target parameters by `{in}.{name}`, each a runtime expression such as `$response.body#/datasets/0/dataset_id`, or a constant (`das`). */
  parameters?: Record<string, string>;
  /** A body whose string values (and those of its arrays) may be runtime expressions. */
  requestBody?: Record<string, string | string[]>;
};

/** `responses` whose 200 answer carries `links`. */
export function linked(
  responses: Record<string, ZodOpenApiResponseObject>,
  links: Record<string, Link>,
): Record<string, ZodOpenApiResponseObject> {
  const ok = responses["200"];
  if (!ok) throw new Error("links belong to a 200 answer");
  return { ...responses, "200": { ...ok, links } };
}

/**
 * The links from a list whose rows each name a dataset and one of its versions (the datasets, the
 * licences): from its first row to that dataset's versions, and to the version's manifest, episodes
 * and a download of it. `list` is the body's array, `versionField` the row's version; `dataset` and
 * `version` say in words which ones the row names, for the links' descriptions.
 */
export function firstRowLinks(row: {
  list: string;
  versionField: string;
  dataset: string;
  version: string;
}): Record<string, Link> {
  const datasetId = `$response.body#/${row.list}/0/dataset_id`;
  const version = `$response.body#/${row.list}/0/${row.versionField}`;
  const ofVersion = { "path.id": datasetId, "path.version": version };
  return {
    versions: {
      operationId: "listVersions",
      description: `The versions of ${row.dataset}.`,
      parameters: { "path.id": datasetId },
    },
    manifest: { operationId: "getManifest", description: `The manifest of ${row.version}.`, parameters: ofVersion },
    episodes: { operationId: "listEpisodes", description: `The episodes of ${row.version}.`, parameters: ofVersion },
    download: {
      operationId: "createDownload",
      description: `A download of ${row.version}.`,
      requestBody: { dataset_id: datasetId, version },
    },
    ...hubRepositoryLinks(datasetId, row.dataset),
    ...hubRevisionLinks(datasetId, version, row.version),
  };
}

/**
 * The same dataset as a repository of the Hub protocol (`das/<dataset_id>`, lib/hub/repository.ts):
 * its info at `main` and its branches and tags. Without these links nothing in an answer leads to
 * /hub with a real repository's name, and a stateful walk (scripts/api-fuzz) meets only 404s there.
 * `datasetId` is an expression (or constant) for the dataset's id, `dataset` says which in words.
 */
export function hubRepositoryLinks(datasetId: string, dataset: string): Record<string, Link> {
  const repository = { "path.namespace": HUB_NAMESPACE, "path.name": datasetId };
  return {
    hubInfo: {
      operationId: "hubDatasetInfo",
      description: `The Hub repository of ${dataset}, at main.`,
      parameters: repository,
    },
    hubRefs: {
      operationId: "hubRefs",
      description: `The Hub branches and tags of ${dataset}.`,
      parameters: repository,
    },
  };
}

/**
 * A version of a dataset as a revision of its Hub repository (the version is a tag): its info, its
 * root folder and its `meta/` folder, the paths-info of the files a Hub client asks for first (a
 * LeRobot dataset's `meta/info.json`, the card; one that is not there is left out of the answer,
 * not refused), and the resolve of `meta/info.json` and its HEAD (404 `EntryNotFound` on a version
 * that is not LeRobot's), as LeRobot reads it first.
 */
export function hubRevisionLinks(datasetId: string, version: string, which: string): Record<string, Link> {
  const revision = { "path.namespace": HUB_NAMESPACE, "path.name": datasetId, "path.revision": version };
  return {
    hubInfoAtVersion: {
      operationId: "hubDatasetInfoAtRevision",
      description: `The Hub repository at ${which} (its tag).`,
      parameters: revision,
    },
    hubTree: { operationId: "hubTree", description: `The Hub tree of ${which}.`, parameters: revision },
    hubPathsInfo: {
      operationId: "hubPathsInfo",
      description: `The Hub paths-info of ${which}'s meta/info.json and README.md.`,
      parameters: revision,
      requestBody: { paths: ["meta/info.json", "README.md"] },
    },
    hubTreeOfMeta: {
      operationId: "hubTreeAtPath",
      description: `The Hub tree of ${which}'s meta/ folder.`,
      parameters: { ...revision, "path.path": "meta" },
    },
    hubResolveInfo: {
      operationId: "hubResolve",
      description: `The Hub's resolve of ${which}'s meta/info.json: a disclosure, then a redirect.`,
      parameters: { ...revision, "path.path": "meta/info.json" },
    },
    hubResolveInfoHead: {
      operationId: "hubResolveHead",
      description: `The Hub metadata (HEAD) of ${which}'s meta/info.json.`,
      parameters: { ...revision, "path.path": "meta/info.json" },
    },
  };
}

/**
 * A file of a version through the Hub protocol: resolve (a disclosure, then a redirect to the
 * store), its HEAD, and its paths-info. `path` is an expression for the file's path.
 */
export function hubFileLinks(datasetId: string, version: string, path: string, which: string): Record<string, Link> {
  const revision = { "path.namespace": HUB_NAMESPACE, "path.name": datasetId, "path.revision": version };
  const file = { ...revision, "path.path": path };
  return {
    hubResolve: {
      operationId: "hubResolve",
      description: `The Hub's resolve of ${which}: a disclosure, then a redirect.`,
      parameters: file,
    },
    hubResolveHead: {
      operationId: "hubResolveHead",
      description: `The Hub metadata (HEAD) of ${which}.`,
      parameters: file,
    },
    hubPathsInfoOfFile: {
      operationId: "hubPathsInfo",
      description: `The Hub paths-info of ${which}.`,
      parameters: revision,
      requestBody: { paths: [path] },
    },
  };
}

/**
 * The next page of a list: the same request with `cursor` set to `next_cursor` (absent on the last
 * page). `same` names the parameters the cursor is bound to, as `{in}.{name}`, carried over as sent.
 */
export function nextPage(operationId: string, same: readonly string[] = []): Link {
  return {
    operationId,
    description: "The next page: the same request with `cursor` set to `next_cursor` (`null` on the last page).",
    parameters: {
      ...Object.fromEntries(same.map((p) => [p, `$request.${p}`])),
      "query.cursor": "$response.body#/next_cursor",
    },
  };
}
