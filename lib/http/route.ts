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
import { parseQuery } from "./query";
import { readJsonBody } from "./body";
import { rateLimiters, type RateLimitState } from "../limits/rate-limit";
import { rateLimitHeaders } from "./rate-limit-headers";
import { errorResponse, JSON_HEADERS, toAppError } from "./respond";
import { conditionalResponse } from "./conditional";
import { CacheableRead } from "../cache/cacheable";
import { cachedBody, readCache, type ReadCache } from "../cache/read-cache";

type NextRouteContext = { params: Promise<Record<string, string | string[] | undefined>> };
export type RouteHandler = (request: Request, context: NextRouteContext) => Promise<Response>;

type Authenticated = { auth?: "api_key" };
type Anonymous = { auth: "none" };

type Spec<Q extends z.ZodObject, B extends z.ZodType> = (Authenticated | Anonymous) & { query?: Q; body?: B };

export type EndpointInput<Q extends z.ZodObject, B extends z.ZodType> = {
  params: Record<string, string>;
  query: z.infer<Q>;
  body: z.infer<B>;
  request: Request;
};

type ApiCtx<S> = S extends Anonymous ? Omit<Ctx, "principal"> : Ctx<ApiKeyPrincipal>;

const NO_PARAMETERS = z.object({});
const BASE_HEADERS = {
  "Cache-Control": "no-store",
  "Strict-Transport-Security": "max-age=63072000; includeSubDomains",
  "X-Content-Type-Options": "nosniff",
};

/**
 * One API endpoint: request id, transport rules, authentication, rate limit and input parsing
 * happen here, in that order, so the handler only calls a lib verb. Whatever it returns that is
 * not already a Response is sent as JSON: a CacheableRead (what a verb returns once it has
 * authorized the caller) from the instance's cache when it holds it, with an ETag; whatever it
 * throws becomes the error envelope.
 */
export function endpoint<
  S extends Spec<Q, B>,
  Q extends z.ZodObject = typeof NO_PARAMETERS,
  B extends z.ZodType = z.ZodUndefined,
>(
  spec: S & { query?: Q; body?: B },
  handler: (ctx: ApiCtx<S>, input: EndpointInput<Q, B>) => Promise<Response | object>,
): RouteHandler {
  return async (request, context) => {
    const requestId = newRequestId();
    const ip = clientIp(request);
    const limits = rateLimiters();
    let limit: RateLimitState | undefined;
    let response: Response;
    try {
      const cache = readCache();
      assertHttps(request, env().NODE_ENV === "production");
      assertAcceptsJson(request);
      let principal: ApiKeyPrincipal | undefined;
      if (spec.auth === "none") {
        limit = await limits.anonymousPerIp.consume(ip);
      } else {
        ({ principal, limit } = await authenticate(request, ip, cache));
      }
      if (limit.limited) throw rateLimited(limit, spec.auth === "none" ? "requests from this address" : undefined);
      const input = {
        params: await readParams(context),
        query: parseQuery(new URL(request.url), spec.query ?? NO_PARAMETERS),
        body: spec.body ? await readJsonBody(request, spec.body) : undefined,
        request,
      } as EndpointInput<Q, B>;
      const ctx = { db: getDb(), principal, requestId, cache } as ApiCtx<S>;
      const result = await handler(ctx, input);
      if (result instanceof Response) response = result;
      else if (result instanceof CacheableRead)
        response = conditionalResponse(request, await cachedBody(cache, result), result.reuse);
      else response = new Response(JSON.stringify(result), { headers: JSON_HEADERS });
    } catch (error) {
      response = errorResponse(toAppError(error, requestId), requestId);
    }
    limit ??= await limits.authFailuresPerIp.peek(ip).catch(() => undefined);
    return withCommonHeaders(response, requestId, limit);
  };
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

/** A response that is only an error (no endpoint ran): the envelope with the usual headers. */
export async function errorOnlyResponse(request: Request, error: AppError): Promise<Response> {
  const requestId = newRequestId();
  const limit = await rateLimiters()
    .authFailuresPerIp.peek(clientIp(request))
    .catch(() => undefined);
  return withCommonHeaders(errorResponse(error, requestId), requestId, limit);
}

/**
 * The route file's exports: the given methods, and a JSON 405 naming the allowed ones for every
 * other method Next dispatches (it would otherwise answer with an empty body, and OPTIONS with a
 * 204 listing every exported method). HEAD is Next's: the GET handler's answer without its body.
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
    GET: notAllowed,
    POST: notAllowed,
    PUT: notAllowed,
    PATCH: notAllowed,
    DELETE: notAllowed,
    OPTIONS: notAllowed,
    ...methods,
  };
}

/** For paths that match no endpoint: the JSON 404 envelope, whatever the method. */
export function notFoundRoute() {
  const handler: RouteHandler = (request) =>
    errorOnlyResponse(
      request,
      new AppError("not_found", "No such endpoint. The API lives under /api/v1; see /api/v1/openapi.json."),
    );
  return { GET: handler, POST: handler, PUT: handler, PATCH: handler, DELETE: handler, OPTIONS: handler };
}
