import { createHash } from "node:crypto";
import type { PendingQuery, Row } from "postgres";
import type { Sql } from "./client";

/**
 * Runs `query` (a tagged template, fragments and values) as a statement the server session keeps
 * prepared at the SQL level (`PREPARE`), so that a big statement is planned once per server
 * session, not once per call, and returns its rows. It is one code path for every connection:
 * directly, the driver could keep the statement prepared itself, but through a transaction-mode
 * pooler (PgBouncer) consecutive transactions of one client run on different server sessions, so
 * the driver prepares nothing there (lib/db/connection.ts) and the statement would be planned
 * again for every call. A server session keeps what `PREPARE` made whoever's transaction runs on
 * it, and for as long as it lives, whatever the transaction's outcome.
 *
 * Two statements, sent in one write behind whatever the caller sent before them: a `DO` block that
 * prepares the statement when the session lacks it (its name is a digest of its text and parameter
 * types, so equal names are equal statements), and `EXECUTE name(...)` with the values written as
 * literals, because a utility statement such as `EXECUTE` cannot take bound parameters ("there is no
 * parameter $1"). The literals are untyped, so the server reads each one as the type `PREPARE`
 * inferred for its parameter, as it does for a value the driver sends without a type.
 *
 * Neither statement carries a parameter: the driver sends a statement with parameters and nothing
 * prepared in two round trips (describe, then bind), which would break the write in two.
 *
 * `query` is never sent itself; it must consist of text, nested fragments and plain values (text,
 * numbers, booleans, bigints, dates, null, flat arrays of those). `sql` must be a transaction's.
 */
export async function executePrepared<T extends readonly Row[]>(sql: Sql, query: PendingQuery<T>): Promise<T> {
  const { prepare, execute } = preparedStatement(sql, query);
  const [, rows] = await Promise.all([prepare, execute]);
  return rows;
}

/**
 * executePrepared's two statements, not sent yet, for a caller that sends something between them:
 * the append prepares before it takes the chain's lock, so that only the `EXECUTE` runs under it.
 * They go in the order their `execute()` or first `then` is called.
 */
export function preparedStatement<T extends readonly Row[]>(
  sql: Sql,
  query: PendingQuery<T>,
): { prepare: PendingQuery<Row[]>; execute: PendingQuery<T> } {
  // Only a transaction's scope has `savepoint`: outside one, a transaction-mode pooler may run the
  // PREPARE and the EXECUTE on two server sessions, and the second would find nothing prepared.
  if (typeof (sql as { savepoint?: unknown }).savepoint !== "function")
    throw new Error(
      "A statement prepared at the SQL level runs inside a transaction, where its two statements share a session.",
    );
  const parameters: unknown[] = [];
  const text = compile(query, parameters);
  const types = parameters.map(parameterType);
  const name = `das_${createHash("sha256").update(`${types.join()}\n${text}`).digest("hex").slice(0, 32)}`;
  const prepare = `prepare ${name}${types.length ? `(${types.join(", ")})` : ""} as ${text}`;
  const ifMissing = `begin
    if not exists (select from pg_prepared_statements where name = '${name}') then execute ${dollarQuoted(prepare, "p")}; end if;
  end`;
  const execute = `execute ${name}${parameters.length ? `(${parameters.map(literal).join(", ")})` : ""}`;
  const unprepared = { prepare: false, simple: false };
  return {
    prepare: sql.unsafe(`do ${dollarQuoted(ifMissing, "do")}`, [], unprepared),
    execute: sql.unsafe(execute, [], unprepared) as unknown as PendingQuery<T>,
  };
}

/** What the driver's fragments are made of: the template's strings and the values between them. */
type Template = { strings: readonly string[] & { raw: readonly string[] }; args: readonly unknown[] };

const isTemplate = (value: unknown): value is Template =>
  typeof value === "object" &&
  value !== null &&
  Array.isArray((value as Template).strings) &&
  Array.isArray((value as Template).strings.raw) &&
  Array.isArray((value as Template).args);

/** The statement's text with `$n` for each value, as the driver writes it, the values in `parameters`. */
function compile(query: unknown, parameters: unknown[]): string {
  if (!isTemplate(query)) throw new Error("executePrepared takes a tagged template, not an unsafe query.");
  let text = query.strings[0]!;
  query.args.forEach((value, i) => {
    if (isTemplate(value)) text += compile(value, parameters);
    else {
      plainValue(value);
      parameters.push(value);
      text += `$${parameters.length}`;
    }
    text += query.strings[i + 1];
  });
  return text;
}

function plainValue(value: unknown): void {
  if (Array.isArray(value)) {
    if (value.some((v) => Array.isArray(v) || !isScalar(v)))
      throw new Error("executePrepared takes flat arrays of plain values only.");
  } else if (!isScalar(value)) throw new Error("executePrepared takes plain values and fragments only.");
}

const isScalar = (v: unknown) =>
  v === null || v instanceof Date || ["string", "number", "boolean", "bigint"].includes(typeof v);

/**
 * The type `PREPARE` declares: what the driver would send for the value (a date as timestamptz, a
 * boolean, a bigint), `unknown` for the rest, which the statement's own casts or context decide.
 */
function parameterType(value: unknown): string {
  const sample = Array.isArray(value) ? value.find((v) => v !== null) : value;
  const scalar =
    sample instanceof Date
      ? "timestamptz"
      : typeof sample === "boolean"
        ? "boolean"
        : typeof sample === "bigint"
          ? "bigint"
          : "unknown";
  return Array.isArray(value) && scalar !== "unknown" ? `${scalar}[]` : scalar;
}

/** The value as an untyped SQL literal (E'' form, so that it reads the same whatever standard_conforming_strings says). */
function literal(value: unknown): string {
  if (value === null) return "null";
  const text = Array.isArray(value) ? `{${value.map(arrayElement).join(",")}}` : scalarText(value);
  return `E'${text.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

const arrayElement = (value: unknown) =>
  value === null ? "NULL" : `"${scalarText(value).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

/**
 * A NUL would end the statement's text where the protocol reads it (a bound value holding one is
 * refused by the server as invalid text): refused here, before anything is sent.
 */
function scalarText(value: unknown): string {
  const text =
    value instanceof Date ? value.toISOString() : typeof value === "boolean" ? (value ? "t" : "f") : String(value);
  if (text.includes("\u0000")) throw new Error("executePrepared cannot write a value holding a NUL character.");
  return text;
}

/** `text` dollar-quoted with a tag it does not contain. */
function dollarQuoted(text: string, name: string): string {
  let tag = `$${name}$`;
  for (let n = 0; text.includes(tag); n++) tag = `$${name}${n}$`;
  return `${tag}${text}${tag}`;
}
