import { z } from "zod";
import { AppError } from "../errors";
import { env } from "../env";
import { getDb } from "../db/client";
import { authenticateApiKey, bearerToken } from "../auth/api-keys";
import type { ApiKeyPrincipal } from "../auth/principal";
import type { Ctx } from "../context";
import { newRequestId } from "./request-id";
import { clientIp } from "../client-address";
import { assertAcceptsJson, assertHttps } from "./transport";
import { parseHeaders, parseQuery } from "./query";
import { readJsonBody } from "./body";
import { rateLimiters, type RateLimitState } from "../limits/rate-limit";
import { rateLimitHeaders } from "./rate-limit-headers";
import { errorResponse, JSON_HEADERS, toAppError } from "./respond";
import { CACHE_CONTROL, conditionalResponse } from "./conditional";
import { streamJsonObject } from "./stream-json";
import {
  BodilessReply,
  JsonReply,
  type Operation,
  type OperationInput,
  type Reply,
  StreamedJsonObject,
} from "../api/operation";
import { asHubError, isHubPath, nextPageLink, parseHubQuery, readFormBody } from "./hub";
import { CacheableRead } from "../cache/cacheable";
import { cachedBody, readCache, type ReadCache } from "../cache/read-cache";

type NextRouteContext = { params: Promise<Record<string, string | string[] | undefined>> };
export type RouteHandler = (request: Request, context: NextRouteContext) => Promise<Response>;

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
const BASE_HEADERS = {
  "Cache-Control": "no-store",
  "Strict-Transport-Security": "max-age=63072000; includeSubDomains",
  "X-Content-Type-Options": "nosniff",
};
const NO_SUCH_ENDPOINT = "No such endpoint. The API lives under /api/v1; see /api/v1/openapi.json.";
const NO_SUCH_HUB_ENDPOINT =
  "No such endpoint of the Hub protocol: dataset repositories das/<dataset_id> are served under /hub (HF_ENDPOINT=<this service>/hub); see /api/v1/openapi.json.";

type Segment = { literal: string } | { param: string; rest?: true };
type Compiled = { segments: Segment[]; byMethod: Map<string, Operation> };

/**
 * The API's one route handler per method, for the catch-all route under app/api: each request is
 * matched against the operations' path templates (a trailing slash names the same endpoint), then
 * answered by `answer`; a path no operation has is 404, a method the path lacks 405 with `Allow`.
 * Next's router brings the request here in development and production alike.
 */
export function apiRoutes(operations: readonly Operation[]): Record<(typeof METHODS)[number], RouteHandler> {
  const compiled = new Map<string, Compiled>();
  for (const operation of operations) {
    const entry = compiled.get(operation.path) ?? {
      segments: operation.path
        .split("/")
        .slice(1)
        .map((part): Segment => {
          if (!/^\{.+\}$/.test(part)) return { literal: part };
          const param = part.slice(1, -1);
          return param === operation.rest ? { param, rest: true } : { param };
        }),
      byMethod: new Map(),
    };
    entry.byMethod.set(operation.method, operation);
    compiled.set(operation.path, entry);
  }
  const routes = [...compiled.values()];
  const handler: RouteHandler = async (request) => {
    const url = new URL(request.url);
    const match = matchPath(routes, url.pathname);
    if (match === "malformed")
      return errorOnlyResponse(
        request,
        new AppError("invalid_parameter", "The request path is not valid percent-encoded UTF-8."),
      );
    if (!match)
      return errorOnlyResponse(
        request,
        new AppError("not_found", isHubPath(url.pathname) ? NO_SUCH_HUB_ENDPOINT : NO_SUCH_ENDPOINT),
      );
    // A HEAD without an operation of its own is answered as the GET, less its body (as Next does).
    const operation =
      match.route.byMethod.get(request.method) ??
      (request.method === "HEAD" ? match.route.byMethod.get("GET") : undefined);
    if (!operation) {
      const allowed = [...match.route.byMethod.keys()].sort().join(", ");
      return errorOnlyResponse(
        request,
        new AppError("method_not_allowed", `${request.method} is not supported here. Allowed: ${allowed}.`, {
          headers: { Allow: allowed },
        }),
      );
    }
    return answer(operation, request, url, match.params);
  };
  return Object.fromEntries(METHODS.map((method) => [method, handler])) as Record<
    (typeof METHODS)[number],
    RouteHandler
  >;
}

