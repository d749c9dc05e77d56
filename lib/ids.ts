import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Base62 of a byte string, as a big-endian number, padded to the full width of its byte length. */
export function base62(bytes: Uint8Array): string {
  const width = Math.ceil((bytes.length * 8) / Math.log2(62));
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(width, "0");
}

export type IdPrefix =
  | "org"
  | "usr"
  | "key"
  | "lic"
  | "dl"
  | "pv"
  | "hb"
  | "pl"
  | "aud"
  | "whk"
  | "wd"
  | "ack"
  | "acc"
  | "areq";

/** Our own ids carry their kind, e.g. `dl_4fQ...`, so a pasted id says what it is. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base62(randomBytes(16))}`;
}

/**
 * An id of the disclosure log (a download's, a preview's, a Hub file's or a plan's): when it was made, in milliseconds as
 * twelve hex digits, then 80 random bits. Ids made one after another sort one after another, in
 * bytes and under any ordinary collation (digits and a–f compare in that order in every locale), so
 * that entries and their episodes, keyed by this id, lie in the primary keys in about the order of
 * seq: a walk along seq reads those keys' pages in turn instead of a leaf at random per entry, and
 * appends land at the indexes' right edge. Guessing one is still a matter of 80 random bits.
 */
export function newLogId(
  prefix: Extract<IdPrefix, "dl" | "pv" | "hb" | "pl">,
  madeAt: number = Date.now(),
  random: Uint8Array = randomBytes(10),
): string {
  return `${prefix}_${madeAt.toString(16).padStart(12, "0")}${base62(random)}`;
}
