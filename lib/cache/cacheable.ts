import { createHash } from "node:crypto";

/**
 * A JSON answer that is the same for everyone entitled to it. A verb returns one only after it has
 * authorized the caller, so whatever a cache holds under `key` reaches only callers who would get
 * the same bytes from the database. `key` must name everything that determines those bytes.
 */
export class CacheableRead<T extends object> {
  constructor(
    readonly key: readonly unknown[],
    readonly read: () => Promise<T>,
  ) {}
}

/** A serialised answer and its strong validator (a digest of exactly these bytes). */
export type JsonBody = { bytes: Uint8Array<ArrayBuffer>; etag: string };

const encoder = new TextEncoder();

export function jsonBody(value: object): JsonBody {
  const bytes = encoder.encode(JSON.stringify(value));
  return { bytes, etag: `"${createHash("sha256").update(bytes).digest("base64url")}"` };
}