function matchPath(
  routes: Compiled[],
  pathname: string,
): { route: Compiled; params: Record<string, string> } | "malformed" | null {
  const parts = (pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname).split("/").slice(1);
  for (const route of routes) {
    const rest = route.segments.at(-1);
    const restful = rest !== undefined && "param" in rest && rest.rest === true;
    if (restful ? parts.length < route.segments.length : route.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let matches = true;
    for (const [i, segment] of route.segments.entries()) {
      const part = parts[i]!;
      if ("literal" in segment) {
        if (segment.literal !== part) matches = false;
      } else {
        try {
          params[segment.param] = segment.rest
            ? parts.slice(i).map(decodeURIComponent).join("/")
            : decodeURIComponent(part);
        } catch {
          return "malformed";
        }
      }
      if (!matches) break;
    }
    if (matches) return { route, params };
  }
  return null;
}

/**
 * One operation's answer: request id, transport rules, authentication, rate limit and input parsing
 * happen here, in that order, so the handler only calls a lib verb. What it returns is written as
 * JSON: a CacheableRead (what a verb returns once it has authorized the caller) from the instance's
 * cache when it holds it, with an ETag; a JsonReply with its status; a StreamedJsonObject as it is
 * read. Whatever it throws becomes the error envelope.
 */
async function answer(
  operation: Operation,
  request: Request,
  url: URL,
  params: Record<string, string>,
): Promise<Response> {
  const requestId = newRequestId();
  const ip = clientIp(request);
  const limits = rateLimiters();
  let limit: RateLimitState | undefined;
  let response: Response;
  const hub = isHubPath(operation.path);
  try {
    const cache = readCache();
    assertHttps(request, env().NODE_ENV === "production");
    // The Hub's clients accept whatever a file is; their answers are JSON or no body at all.
    if (!hub) assertAcceptsJson(request);
    let principal: ApiKeyPrincipal | undefined;
    if (operation.auth === "none") {
      limit = await limits.anonymousPerIp.consume(ip);
    } else {
      ({ principal, limit } = await authenticate(request, ip, cache));
    }
    if (limit.limited) throw rateLimited(limit, operation.auth === "none" ? "requests from this address" : undefined);
    const input: OperationInput = {
      params,
      query: hub
        ? parseHubQuery(url, operation.query ?? NO_PARAMETERS)
        : parseQuery(url, operation.query ?? NO_PARAMETERS),
      headers: operation.headers ? parseHeaders(request.headers, operation.headers) : {},
      body: !operation.body
        ? undefined
        : operation.bodyType === "form"
          ? await readFormBody(request, operation.body)
          : await readJsonBody(request, operation.body),
    };
    const ctx = { db: getDb(), principal, requestId, cache } as Ctx<ApiKeyPrincipal>;
    response = await write(request, requestId, cache, await operation.handler(ctx, input));
  } catch (error) {
    const refusal = toAppError(error, requestId);
    response = errorResponse(hub ? asHubError(refusal) : refusal, requestId);
  }
  limit ??= await limits.authFailuresPerIp.peek(ip).catch(() => undefined);
  return withCommonHeaders(response, requestId, limit);
}

const NO_PARAMETERS = z.object({});

async function write(
  request: Request,
  requestId: string,
  cache: ReadCache | undefined,
  reply: Reply,
): Promise<Response> {
  if (reply instanceof CacheableRead) return conditionalResponse(request, await cachedBody(cache, reply));
  if (reply instanceof JsonReply) {
    const { headers = {}, nextPage } = reply.options;
    const link: Record<string, string> = nextPage ? { Link: nextPageLink(request, nextPage) } : {};
    const body = reply.body instanceof Uint8Array ? reply.body : JSON.stringify(reply.body);
    return new Response(body, {
      status: reply.status,
      headers: { ...JSON_HEADERS, ...headers, ...link },
    });
  }
  if (reply instanceof BodilessReply) return new Response(null, { status: reply.status, headers: reply.headers });
  if (reply instanceof StreamedJsonObject) {
    const streamed = streamJsonObject(reply.head, reply.arrayName, reply.items, requestId);
    streamed.headers.set("Cache-Control", CACHE_CONTROL);
    return streamed;
  }
  return new Response(JSON.stringify(reply), { headers: JSON_HEADERS });
}

async function authenticate(
  request: Request,
  ip: string,
  cache: ReadCache | undefined,
): Promise<{ principal?: ApiKeyPrincipal; limit: RateLimitState }> {
  const limits = rateLimiters();
  try {
    const principal = await authenticateApiKey(getDb(), bearerToken(request.headers.get("authorization")), { cache });
    return { principal, limit: await limits.perKey.consume(principal.keyId) };
  } catch (error) {
    if (!(error instanceof AppError && error.code === "unauthorized")) throw error;
    // Failed attempts spend the address's budget; past it the answer is 429, so guessing is slowed
    // while callers with a valid key from the same address are not affected.
    const limit = await limits.authFailuresPerIp.consume(ip);
    if (limit.limited) throw rateLimited(limit, "failed authentication attempts from this address");
    throw error;
  }
}

function rateLimited(limit: RateLimitState, what = "requests for this key"): AppError {
  return new AppError(
    "rate_limited",
    `Too many ${what}: the limit is ${limit.limit} per minute. Retry after ${limit.resetSeconds} s.`,
    { headers: rateLimitHeaders(limit) },
  );
}

async function readParams(context: NextRouteContext | undefined): Promise<Record<string, string>> {
  const raw = (await context?.params) ?? {};
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value === "string") params[name] = value;
    else if (Array.isArray(value)) params[name] = value.join("/");
  }
  return params;
}

