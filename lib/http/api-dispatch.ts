import type http from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { createDeflate, createGzip, deflate, gzip } from "node:zlib";
import Negotiator from "negotiator";
import { apiPathError } from "./address";
import { newRequestId } from "./request-id";
import { jsonBodyOf } from "./conditional";
import { toAppError } from "./respond";
import { errorForNodeRequest } from "./request-guard";
import { errorOnlyResponse, notFoundRoute, type RouteHandler } from "./route";

/**
 * The API answered where its requests enter Node's HTTP server, before Next sees them.
 *
 * Through `next start` every request costs about a millisecond of CPU in Next's router and its
 * request and response adapters, whatever the handler does; a cached page of episodes costs our
 * own code a tenth of that. So requests under /api/v1 go straight to the same route handlers Next
 * would call (each route file's exports, listed in app/api/v1/endpoints.ts), with what Next does
 * around a route handler done here: its params decoded from the path, the `x-forwarded-*` headers
 * it fills in, HEAD answered by GET without the body, and gzip or deflate for a client that asks
 * (as Next's compression does: JSON of 1 KiB or more, never over `no-transform`). The portal,
 * Auth.js and every other path stay Next's.
 */

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";
/** An endpoint: its path as the route file's folder names it (`[id]` a parameter), and that file's exports. */
export type ApiEndpoint = { path: string; methods: Partial<Record<Method, RouteHandler>> };

type Matcher = { parts: ({ literal: string } | { param: string })[]; methods: ApiEndpoint["methods"] };

/** The dispatcher's prefix: the version of the API it serves. Other /api paths (Auth.js among them) stay Next's. */
const PREFIX = "/api/v1";
/** Below this, compressing costs more than it saves (Next's compression uses the same threshold). */
const COMPRESS_FROM_BYTES = 1024;
const COMPRESSIBLE = /^(application\/([\w.+-]*\+)?json|text\/)/i;
const ENCODINGS = ["gzip", "deflate", "identity"];
const compressWhole = { gzip: promisify(gzip), deflate: promisify(deflate) };
const compressStream = { gzip: createGzip, deflate: createDeflate };
const notFound = notFoundRoute();

/**
 * Answers the request if it is the API's and says so, or returns false for Next to answer it.
 * Never throws: a failure before the answer's head is sent becomes a 500 envelope, one after it
 * closes the connection.
 */
export function apiDispatcher(
  endpoints: ApiEndpoint[],
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const matchers: Matcher[] = endpoints.map(({ path, methods }) => ({
    parts: path
      .split("/")
      .slice(1)
      .map((part) => (part.startsWith("[") && part.endsWith("]") ? { param: part.slice(1, -1) } : { literal: part })),
    methods,
  }));
  return (req, res) => {
    const target = req.url ?? "/";
    if (!target.startsWith(PREFIX)) return false;
    // As Next reads the address: dot segments resolved (`/api/v1/../review` is the portal's), the query as sent.
    const url = URL.parse(target, "http://localhost");
    if (!url || !isApiPath(url.pathname)) return false;
    answer(matchers, url, req, res).catch((error: unknown) => {
      if (!res.headersSent) return sendError(req, res, error);
      res.destroy();
    });
    return true;
  };
}

const isApiPath = (pathname: string) =>
  pathname.startsWith(PREFIX) && (pathname.length === PREFIX.length || pathname[PREFIX.length] === "/");

async function answer(
  matchers: Matcher[],
  url: URL,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const request = webRequest(req, `http://localhost${url.pathname}${url.search}`);
  const method = req.method === "HEAD" ? "GET" : (req.method as Method);
  const pathError = apiPathError(url.pathname);
  const response = pathError
    ? await errorOnlyResponse(request, pathError)
    : await route(matchers, url.pathname, method, request);
  await send(req, res, response);
}

function route(matchers: Matcher[], pathname: string, method: Method, request: Request): Promise<Response> {
  // A trailing slash names the same endpoint (Next matches it so, and redirects nothing here).
  const segments = (pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname)
    .split("/")
    .slice(1);
  for (const { parts, methods } of matchers) {
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = parts.every((part, i) => {
      if ("literal" in part) return part.literal === segments[i];
      params[part.param] = decodeURIComponent(segments[i]!);
      return true;
    });
    if (!matches) continue;
    const handler = methods[method];
    if (handler) return handler(request, { params: Promise.resolve(params) });
  }
  return (notFound[method] ?? notFound.GET)(request, { params: Promise.resolve({}) });
}

/** The request as a route handler receives it from Next: its headers with the `x-forwarded-*` Next fills in, and its body. */
function webRequest(req: http.IncomingMessage, url: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else if (value !== undefined) headers.set(name, value);
  }
  const encrypted = "encrypted" in req.socket && req.socket.encrypted === true;
  const forwarded = {
    "x-forwarded-host": req.headers.host ?? "localhost",
    "x-forwarded-port": String(req.socket.localPort ?? (encrypted ? 443 : 80)),
    "x-forwarded-proto": encrypted ? "https" : "http",
    "x-forwarded-for": req.socket.remoteAddress,
  };
  for (const [name, value] of Object.entries(forwarded))
    if (value !== undefined && !headers.has(name)) headers.set(name, value);
  const method = req.method ?? "GET";
  // A body on GET or HEAD means nothing here; Node discards it once the answer is sent.
  if (method === "GET" || method === "HEAD") return new Request(url, { method, headers });
  return new Request(url, { method, headers, body: bodyOf(req), duplex: "half" } as RequestInit);
}

