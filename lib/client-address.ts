import { isIP } from "node:net";

/**
 * The client's address: the right-most X-Forwarded-For entry, i.e. the one written by the nearest
 * proxy (or by Next itself from the socket when no proxy is in front). Entries further left are
 * whatever the client claimed.
 */
export function clientIp(request: Request): string {
  const forwarded = request.headers.get("x-forwarded-for");
  const last = forwarded?.split(",").at(-1)?.trim();
  return last && isIP(last.replace(/^::ffff:/, "")) ? last.replace(/^::ffff:/, "") : "unknown";
}
