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

export type IdPrefix = "org" | "usr" | "key" | "lic" | "dl" | "pv" | "aud";

/** Our own ids carry their kind, e.g. `dl_4fQ...`, so a pasted id says what it is. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base62(randomBytes(16))}`;
}
