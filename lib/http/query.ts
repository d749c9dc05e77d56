import { z } from "zod";
import { AppError } from "../errors";
import { CONTROL_CHARACTERS } from "../characters";
import { Lru } from "../cache/lru";

/** A query as Next hands it to a page: a repeated name arrives as an array. */
export type SearchParams = Record<string, string | string[] | undefined>;
/** A query as a page receives it, or as a URL carries it. */
export type RawQuery = URLSearchParams | SearchParams;

function* entriesOf(query: RawQuery): Iterable<[string, string]> {
  if (query instanceof URLSearchParams) {
    yield* query;
    return;
  }
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) yield [name, one];
  }
}

/**
 * The rules every query of the service follows, for the API and the portal alike: a parameter is
 * given at most once (rather than silently using one of the values) and no value contains control
 * characters. With `known`, parameters outside it are refused, so a typo such as
 * `outcomes=failure` never silently widens a result; without it they are left out.
 */
export function queryValues(query: RawQuery, known?: readonly string[]): Record<string, string> {
  const raw: Record<string, string> = {};
  for (const [name, value] of entriesOf(query)) {
    if (known && !known.includes(name)) {
      const list = known.length ? `Known parameters: ${known.join(", ")}.` : "This endpoint takes no parameters.";
      throw new AppError("invalid_parameter", `Unknown query parameter '${name}'. ${list}`);
    }
    if (Object.hasOwn(raw, name))
      throw new AppError("invalid_parameter", `Query parameter '${name}' was given more than once.`);
    if (CONTROL_CHARACTERS.test(value))
      throw new AppError("invalid_parameter", `Query parameter '${name}': must not contain control characters`);
    raw[name] = value;
  }
  return raw;
}

function validate<S extends z.ZodObject>(raw: Record<string, string>, schema: S): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError("invalid_parameter", `Query parameter '${String(issue.path[0])}': ${issue.message}`);
  }
  return parsed.data;
}

/**
 * Queries parsed by each schema, by query string. A client walks the same pages with the same
 * queries again and again, and on a page the instance's cache holds, parsing the query (the
 * URLSearchParams, the rules above, zod) was a tenth of what the handler adds to Next's own cost.
 * Frozen, so that no handler can change what the next request with that query receives; only
 * queries that parse are kept, and only short ones (a long one is parsed each time).
 */
const parsedQueries = new WeakMap<z.ZodObject, Lru<string, object>>();
const KEPT_QUERIES = 1000;
const KEPT_QUERY_LENGTH = 512;

/** An API endpoint's query string against a zod object; unknown parameters are refused. */
export function parseQuery<S extends z.ZodObject>(url: URL, schema: S): z.infer<S> {
  const search = url.search;
  let parsed = parsedQueries.get(schema);
  if (!parsed) parsedQueries.set(schema, (parsed = new Lru(KEPT_QUERIES)));
  const kept = parsed.get(search);
  if (kept) return kept as z.infer<S>;
  const query = Object.freeze(validate(queryValues(url.searchParams, Object.keys(schema.shape)), schema));
  if (search.length <= KEPT_QUERY_LENGTH) parsed.set(search, query);
  return query as z.infer<S>;
}

/**
 * A portal page's or portal route handler's query against a zod object. Parameters the page does
 * not read are left out (a bookmarked link may carry more than the page knows today); repeated
 * ones and control characters are refused as on the API.
 */
export function parseSearchParams<S extends z.ZodObject>(query: RawQuery, schema: S): z.infer<S> {
  const known = Object.keys(schema.shape);
  const raw = queryValues(query);
  return validate(Object.fromEntries(Object.entries(raw).filter(([name]) => known.includes(name))), schema);
}

/**
 * The request headers an operation reads, against a zod object keyed by their names as documented
 * (`Idempotency-Key`); an absent header is undefined. A malformed one is 400 `invalid_parameter`
 * with the schema's message.
 */
export function parseHeaders<S extends z.ZodObject>(headers: Headers, schema: S): z.infer<S> {
  const raw = Object.fromEntries(Object.keys(schema.shape).map((name) => [name, headers.get(name) ?? undefined]));
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError("invalid_parameter", `Header '${String(issue.path[0])}': ${issue.message}`);
  }
  return parsed.data;
}
