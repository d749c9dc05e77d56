import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { AppError } from "./errors";
import { requireEnv } from "./env";

/**
 * Cursors are opaque to clients: `<payload>.<mac>`, base64url. The payload holds the sort key of the
 * last row served and a digest of the query that produced it, so a cursor edited by hand, cut short,
 * or replayed against another dataset, version or filter is refused with 400 invalid_cursor.
 */
type Payload = { k: unknown[]; q: string };

let cachedKey: { secret: string; key: Buffer } | undefined;

function macKey(): Buffer {
  const secret = requireEnv("APP_SECRET");
  if (cachedKey?.secret !== secret) {
    cachedKey = { secret, key: createHmac("sha256", secret).update("das-cursor-v1").digest() };
  }
  return cachedKey.key;
}

function mac(payload: string): Buffer {
  return createHmac("sha256", macKey()).update(payload).digest().subarray(0, 16);
}

/** The query a cursor belongs to: the endpoint and every parameter except limit and cursor. */
export function queryBinding(parts: readonly (string | number | null | undefined)[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url").slice(0, 16);
}

export function encodeCursor(binding: string, key: unknown[]): string {
  const payload = Buffer.from(JSON.stringify({ k: key, q: binding } satisfies Payload)).toString("base64url");
  return `${payload}.${mac(payload).toString("base64url")}`;
}

type KeyType = "string" | "number";
type KeyValues<T extends readonly KeyType[]> = { -readonly [I in keyof T]: T[I] extends "number" ? number : string };

/** The sort key carried by a cursor, typed as `types`; 400 invalid_cursor for anything we did not issue for this query. */
export function decodeCursor<const T extends readonly KeyType[]>(
  cursor: string,
  binding: string,
  types: T,
): KeyValues<T> {
  const [payload, signature, extra] = cursor.split(".");
  const expected = payload ? mac(payload) : undefined;
  const given = signature ? Buffer.from(signature, "base64url") : undefined;
  if (
    extra !== undefined ||
    !expected ||
    !given ||
    given.length !== expected.length ||
    !timingSafeEqual(given, expected)
  ) {
    throw new AppError(
      "invalid_cursor",
      "The cursor is not one this service issued, or it was altered. Pass next_cursor back unchanged.",
    );
  }
  const decoded = JSON.parse(Buffer.from(payload!, "base64url").toString("utf8")) as Payload;
  if (decoded.q !== binding) {
    throw new AppError(
      "invalid_cursor",
      "The cursor belongs to a different query. Repeat the original filters with it, or start again without a cursor.",
    );
  }
  // The MAC proves we issued it; the shape check covers cursors from a build whose key differed.
  const key = decoded.k;
  if (!Array.isArray(key) || key.length !== types.length || key.some((value, i) => typeof value !== types[i])) {
    throw new AppError("invalid_cursor", "The cursor does not fit this query. Start again without a cursor.");
  }
  return key as KeyValues<T>;
}
