import { AppError } from "../errors";
import { CONTROL_CHARACTERS } from "../characters";
import { queryValues } from "./query";
import { pageSecurityHeaders } from "./security-headers";

/**
 * Checks of the request's address made in the proxy, before Next decodes it: a path that is not
 * valid percent-encoded UTF-8 would make Next answer a plain-text 500 while decoding route
 * parameters, before any page or handler of ours runs.
 */

/** A first path segment `api` in any case: such a path is the API's, and is answered with JSON. */
export const API_PATH = /^\/api(\/|$)/i;

/** What to answer instead of routing an API path, or null to route it. */
export function apiPathError(pathname: string): AppError | null {
  if (!pathname.startsWith("/api")) {
    return new AppError(
      "not_found",
      "No such endpoint. Paths are case-sensitive: the API lives under /api/v1; see /api/v1/openapi.json.",
    );
  }
  if (!decodes(pathname))
    return new AppError("invalid_parameter", "The request path is not valid percent-encoded UTF-8.");
  return null;
}

/** What to answer instead of routing a path of the Hub protocol (under /hub/), or null to route it. */
export function hubPathError(pathname: string): AppError | null {
  return decodes(pathname)
    ? null
    : new AppError("invalid_parameter", "The request path is not valid percent-encoded UTF-8.");
}

/**
 * Why a portal address cannot be one the portal made, or null. The query follows the rules of
 * every query of the service (lib/http/query.ts): no repeated parameter, no control characters.
 */
export function portalAddressProblem(url: URL): string | null {
  if (!decodes(url.pathname)) return "The path is not valid percent-encoded UTF-8.";
  if (CONTROL_CHARACTERS.test(decodeURIComponent(url.pathname))) return "The path contains control characters.";
  try {
    queryValues(url.searchParams);
  } catch (error) {
    if (error instanceof AppError) return error.message;
    throw error;
  }
  return null;
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/**
 * The portal's 400 page. Next lets a page answer only 401, 403 and 404, so an address refused
 * before routing gets this small page from the proxy, with the real status.
 */
export function badRequestPage(problem: string): Response {
  const html = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Bad request · Dataset Access Service</title></head>
<body><main><p>400</p><h1>This address is not valid</h1><p>${escapeHtml(problem)}</p>
<p><a href="/">Go to your start page</a></p></main></body></html>
`;
  return new Response(html, {
    status: 400,
    // A page with no script and no style of its own: the strictest policy fits it.
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      ...pageSecurityHeaders("default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    },
  });
}
