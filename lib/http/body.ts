import { z } from "zod";
import { AppError } from "../errors";

/** Large enough for 10,000 episode ids, small enough that a body cannot be used to exhaust memory. */
const MAX_BODY_BYTES = 1_000_000;

export async function readJsonBody<B extends z.ZodType>(request: Request, schema: B): Promise<z.infer<B>> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new AppError("invalid_body", "Send the body as JSON with `Content-Type: application/json`.");
  }
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const text = await bodyText(request);
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw tooLarge();
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

const tooLarge = () =>
  new AppError("invalid_body", `The body is larger than ${MAX_BODY_BYTES} bytes; split the request.`);

/**
 * The body as text. A client that closes its connection half way through sending it (the stream
 * fails with ECONNRESET) left a body that is not whole: that is the client's doing, answered as a
 * bad body, never logged or answered as an unavailable dependency.
 */
async function bodyText(request: Request): Promise<string> {
  try {
    return await request.text();
  } catch {
    throw new AppError("invalid_body", "The request body was cut off: the connection closed before it ended.");
  }
}
