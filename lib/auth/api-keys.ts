import { hash, randomBytes } from "node:crypto";
import { and, eq, isNull, lt, or } from "drizzle-orm";
import { apiKeys } from "../db/schema";
import { sqlOf, type Db } from "../db/client";
import { AppError } from "../errors";
import { base62 } from "../ids";
import type { ApiKeyPrincipal } from "./principal";
import { cachedRead, type ReadCache } from "../cache/read-cache";

export const KEY_PATTERN = /^das_[0-9A-Za-z]{43}$/;
const PREFIX_LENGTH = 12;
const LAST_USED_RESOLUTION_MS = 60_000;

export type MintedKey = { secret: string; hash: string; prefix: string };

/** `das_` + 32 random bytes in base62: 256 bits, so SHA-256 at rest is enough (no slow hash needed). */
export function mintKey(): MintedKey {
  return keyFromSecret(`das_${base62(randomBytes(32))}`);
}

export function keyFromSecret(secret: string): MintedKey {
  return { secret, hash: hashKey(secret), prefix: secret.slice(0, PREFIX_LENGTH) };
}

export function hashKey(secret: string): string {
  // One call, no Hash object: every API request digests its key.
  return hash("sha256", secret, "hex");
}

const unauthorized = (message: string) =>
  new AppError("unauthorized", message, { headers: { "WWW-Authenticate": 'Bearer realm="das"' } });

/** The bearer token of an Authorization header, or a 401 saying what is wrong with it. */
export function bearerToken(header: string | null): string {
  if (!header) throw unauthorized("Missing API key: send the header `Authorization: Bearer <key>`.");
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match || !KEY_PATTERN.test(match[1]!)) {
    throw unauthorized("Malformed Authorization header: expected `Bearer das_...` with a key issued by this service.");
  }
  return match[1]!;
}

type KeyRow = {
  id: string;
  prefix: string;
  organization_id: string;
  narrowed: boolean;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
};

/**
 * The principal of a key, or a 401 saying why not. With a cache the key's row comes from memory
 * (revoked and expired keys too: the row says so), and the expiry is checked against the clock on
 * every request all the same.
 */
export async function authenticateApiKey(
  db: Db,
  secret: string,
  options: { cache?: ReadCache; now?: Date } = {},
): Promise<ApiKeyPrincipal> {
  const now = options.now ?? new Date();
  const hash = hashKey(secret);
  const key = await cachedRead({ db, cache: options.cache }, "keys", [hash], async () => {
    const [row] = await sqlOf(db)<KeyRow[]>`
      select id, prefix, organization_id, narrowed, expires_at, revoked_at, last_used_at from api_keys where key_hash = ${hash}`;
    return row;
  });
  if (!key) throw unauthorized("Unknown API key.");
  if (key.revoked_at) throw unauthorized("This API key has been revoked.");
  if (key.expires_at && key.expires_at <= now) {
    throw unauthorized(`This API key expired at ${key.expires_at.toISOString()}.`);
  }
  if (!key.last_used_at || now.getTime() - key.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
    // The cached row too, so that this instance writes again only a minute later. The write changes
    // only last_used_at, which the database does not notify (drizzle/0004), so no cache is flushed.
    key.last_used_at = now;
    touchLastUsed(db, key.id, now);
  }
  return {
    kind: "api_key",
    keyId: key.id,
    keyPrefix: key.prefix,
    organizationId: key.organization_id,
    narrowed: key.narrowed,
  };
}

/** Written at most once a minute per key and off the request's path: a lost update only blurs the minute. */
function touchLastUsed(db: Db, keyId: string, now: Date): void {
  const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
  db.update(apiKeys)
    .set({ lastUsedAt: now })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, staleBefore))))
    .then(
      () => undefined,
      () => undefined,
    );
}
