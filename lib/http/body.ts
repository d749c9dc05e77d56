import { z } from "zod";
import { AppError } from "../errors";

/** Large enough for 10,000 episode ids, small enough that a body cannot be used to exhaust memory. */
export const MAX_BODY_BYTES = 1_000_000;

export async function readJsonBody<B extends z.ZodType>(request: Request, schema: B): Promise<z.infer<B>> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new AppError("invalid_body", "Send the body as JSON with `Content-Type: application/json`.");
  }
  const text = await readBodyText(request, MAX_BODY_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError("invalid_body", "The body is not valid JSON.");
  }
  return parseBody(schema, json);
}

/** A parsed body checked against its schema, or 400 invalid_body naming the first field at fault. */
export function parseBody<B extends z.ZodType>(schema: B, json: unknown): z.infer<B> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? `'${issue.path.join(".")}'` : "The body";
    throw new AppError("invalid_body", `${where}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * A body over `limit` bytes: 413. The rest is never read into memory: once the answer is sent the
 * guard on Node's server reads a little more of it to throw away and closes the connection
 * (lib/http/request-guard.ts, `lingerThenClose`).
 */
const bodyTooLarge = (limit: number) =>
  new AppError("body_too_large", `The body is larger than ${limit} bytes; split the request.`);

/**
 * The body as text, its bytes counted as they arrive: a declared Content-Length over `limit` is
 * refused before anything is read, and a body without one (chunked) as soon as it passes `limit`,
 * so memory holds at most `limit` bytes of it whatever the client sends. The rest is left unread:
 * the stream is released, not cancelled, since cancelling would destroy the socket before the 413
 * could be written.
 *
 * A client that closes its connection half way through sending it (the stream fails with
 * ECONNRESET) left a body that is not whole: that is the client's doing, answered as a bad body,
 * never logged or answered as an unavailable dependency.
 */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  if (Number(request.headers.get("content-length") ?? 0) > limit) throw bodyTooLarge(limit);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch {
        throw new AppError("invalid_body", "The request body was cut off: the connection closed before it ended.");
      }
      if (read.done) break;
      size += read.value.byteLength;
      if (size > limit) throw bodyTooLarge(limit);
      chunks.push(read.value);
    }
  } finally {
    reader.releaseLock();
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
