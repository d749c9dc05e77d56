import http from "node:http";
import { openApiDocument } from "../api/openapi";
import { AppError } from "../errors";
import { env } from "../env";
import { forwardedHop } from "../client-address";
import { API_PATH } from "./address";
import { errorOnlyResponse } from "./route";
import { isHubPath } from "./hub";
import { hubError } from "../hub/errors";

/**
 * Requests Next cannot answer well, answered before Next sees them. Next builds a web `Request`
 * for the proxy and for every handler, which throws for TRACE and TRACK (a plain-text 500 before
 * any code of ours runs); it answers other methods it does not dispatch with an empty 400, and an
 * API path with an empty segment (`/api//v1/...`) with a bodiless 308, also before the proxy runs.
 * So these are recognised where the request enters Node's HTTP server: a string test per request,
 * not the proxy's cost. (The same hook OpenTelemetry's HTTP instrumentation uses.) So are the
 * server actions Next would refuse with a 500 (`actionRefusal`).
 */

/** The methods Next dispatches to pages and route handlers. */
const DISPATCHED = new Set(["GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "PATCH"]);
const EMPTY_SEGMENT = /\/\/|\\/;
/** A `.` or `..` segment, written or percent-encoded: URL parsing resolves it before any handler sees the path. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$)/i;
const GUARDED = Symbol.for("das.requestGuard");

type Refusal =
  | { api: true; error: AppError }
  | { api: false; status: number; text: string; headers: Record<string, string> };

/** What to answer instead of passing the request on to Next, or null to pass it on. */
export function refusalOf(method: string, target: string): Refusal | null {
  const end = target.indexOf("?");
  const path = end < 0 ? target : target.slice(0, end);
  const dispatched = DISPATCHED.has(method);
  // The common case costs a set lookup and two scans of the path.
  if (dispatched && !EMPTY_SEGMENT.test(path) && !DOT_SEGMENT.test(path)) return null;
  // The Hub protocol's paths name files: one with a dot segment is refused, never resolved into another.
  if (dispatched && isHubPath(path) && DOT_SEGMENT.test(path))
    return {
      api: true,
      error: hubError(
        "invalid_parameter",
        "EntryNotFound",
        "Not a path of a repository: it has a '.' or '..' segment.",
      ),
    };
  if (dispatched && !EMPTY_SEGMENT.test(path)) return null;
  const api = API_PATH.test(path.replace(/[\\/]+/g, "/"));
  if (!dispatched) {
    if (!api)
      return { api, status: 405, text: `${method} is not supported here.\n`, headers: { Allow: "GET, HEAD, POST" } };
    const allowed = allowedMethods(path);
    if (!allowed) return { api, error: noSuchEndpoint() };
    return {
      api,
      error: new AppError("method_not_allowed", `${method} is not supported here. Allowed: ${allowed}.`, {
        headers: { Allow: allowed },
      }),
    };
  }
  if (api && EMPTY_SEGMENT.test(path))
    return { api, error: noSuchEndpoint("The path has an empty segment ('//' or a backslash). ") };
  return null;
}

/**
 * Next's own limit on a server action's body (`experimental.serverActions.bodySizeLimit`, set to
 * this in next.config.ts): a body the guard lets through is one Next accepts.
 */
export const ACTION_BODY_MAX_BYTES = 1024 * 1024;

/**
 * A POST to a portal path is a server action (the portal's route handlers answer GET only; Next
 * takes any POST to a page for one). Next refuses one from another origin (its CSRF check) and
 * one whose body passes its limit, but with a 500 carrying a digest, once it has begun. Both are
 * answered here instead, from the headers alone, before a byte of the body is read: 403 for
 * another origin (judged as Next judges it: the Origin's host against X-Forwarded-Host, else
 * Host; a request without Origin, which no browser sends with a POST, is Next's to judge), 413 for
 * a declared length over the limit, and 411 for a body without a length (chunked), which no
 * browser sends to a server action and whose size nothing could bound before reading it.
 * The API's paths and the Hub protocol's (whose paths-info takes a form) are no portal's: their
 * router counts a body as it arrives, chunked or not, and refuses it in the envelope.
 */
export function actionRefusal(method: string, target: string, headers: http.IncomingHttpHeaders): Refusal | null {
  const path = target.split("?")[0]!;
  if (method !== "POST" || API_PATH.test(path) || isHubPath(path)) return null;
  const plain = (status: number, text: string): Refusal => ({ api: false, status, text: `${text}\n`, headers: {} });
  if (headers.origin !== undefined && !fromOwnOrigin(headers.origin, headers))
    return plain(403, "This form was sent from another site; the portal takes forms from its own pages only.");
  const length = headers["content-length"];
  if (length === undefined)
    return headers["transfer-encoding"] === undefined
      ? null
      : plain(411, "A form's body must say its length (Content-Length).");
  if (Number(length) > ACTION_BODY_MAX_BYTES)
    return plain(413, `A form's body is at most ${ACTION_BODY_MAX_BYTES} bytes; this one is ${length}.`);
  return null;
}

function fromOwnOrigin(origin: string, headers: http.IncomingHttpHeaders): boolean {
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const forwarded = headers["x-forwarded-host"];
  const forwardedHost = (Array.isArray(forwarded) ? forwarded[0] : forwarded?.split(",")[0])?.trim();
  return host !== "" && (host === forwardedHost || host === headers.host);
}

const noSuchEndpoint = (why = "") =>
  new AppError("not_found", `No such endpoint. ${why}The API lives under /api/v1; see /api/v1/openapi.json.`);

let templates: { pattern: RegExp; allowed: string }[] | undefined;

/** The methods of the API operation at `path` (from the OpenAPI document, the API's one description), or null. */
function allowedMethods(path: string): string | null {
  templates ??= Object.entries(openApiDocument().paths ?? {}).map(([template, item]) => ({
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
    allowed: Object.keys(item ?? {})
      .map((m) => m.toUpperCase())
      .join(", "),
  }));
  return templates.find((t) => t.pattern.test(path))?.allowed ?? null;
}

async function send(refusal: Refusal, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  // Drain what the client sends, so that a body does not stall the connection.
  req.resume();
  if (!refusal.api) {
    res.writeHead(refusal.status, {
      ...refusal.headers,
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "no-store",
    });
    res.end(refusal.text);
    return;
  }
  const response = await errorForNodeRequest(req, refusal.error);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(req.method === "HEAD" ? undefined : await response.text());
}

/**
 * The error envelope for a request answered before Next, with the client address as Next would
 * report it (the forwarded chain, or the socket) for the rate-limit headers. Built from the Node
 * request alone, so that it holds for any request: a web `Request` of its own method and headers
 * may not be constructible (TRACE), and a failed one is what may have brought us here.
 */
function errorForNodeRequest(req: http.IncomingMessage, error: AppError): Promise<Response> {
  const forwardedFor = req.headers["x-forwarded-for"] ?? req.socket.remoteAddress ?? "";
  return errorOnlyResponse(
    new Request("http://localhost/", { headers: { "x-forwarded-for": String(forwardedFor) } }),
    error,
  );
}

/**
 * X-Forwarded-For and X-Forwarded-Proto rewritten to the one address and scheme the configured
 * proxies vouch for (TRUSTED_PROXIES; lib/client-address.ts), before Next or any handler reads them:
 * Next fills them in only when absent, so a client without a proxy in front could otherwise name
 * any address (and evade the per-address limits) or claim https.
 */
function trustForwardedHeaders(req: http.IncomingMessage, trusted: number): void {
  const { client, proto } = forwardedHop({
    forwardedFor: req.headers["x-forwarded-for"],
    forwardedProto: req.headers["x-forwarded-proto"],
    peer: req.socket.remoteAddress,
    encrypted: "encrypted" in req.socket && req.socket.encrypted === true,
    trusted,
  });
  if (client) req.headers["x-forwarded-for"] = client;
  else delete req.headers["x-forwarded-for"];
  req.headers["x-forwarded-proto"] = proto;
}

const hasBody = (req: http.IncomingMessage) =>
  req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;

/** What is still read of a request's body after an answer that did not wait for it, and for how long. */
const LINGER_BYTES = 4 * 1024 * 1024;
const LINGER_MS = 2000;

/**
 * An answer sent before its request's body was read whole (a 413, a refusal of the guard, a 401
 * before the body): what the client still sends is read and thrown away for a moment, then the
 * connection is closed. Closing at once, with bytes unread, makes the kernel answer the client
 * with a reset, which can destroy the answer before the client reads it (a "lingering close", as
 * nginx does). Past LINGER_BYTES the server says it is done (a FIN after the answer) and goes on
 * throwing away what still arrives until LINGER_MS: a reset then, on Node 24, reached a client
 * still busy sending before it had read the 413. A body that ends meanwhile leaves the connection
 * open for the next request.
 */
function lingerThenClose(req: http.IncomingMessage): void {
  let read = 0;
  const close = () => {
    clearTimeout(timer);
    req.socket.destroy();
  };
  const timer = setTimeout(close, LINGER_MS);
  timer.unref();
  const drain = () => {
    for (let chunk: Buffer | null; (chunk = req.read() as Buffer | null) !== null; ) {
      read += chunk.length;
      if (read > LINGER_BYTES && req.socket.writable) req.socket.end();
    }
  };
  // The client, having read the answer and the end, closes its side: nothing is left to wait for.
  req.socket.once("end", close);
  req.once("end", () => {
    clearTimeout(timer);
    req.socket.off("end", close);
  });
  req.on("readable", drain);
  drain();
}

/** Installs the guard on Node's HTTP server, once per process. */
export function guardRequests(): void {
  const proto = http.Server.prototype as http.Server & { [GUARDED]?: true };
  if (proto[GUARDED]) return;
  proto[GUARDED] = true;
  const trusted = env().TRUSTED_PROXIES;
  const emit = proto.emit;
  proto.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === "request") {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
      trustForwardedHeaders(req, trusted);
      if (hasBody(req)) res.once("finish", () => req.complete || lingerThenClose(req));
      const refusal =
        refusalOf(req.method ?? "", req.url ?? "/") ?? actionRefusal(req.method ?? "", req.url ?? "/", req.headers);
      if (refusal) {
        send(refusal, req, res).catch(() => res.destroy());
        return true;
      }
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof emit;
}
