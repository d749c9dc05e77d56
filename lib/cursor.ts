import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { AppError } from "./errors";
import { requireEnv } from "./env";

/**
 * Cursors are opaque to clients: `<payload>.<mac>`, base64url. The payload holds the sort key of the
 * last row served and a digest of the query that produced it, so a cursor edited by hand, cut short,
 * or replayed against another dataset, version or filter is refused with 400 invalid_cursor.
 */
type Payload = { k: unknown[]; q: string };

/**
 * The shape of every cursor this service issues: a base64url payload, a dot, and the 16-byte MAC in
 * base64url (22 characters). The OpenAPI document states it for `cursor` and `next_cursor`; a
 * cursor of another shape cannot be one of ours and is refused before its MAC is computed.
 */
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/;
/** Far above what any sort key makes (the longest, an episode id of 200 characters, makes about 330). */
export const CURSOR_MAX_LENGTH = 1000;

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
  const [payload, signature] = cursor.split(".");
  const issued = cursor.length <= CURSOR_MAX_LENGTH && CURSOR_PATTERN.test(cursor);
  const expected = issued && payload ? mac(payload) : undefined;
  const given = signature ? Buffer.from(signature, "base64url") : undefined;
  if (!expected || !given || given.length !== expected.length || !timingSafeEqual(given, expected)) {
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
