import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * Base62 of a byte string, as a big-endian number, padded to the full width of its byte length.
 * Long division of 16-bit words by 62, in plain numbers: every API request mints an id, and the
 * same division in BigInt took several microseconds of each.
 */
export function base62(bytes: Uint8Array): string {
  const width = Math.ceil((bytes.length * 8) / Math.log2(62));
  const words: number[] = [];
  // An odd leading byte is a word of its own: the number is the same.
  for (let i = bytes.length % 2 ? -1 : 0; i < bytes.length; i += 2) words.push(((bytes[i] ?? 0) << 8) | bytes[i + 1]!);
  let out = "";
  for (let first = 0; first < words.length; ) {
    let remainder = 0;
    for (let i = first; i < words.length; i++) {
      const value = remainder * 65536 + words[i]!;
      words[i] = Math.floor(value / 62);
      remainder = value % 62;
    }
    out = BASE62[remainder] + out;
    while (first < words.length && words[first] === 0) first++;
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
