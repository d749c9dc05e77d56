import { hasUnsafeCharacter } from "./characters";
/**
 * Where the portal may send a browser after sign-in (or any other `callbackUrl` a request carries).
 *
 * A target is accepted only as a path on `origin`, decided by the URL parser and compared by origin,
 * never by looking at the string: browsers drop tabs and newlines inside URLs and read `\` as `/`,
 * so `/\t/evil.example` or `/\evil.example` pass any prefix test and still leave the site. Such
 * characters are refused outright, and what comes back is the parser's own serialisation of the
 * path, so the string checked is the string sent.
 */

// Reserved names that never resolve (RFC 2606). Without an origin, a target must name the same
// path on both, i.e. stay on whatever origin it is resolved against: `https:x` is a path on an
// https site but another host on a plain-HTTP one, so it is no path.
const ANY_ORIGINS = ["http://same-origin.invalid", "https://same-origin.invalid"] as const;

// Longer than any page of the portal needs, shorter than what proxies and browsers still accept.
const MAX_TARGET_LENGTH = 2048;

/**
 * The path (with query and fragment) that `target` names on `origin`, or null when it names
 * anything else: another origin, a scheme such as `javascript:`, a protocol-relative `//host`, or
 * a string with control characters or backslashes. Without `origin`, only paths are accepted.
 */
export function sameOriginPath(target: unknown, origin?: string): string | null {
  if (origin !== undefined) return pathOn(target, origin);
  const onHttp = pathOn(target, ANY_ORIGINS[0]);
  return onHttp !== null && onHttp === pathOn(target, ANY_ORIGINS[1]) ? onHttp : null;
}

function pathOn(target: unknown, origin: string): string | null {
  if (typeof target !== "string" || target.length === 0 || target.length > MAX_TARGET_LENGTH) return null;
  // Controls the parser strips or re-reads, and the backslash, which it reads as `/`.
  if (hasUnsafeCharacter(target) || target.includes("\\")) return null;
  let base: URL;
  let url: URL;
  try {
    base = new URL(origin);
    url = new URL(target, base);
  } catch {
    return null;
  }
  // A blob: URL shares its creator's origin, so the scheme is compared too.
  if (base.origin === "null" || url.origin !== base.origin || url.protocol !== base.protocol) return null;
  // `/.//evil.example` parses to the path `//evil.example`, which a browser reads as another host.
  if (!url.pathname.startsWith("/") || url.pathname.startsWith("//")) return null;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** The sign-in page, coming back to `returnTo` afterwards when that is a path on this site. */
export function signInPath(returnTo: string): string {
  const path = sameOriginPath(returnTo);
  return path && path !== "/" ? `/login?${new URLSearchParams({ callbackUrl: path })}` : "/login";
}
