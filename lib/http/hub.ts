import type { z } from "zod";
import { CONTROL_CHARACTERS } from "../characters";
import { AppError, type ErrorCode } from "../errors";
import { headerText, type HubErrorCode } from "../hub/errors";
import { clientProto } from "../client-address";
import { MAX_BODY_BYTES, readBodyText } from "./body";

/**
 * The Hugging Face Hub protocol's rules of delivery, for the operations under /hub (everything
 * else about a request, keys, rate limits, the envelope, is the API's own):
 *
 * - every refusal carries `X-Error-Code` and `X-Error-Message`, which the Hub's clients turn into
 *   their own exceptions; a verb that names the code (RevisionNotFound, EntryNotFound) keeps it,
 *   otherwise a 404 is RepoNotFound (the API's rule: a dataset the key may not read does not
 *   exist) and a version outside the licence GatedRepo;
 * - the query: parameters an operation does not read are left out (the clients send their own,
 *   which change with their releases), a repeated one is an array where the schema takes one;
 * - a form body (`paths-info`), repeated names as arrays;
 * - the next page of a listing as `Link: <url>; rel="next"` on the request's own URL.
 */

export const HUB_PREFIX = "/hub/";
export const isHubPath = (pathname: string) => pathname.startsWith(HUB_PREFIX);

const DEFAULT_HUB_CODE: Partial<Record<ErrorCode, HubErrorCode>> = {
  not_found: "RepoNotFound",
  version_not_licensed: "GatedRepo",
};

/** The error as the Hub's clients read it: its code and message as headers, beside the envelope. */
export function asHubError(error: AppError): AppError {
  const code = error.headers["X-Error-Code"] ?? DEFAULT_HUB_CODE[error.code];
  const message =
    error.code === "unauthorized"
      ? // The clients show a 401 with this message as what it is, not as a repository that is missing.
        "Invalid credentials in Authorization header"
      : headerText(error.message);
  return new AppError(error.code, error.message, {
    headers: { ...error.headers, ...(code ? { "X-Error-Code": code } : {}), "X-Error-Message": message },
    cause: error.cause,
  });
}

/** A Hub operation's query: the parameters it reads, arrays where its schema takes one; the others are left out. */
export function parseHubQuery<S extends z.ZodObject>(url: URL, schema: S): z.infer<S> {
  return validated(valuesOf([...url.searchParams], schema, "Query parameter"), schema, "Query parameter");
}

/** A form-encoded body (`application/x-www-form-urlencoded`) against a schema, as the query. */
export async function readFormBody<S extends z.ZodType>(request: Request, schema: S): Promise<z.infer<S>> {
  // Counted as it arrives, as every body is (a chunked form is refused at the limit, not read
  // whole), and before its type, so that any body over the limit is 413 as on every endpoint.
  const text = await readBodyText(request, MAX_BODY_BYTES);
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type))
    throw new AppError(
      "invalid_body",
      "Send the body as a form, with `Content-Type: application/x-www-form-urlencoded`.",
    );
  const form = schema as unknown as z.ZodObject;
  return validated(valuesOf([...new URLSearchParams(text)], form, "Form field"), schema, "Form field");
}

type Part = "Query parameter" | "Form field";

function valuesOf(entries: [string, string][], schema: z.ZodObject, what: Part): Record<string, string | string[]> {
  const shape = schema.shape as Record<string, z.ZodType>;
  const values: Record<string, string | string[]> = {};
  for (const [name, value] of entries) {
    if (!Object.hasOwn(shape, name)) continue;
    // Refused before the repository is looked up, as every query of the API is.
    if (CONTROL_CHARACTERS.test(value))
      throw new AppError(codeFor(what), `${what} '${name}': must not contain control characters`);
    if (takesArray(shape[name]!)) values[name] = [...((values[name] as string[] | undefined) ?? []), value];
    else values[name] ??= value;
  }
  return values;
}

function takesArray(field: z.ZodType): boolean {
  const def = (field as { def?: { type?: string; innerType?: z.ZodType } }).def;
  if (def?.type === "array") return true;
  return def?.innerType ? takesArray(def.innerType) : false;
}

const codeFor = (what: Part) => (what === "Form field" ? "invalid_body" : "invalid_parameter");

function validated<S extends z.ZodType>(raw: unknown, schema: S, what: Part): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError(codeFor(what), `${what} '${String(issue.path[0])}': ${issue.message}`);
  }
  return parsed.data;
}

/** The request's own URL with another query, absolute, as the clients follow a `Link` header. */
export function nextPageLink(request: Request, query: Record<string, string>): string {
  const url = new URL(request.url);
  const host = request.headers.get("host");
  if (host) url.host = host;
  const proto = clientProto(request);
  if (proto === "http" || proto === "https") url.protocol = `${proto}:`;
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return `<${url.toString()}>; rel="next"`;
}
