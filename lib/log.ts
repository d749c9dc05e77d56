/**
 * Structured one-line JSON logs on stdout/stderr. Callers pass ids and codes, never request headers
 * or bodies, so no key or password can reach the log. Errors go through `errorFields`, never as
 * themselves: a database error carries the failed query's parameters (a password's argon2id hash,
 * a key's SHA-256) in its message, its `detail` and its properties.
 */
type Fields = Record<string, string | number | boolean | null | undefined>;

function write(level: "info" | "warn" | "error", message: string, fields: Fields): void {
  const line = JSON.stringify({ level, time: new Date().toISOString(), message, ...fields });
  (level === "info" ? process.stdout : process.stderr).write(`${line}\n`);
}

export const log = {
  info: (message: string, fields: Fields = {}) => write("info", message, fields),
  warn: (message: string, fields: Fields = {}) => write("warn", message, fields),
  error: (message: string, fields: Fields = {}) => write("error", message, fields),
};

/**
 * SQLSTATEs whose server message names only schema objects, never a value: "duplicate key value
 * violates unique constraint "users_email_unique"" may be logged, "invalid input syntax for type
 * uuid: "..."" (which quotes the value) may not. The `detail` field (`Key (key_hash)=(...) already
 * exists`) is never logged.
 */
const SAFE_SERVER_MESSAGES = new Set([
  "23502",
  "23503",
  "23505",
  "23514",
  "23P01",
  "25006",
  "40001",
  "40P01",
  "53300",
  "57014",
  "57P01",
  "57P02",
  "57P03",
]);
/** The driver's own connection errors: "write CONNECTION_CLOSED host:port". */
const SAFE_DRIVER_MESSAGES = new Set([
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
]);
const IDENTIFIER = /^[A-Za-z0-9_$.]{1,80}$/;
const MAX_CAUSES = 5;
const MAX_FRAMES = 20;

type ErrorLike = {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  severity?: unknown;
  syscall?: unknown;
  constraint_name?: unknown;
  table_name?: unknown;
  column_name?: unknown;
  stack?: unknown;
};

/**
 * What the log may say about an error: for each link of its cause chain the class, the code
 * (SQLSTATE, errno or driver code), the schema names of a database error, and the message only
 * where it is known to hold no value; then the stack's frames without its message line. Nothing
 * else of the error is read: not its parameters, query, detail or arguments.
 */
export function errorFields(error: unknown): { error: string; stack?: string } {
  const links: string[] = [];
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < MAX_CAUSES; e = causeOf(e), depth++) {
    links.push(describeLink(e));
  }
  const stack =
    typeof (error as ErrorLike)?.stack === "string" ? frames(error as { stack: string; message?: unknown }) : undefined;
  return stack ? { error: links.join(" <- "), stack } : { error: links.join(" <- ") };
}

function describeLink(value: unknown): string {
  if (typeof value !== "object" || value === null) return typeof value;
  const e = value as ErrorLike;
  const name = classOf(e);
  const code = identifier(e.code) ? (e.code as string) : undefined;
  let text = code ? `${name} ${code}` : name;
  for (const field of ["constraint_name", "table_name", "column_name"] as const) {
    if (identifier(e[field])) text += ` ${field.replace("_name", "")}=${e[field] as string}`;
  }
  if (typeof e.message === "string" && messageIsSafe(e, code)) text += `: ${e.message}`;
  return text;
}

/**
 * The error's class. The production build minifies class names, so Auth.js errors are named by
 * their `type` and drizzle's query error (whose `name` is plain "Error") by its shape.
 */
function classOf(e: ErrorLike & { type?: unknown; params?: unknown; query?: unknown }): string {
  if (typeof e.type === "string" && /^[A-Z][A-Za-z0-9]{2,60}$/.test(e.type)) return e.type;
  if (identifier(e.name) && e.name !== "Error") return e.name;
  if ("query" in e && "params" in e) return "DrizzleQueryError";
  const className = (e as object).constructor?.name;
  return identifier(className) ? className : "Error";
}

function messageIsSafe(e: ErrorLike, code: string | undefined): boolean {
  if (!code) return false;
  if (typeof e.severity === "string") return SAFE_SERVER_MESSAGES.has(code); // the server's ErrorResponse
  if (SAFE_DRIVER_MESSAGES.has(code)) return true;
  // Node's system errors ("connect ECONNREFUSED 127.0.0.1:5432") name the call and the address.
  return typeof e.syscall === "string" && /^E[A-Z0-9]+$/.test(code);
}

/** The next link: `cause`, or Auth.js's `cause.err`. */
function causeOf(value: unknown): unknown {
  const cause = (value as ErrorLike)?.cause;
  if (cause instanceof Error || cause === undefined || cause === null) return cause;
  return (cause as { err?: unknown }).err;
}

function identifier(value: unknown): value is string {
  return typeof value === "string" && IDENTIFIER.test(value);
}

/**
 * Only the `at ...` lines after the message, which a stack begins by repeating (a message of
 * several lines, such as a failed query's, could hold a line that looks like a frame).
 */
function frames(error: { stack: string; message?: unknown }): string | undefined {
  let stack = error.stack;
  const message = typeof error.message === "string" && error.message ? stack.indexOf(error.message) : -1;
  if (message >= 0) stack = stack.slice(message + (error.message as string).length);
  const lines = stack.split("\n").filter((line) => /^\s+at /.test(line));
  return lines.length
    ? lines
        .slice(0, MAX_FRAMES)
        .map((line) => line.trim())
        .join("\n")
    : undefined;
}
