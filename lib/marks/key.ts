import { createCipheriv, createHmac, hkdfSync } from "node:crypto";

/**
 * The keys of one licence's mark, derived from the installation's secret and the licence id, and
 * the keyed choices they make: which cells of a data file carry the mark and in which direction,
 * and the token that tells one licence's copy of a file from another's.
 *
 * A cell is (episode_index, frame_index, column, element): the row's two indices go through
 * AES-128 (one block per row, all rows of a file in one call: a pseudorandom 128 bits per row at
 * memory speed), and the column's keyed word and the element's index are mixed into the row's
 * words by two rounds of a 32-bit finaliser. One cell in four is chosen (MARK_SHARE); the choice
 * and the direction depend only on the key and the cell, so the same cell is chosen in any subset,
 * order or re-encoding of the rows.
 */

export type MarkKey = {
  licenceId: string;
  /** AES-128 key of the rows' pseudorandom words. */
  rows: Buffer;
  /** HMAC key of the columns' words. */
  columns: Buffer;
  /** HMAC key of the copy tokens (a file's per-licence identifier). */
  tokens: Buffer;
};

const INFO = "das-leak-mark-v1";

export function markKey(appSecret: string, licenceId: string): MarkKey {
  if (!appSecret) throw new Error("A mark key needs the installation's secret (APP_SECRET).");
  const okm = Buffer.from(hkdfSync("sha256", appSecret, Buffer.alloc(0), `${INFO}\0${licenceId}`, 64));
  return { licenceId, rows: okm.subarray(0, 16), columns: okm.subarray(16, 32), tokens: okm.subarray(32, 64) };
}

/** One cell in 2^MARK_SHARE_BITS carries the mark. */
export const MARK_SHARE_BITS = 2;
export const MARK_SHARE = 1 / 2 ** MARK_SHARE_BITS;

/** Four pseudorandom 32-bit words per row, from its episode and frame indices (whole numbers below 2^53). */
export function rowWords(key: MarkKey, episodes: ArrayLike<number>, frames: ArrayLike<number>): Int32Array {
  const n = episodes.length;
  const blocks = new Uint32Array(n * 4);
  for (let i = 0; i < n; i++) {
    const e = episodes[i]!;
    const f = frames[i]!;
    blocks[4 * i] = e >>> 0;
    blocks[4 * i + 1] = Math.floor(e / 4294967296) >>> 0;
    blocks[4 * i + 2] = f >>> 0;
    blocks[4 * i + 3] = Math.floor(f / 4294967296) >>> 0;
  }
  const cipher = createCipheriv("aes-128-ecb", key.rows, null);
  cipher.setAutoPadding(false);
  const out = cipher.update(new Uint8Array(blocks.buffer));
  const aligned = new Uint8Array(out.length);
  aligned.set(out);
  cipher.final();
  return new Int32Array(aligned.buffer);
}

/** The column's keyed word (by its top-level name: LeRobot's feature). */
export function columnWord(key: MarkKey, name: string): number {
  return createHmac("sha256", key.columns).update(name, "utf8").digest().readInt32LE(0);
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** The cell's word: whether it is chosen (isChosen) and its direction (upward). */
export function cellWord(words: Int32Array, row: number, column: number, element: number): number {
  const w = row * 4;
  return fmix32(fmix32(words[w]! ^ column ^ Math.imul(element + 1, 0x9e3779b1)) ^ words[w + 1]!);
}

export const isChosen = (word: number) => word >>> (32 - MARK_SHARE_BITS) === 0;
/** Whether a chosen cell's value moves up (to the next float) or down. */
export const upward = (word: number) => (word & 1) === 1;

/** A licence's token for one file of a version: what its copy carries where a mark cannot go. */
export function copyToken(key: MarkKey, path: string): Buffer {
  return createHmac("sha256", key.tokens).update(path, "utf8").digest().subarray(0, 16);
}
