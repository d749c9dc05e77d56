import { randomFillSync } from "node:crypto";
import { base62 } from "../ids";

/** Random bytes drawn a pool at a time: one call into OpenSSL per 341 request ids rather than per id. */
const pool = new Uint8Array(12 * 341);
let used = pool.length;

/** Always minted here: the id lands in the disclosure log, so a client must not be able to choose it. */
export function newRequestId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += 12;
  return `req_${base62(pool.subarray(used - 12, used))}`;
}
