import Negotiator from "negotiator";
import { clientIp, clientProto } from "../client-address";
import { AppError } from "../errors";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

function isLoopback(request: Request): boolean {
  const ip = clientIp(request);
  const host = (request.headers.get("host") ?? "").replace(/:\d+$/, "").toLowerCase();
  return (ip === "127.0.0.1" || ip === "::1") && LOOPBACK_HOSTS.has(host);
}

/**
 * In production a plain-HTTP request is refused, never redirected: by the time a redirect could be
 * sent the key has already crossed the network in clear. Local use over loopback stays possible.
 */
export function assertHttps(request: Request, production: boolean): void {
  if (!production) return;
  if (clientProto(request) === "http" && !isLoopback(request)) {
    throw new AppError(
      "https_required",
      "This API is served over HTTPS only. Repeat the request with https:// and consider rotating the key you sent.",
    );
  }
}

/** JSON is the only representation; an Accept header that rules it out gets 406. */
export function assertAcceptsJson(request: Request): void {
  const accept = request.headers.get("accept");
  if (!accept || !accept.trim()) return;
  // What nearly every client sends, without a parameter that could rule JSON out (q=0).
  if (accept === "application/json" || accept === "*/*") return;
  const negotiator = new Negotiator({ headers: { accept } });
  if (!negotiator.mediaType(["application/json"])) {
    throw new AppError(
      "not_acceptable",
      "This API responds with application/json only; send `Accept: application/json`.",
    );
  }
}