/**
 * The request's body as a web stream that touches the request only once a handler reads it. One
 * that is never read (an endpoint that refuses before parsing it) is then left to Node, which
 * discards it once the answer is sent and keeps the connection; a stream already attached to it
 * (`Readable.toWeb`) would leave it unread and the connection's next request unparseable.
 */
function bodyOf(req: http.IncomingMessage): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Buffer> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= req[Symbol.asyncIterator]();
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
      },
      async cancel() {
        await chunks?.return?.();
      },
    },
    // Nothing is pulled until a handler asks.
    { highWaterMark: 0 },
  );
}

/**
 * Writes the handler's answer: a body that arrives whole (a cached page, an error) with its length
 * in one write; a streamed one (a large manifest) as it comes, at the pace the client reads it.
 */
async function send(req: http.IncomingMessage, res: http.ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) res.setHeader(name, value);
  const compressible = COMPRESSIBLE.test(response.headers.get("content-type") ?? "");
  if (compressible) res.setHeader("Vary", varyWith(response.headers.get("vary"), "Accept-Encoding"));
  const body = response.body;
  if (!body || req.method === "HEAD" || response.status === 204 || response.status === 304) {
    await body?.cancel();
    res.end();
    return;
  }
  const encoding = compressible ? encodingFor(req, response) : null;
  const reader = body.getReader();
  const first = await reader.read();
  const second = first.done ? first : await reader.read();
  if (second.done) {
    let bytes: Uint8Array = first.value ?? new Uint8Array();
    if (encoding && bytes.byteLength >= COMPRESS_FROM_BYTES) {
      bytes = await compressedWhole(response, bytes, encoding);
      res.setHeader("Content-Encoding", encoding);
    }
    res.setHeader("Content-Length", bytes.byteLength);
    res.end(bytes);
    return;
  }
  res.removeHeader("Content-Length");
  const source = Readable.from(rest(reader, [first.value!, second.value]), { objectMode: false });
  if (!encoding) return pipeline(source, res);
  res.setHeader("Content-Encoding", encoding);
  return pipeline(source, compressStream[encoding](), res);
}

/**
 * A whole body compressed. A cached one (a response `conditionalResponse` made from the
 * instance's cache) is gzipped once, the first time a client takes gzip, and the copy is kept with it.
 */
function compressedWhole(response: Response, bytes: Uint8Array, encoding: "gzip" | "deflate"): Promise<Uint8Array> {
  const cached = encoding === "gzip" ? jsonBodyOf(response) : undefined;
  if (!cached) return compressWhole[encoding](bytes);
  cached.gzipped ??= compressWhole.gzip(cached.bytes).catch((error: unknown) => {
    cached.gzipped = undefined;
    throw error;
  });
  return cached.gzipped;
}

/** The chunks already read, then the rest; the stream is cancelled if the client goes away first. */
async function* rest(reader: ReadableStreamDefaultReader<Uint8Array>, read: Uint8Array[]): AsyncGenerator<Uint8Array> {
  let done = false;
  try {
    yield* read;
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      yield next.value;
    }
    done = true;
  } finally {
    if (!done) await reader.cancel().catch(() => {});
  }
}

/** gzip or deflate when the client accepts one and the answer allows it, as Next's compression decides; else null. */
function encodingFor(req: http.IncomingMessage, response: Response): "gzip" | "deflate" | null {
  const accept = req.headers["accept-encoding"];
  if (!accept || response.headers.has("content-encoding")) return null;
  if (/(?:^|,)\s*no-transform\s*(?:,|$)/i.test(response.headers.get("cache-control") ?? "")) return null;
  // The client's first choice; gzip over deflate whenever it takes both, as Next's compression does.
  const accepted = new Negotiator({ headers: { "accept-encoding": accept } }).encodings(ENCODINGS);
  if (accepted[0] === "deflate" && accepted.includes("gzip")) return "gzip";
  return accepted[0] === "gzip" || accepted[0] === "deflate" ? accepted[0] : null;
}

function varyWith(vary: string | null, field: string): string {
  if (!vary) return field;
  const fields = vary.split(",").map((f) => f.trim().toLowerCase());
  return fields.includes(field.toLowerCase()) || fields.includes("*") ? vary : `${vary}, ${field}`;
}

async function sendError(req: http.IncomingMessage, res: http.ServerResponse, error: unknown): Promise<void> {
  const response = await errorForNodeRequest(req, toAppError(error, newRequestId()));
  await send(req, res, response).catch(() => res.destroy());
}
