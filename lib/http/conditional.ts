import type { JsonBody } from "../cache/cacheable";
import { JSON_HEADERS } from "./respond";

/**
 * Every catalog answer: `private`, an answer is its key's, never a shared cache's; `no-cache`, a
 * client may keep it but asks each time, and the answer is then usually a 304 without a body. A
 * released version's pages change too since episodes can be withdrawn (their files, counts and
 * manifests with them), and lists change with licences and imports: no answer may be reused
 * without asking (decision 0101, which replaces 0028's hour for pages of released versions).
 */
export const CACHE_CONTROL = "private, no-cache";

/**
 * A JSON answer with its validator: 304 without a body when the request's If-None-Match already
 * names it, else 200 with it. Only ever called for what the caller was authorized to read (RFC 9110
 * evaluates preconditions after authentication and authorization; a 401, 403 or 404 ignores them).
 */
export function conditionalResponse(request: Request, body: JsonBody): Response {
  // Vary: a client's own cache keeps one answer per key, since lists differ between keys.
  const headers = { ETag: body.etag, "Cache-Control": CACHE_CONTROL, Vary: "Authorization" };
  if (ifNoneMatchFails(request.headers.get("if-none-match"), body.etag))
    return new Response(null, { status: 304, headers });
  return new Response(body.bytes, { headers: { ...JSON_HEADERS, ...headers } });
}

/**
 * RFC 9110 section 13.1.2: `If-None-Match: *` fails whenever there is a representation, and a list of
 * entity tags fails when one of them matches the current one by weak comparison (a `W/` prefix on
 * either side is ignored). A field that is not a valid list is ignored, as if absent.
 */
export function ifNoneMatchFails(field: string | null, etag: string): boolean {
  if (field === null) return false;
  if (field.trim() === "*") return true;
  const current = etag.replace(/^W\//, "");
  return entityTags(field)?.includes(current) ?? false;
}

/** The opaque tags of an `#entity-tag` list (empty elements allowed, as RFC 9110 section 5.6.1 asks), or null if it is not one. */
function entityTags(field: string): string[] | null {
  // An element: optional whitespace, an optional W/ and a quoted tag, optional whitespace, then a
  // comma or the end. etagc admits commas, so the list cannot simply be split on them.
  const element = /[ \t]*(?:(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")[ \t]*)?(?:,|$)/y;
  const tags: string[] = [];
  while (element.lastIndex < field.length) {
    const match = element.exec(field);
    if (!match || match[0] === "") return null;
    if (match[1]) tags.push(match[1]);
  }
  return tags;
}
