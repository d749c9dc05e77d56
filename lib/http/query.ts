import { z } from "zod";
import { AppError } from "../errors";
import { UNSAFE_CHARACTERS_DESCRIPTION, WITHOUT_UNSAFE_CHARACTERS } from "../catalog/identifiers";

/**
 * Parses a query string against a zod object. Parameters the endpoint does not know are refused,
 * so a typo such as `outcomes=failure` never silently widens the result.
 */
export function parseQuery<S extends z.ZodObject>(url: URL, schema: S): z.infer<S> {
  const allowed = Object.keys(schema.shape);
  const raw: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    if (!allowed.includes(name)) {
      const known = allowed.length ? `Known parameters: ${allowed.join(", ")}.` : "This endpoint takes no parameters.";
      throw new AppError("invalid_parameter", `Unknown query parameter '${name}'. ${known}`);
    }
    if (name in raw) throw new AppError("invalid_parameter", `Query parameter '${name}' was given more than once.`);
    raw[name] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError("invalid_parameter", `Query parameter '${String(issue.path[0])}': ${issue.message}`);
  }
  return parsed.data;
}

/** A non-empty filter value, compared exactly. */
export const filterValue = z
  .string()
  .min(1, "must not be empty")
  .max(200, "must be at most 200 characters")
  .regex(WITHOUT_UNSAFE_CHARACTERS, `must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`);

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

export const limitParam = z
  .string()
  .regex(/^[0-9]{1,4}$/, `must be an integer from 1 to ${MAX_LIMIT}`)
  .transform(Number)
  .pipe(z.number().int().min(1, `must be an integer from 1 to ${MAX_LIMIT}`).max(MAX_LIMIT, `must be an integer from 1 to ${MAX_LIMIT}`))
  .default(DEFAULT_LIMIT);

export const cursorParam = z.string().min(1, "must not be empty").max(1000, "is too long").optional();