function withCommonHeaders(response: Response, requestId: string, limit: RateLimitState | undefined): Response {
  const headers = { ...BASE_HEADERS, "X-Request-Id": requestId, ...(limit ? rateLimitHeaders(limit) : {}) };
  for (const [name, value] of Object.entries(headers)) {
    if (!response.headers.has(name)) response.headers.set(name, value);
  }
  return response;
}

/** A response that is only an error (no endpoint ran): the envelope with the usual headers (and the Hub's, under /hub). */
export async function errorOnlyResponse(request: Request, error: AppError): Promise<Response> {
  const requestId = newRequestId();
  const limit = await rateLimiters()
    .authFailuresPerIp.peek(clientIp(request))
    .catch(() => undefined);
  const refusal = isHubPath(new URL(request.url).pathname) ? asHubError(error) : error;
  return withCommonHeaders(errorResponse(refusal, requestId), requestId, limit);
}

/**
 * A route file's exports for a route that is not the API's (Auth.js's): the given methods, and a
 * JSON 405 naming the allowed ones for every other method Next dispatches (it would otherwise
 * answer with an empty body, and OPTIONS with a 204 listing every exported method).
 */
export function route<M extends Partial<Record<"GET" | "POST", RouteHandler>>>(methods: M) {
  const allowed = Object.keys(methods).join(", ");
  const notAllowed: RouteHandler = (request) =>
    errorOnlyResponse(
      request,
      new AppError("method_not_allowed", `${request.method} is not supported here. Allowed: ${allowed}.`, {
        headers: { Allow: allowed },
      }),
    );
  return {
    ...(Object.fromEntries(METHODS.map((method) => [method, notAllowed])) as Record<
      (typeof METHODS)[number],
      RouteHandler
    >),
    ...methods,
  };
}
