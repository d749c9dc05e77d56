import { findNodeAtLocation, parseTree, printParseErrorCode, type ParseError } from "jsonc-parser";
import type { z } from "zod";
import { showUnsafe } from "./characters";

export type Problem = { file: string; line: number; message: string };

// JSON can spell a NUL character or half a surrogate pair (\u0000, \ud800), but PostgreSQL can store
// neither in text or jsonb; sent to COPY they fail the copy, and postgres.js never settles a copy
// that fails after its last row (porsager/postgres#1173), so the import would hang.
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The path of the first string or object key in `value` that PostgreSQL cannot store. */
function unstorableText(value: unknown, at: (string | number)[] = []): (string | number)[] | undefined {
  if (typeof value === "string") return UNSTORABLE.test(value) ? at : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorableText(item, [...at, index]);
      if (found) return found;
    }
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const found = UNSTORABLE.test(key) ? [...at, key] : unstorableText(item, [...at, key]);
      if (found) return found;
    }
  }
  return undefined;
}

const unstorableMessage = (at: (string | number)[]) =>
  `${at.map((part) => JSON.stringify(String(part)).slice(1, -1)).join(".")}: text must not contain a NUL character (\\u0000) or an unpaired surrogate (\\ud800-\\udfff)`;

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Parses a whole JSON file (dataset.json, version.json) against a schema, reporting each problem
 * at the line of the value it concerns.
 */
export function parseJsonDocument<S extends z.ZodType>(
  file: string,
  text: string,
  schema: S,
): { value?: z.infer<S>; problems: Problem[] } {
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: false, disallowComments: true });
  if (errors.length || !tree) {
    const first = errors[0];
    return {
      problems: [
        {
          file,
          line: first ? lineAt(text, first.offset) : 1,
          message: `invalid JSON (${first ? printParseErrorCode(first.error) : "empty file"})`,
        },
      ],
    };
  }
  const json: unknown = JSON.parse(text);
  const unstorable = text.includes("\\u") ? unstorableText(json) : undefined;
  if (unstorable) {
    return {
      problems: [
        {
          file,
          line: lineAt(text, findNodeAtLocation(tree, unstorable)?.offset ?? 0),
          message: unstorableMessage(unstorable),
        },
      ],
    };
  }
  const parsed = schema.safeParse(json, { reportInput: true });
  if (parsed.success) return { value: parsed.data, problems: [] };
  return {
    problems: parsed.error.issues.map((issue) => {
      // The deepest node that exists along the issue's path: a missing field is reported at its parent.
      let node: ReturnType<typeof findNodeAtLocation>;
      for (let depth = issue.path.length; depth >= 0 && !node; depth--) {
        node = findNodeAtLocation(tree, issue.path.slice(0, depth) as (string | number)[]);
      }
      // A path holds the document's own keys: printed with any unsafe character escaped.
      const where = issue.path.length ? `${showUnsafe(issue.path.join("."))}: ` : "";
      const message = describeIssue(issue);
      return {
        file,
        line: lineAt(text, node?.offset ?? 0),
        message: message.startsWith("missing field") ? message : `${where}${message}`,
      };
    }),
  };
}

/** One line of a JSONL file: its record, or the problems with it. */
export function parseJsonLine<S extends z.ZodType>(
  file: string,
  lineNumber: number,
  text: string,
  schema: S,
): { value?: z.infer<S>; problems: Problem[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problems: [{ file, line: lineNumber, message: `invalid JSON (${(error as Error).message})` }] };
  }
  // Only an escape can put such a character into parsed JSON, so lines without one skip the walk.
  return checkRecord(file, lineNumber, json, schema, text.includes("\\u"));
}

/**
 * A record against its schema, the rules of a JSON line without the JSON: for sources that read
 * records from other formats (a LeRobot dataset's parquet), which go through the same checks.
 */
export function checkRecord<S extends z.ZodType>(
  file: string,
  lineNumber: number,
  value: unknown,
  schema: S,
  mayHoldUnstorable = true,
): { value?: z.infer<S>; problems: Problem[] } {
  const unstorable = mayHoldUnstorable ? unstorableText(value) : undefined;
  if (unstorable) return { problems: [{ file, line: lineNumber, message: unstorableMessage(unstorable) }] };
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return { value: parsed.data, problems: [] };
  return { problems: parsed.error.issues.map((issue) => ({ file, line: lineNumber, message: describeIssue(issue) })) };
}

/** Wording for operators reading a terminal ("missing field 'task'"); parse with `reportInput` so missing values show. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys")
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `'${showUnsafe(k)}'`).join(", ")}`;
  if (issue.code === "invalid_type" && issue.input === undefined) return `missing field '${field}'`;
  return issue.message;
}
