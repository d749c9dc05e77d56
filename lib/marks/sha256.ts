/**
 * SHA-256 that can stop after a whole number of blocks and carry on later from what it kept (its
 * eight state words, the bytes hashed, and the few bytes past the last whole block). A copy that is
 * the original plus a few bytes of its own (a video's trailing box) then gets its hash from the
 * original's kept state and its own tail, without the original's bytes being read again for every
 * licence: node:crypto cannot hand its state over, so the blocks are hashed here (once per file).
 */

export type Sha256State = {
  /** The state words after `length` bytes, as 64 hex digits. */
  words: string;
  /** Bytes hashed into `words`: a multiple of 64. */
  length: number;
  /** The bytes after them (fewer than 64), as hex. */
  tail: string;
};

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** Hashes whole blocks of `bytes` into `h`. */
function blocks(h: Int32Array, bytes: Uint8Array, w: Int32Array): void {
  for (let at = 0; at + 64 <= bytes.length; at += 64) {
    for (let i = 0; i < 16; i++) {
      const p = at + 4 * i;
      w[i] = (bytes[p]! << 24) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 8) | bytes[p + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h[0]!;
    let b = h[1]!;
    let c = h[2]!;
    let d = h[3]!;
    let e = h[4]!;
    let f = h[5]!;
    let g = h[6]!;
    let k = h[7]!;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + S1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0]! + a) | 0;
    h[1] = (h[1]! + b) | 0;
    h[2] = (h[2]! + c) | 0;
    h[3] = (h[3]! + d) | 0;
    h[4] = (h[4]! + e) | 0;
    h[5] = (h[5]! + f) | 0;
    h[6] = (h[6]! + g) | 0;
    h[7] = (h[7]! + k) | 0;
  }
}

/** A hash to feed in pieces (a stream of the original), kept as a Sha256State at the end. */
export class ResumableSha256 {
  private readonly h: Int32Array;
  private readonly w = new Int32Array(64);
  private length: number;
  private pending: Uint8Array;

  constructor(from?: Sha256State) {
    this.h = Int32Array.from(from ? wordsOf(from.words) : INITIAL);
    this.length = from?.length ?? 0;
    this.pending = from ? Buffer.from(from.tail, "hex") : new Uint8Array(0);
  }

  update(bytes: Uint8Array): this {
    const joined = this.pending.length ? concat(this.pending, bytes) : bytes;
    const whole = joined.length - (joined.length % 64);
    blocks(this.h, joined.subarray(0, whole), this.w);
    this.length += whole;
    this.pending = joined.slice(whole);
    return this;
  }

  /** What was fed so far, to carry on from. */
  state(): Sha256State {
    return {
      words: Buffer.from(new Uint8Array(wordBytes(this.h))).toString("hex"),
      length: this.length,
      tail: Buffer.from(this.pending).toString("hex"),
    };
  }

  /** The digest (hex) of everything fed, this state included. */
  digest(): string {
    const total = this.length + this.pending.length;
    const padded = new Uint8Array((this.pending.length + 9 + 63) & ~63);
    padded.set(this.pending);
    padded[this.pending.length] = 0x80;
    const bits = total * 8;
    const view = new DataView(padded.buffer);
    view.setUint32(padded.length - 8, Math.floor(bits / 2 ** 32));
    view.setUint32(padded.length - 4, bits >>> 0);
    const h = Int32Array.from(this.h);
    blocks(h, padded, this.w);
    return Buffer.from(wordBytes(h)).toString("hex");
  }
}

/** SHA-256 of (the bytes whose kept state is `state`) followed by `suffix`. */
export function sha256After(state: Sha256State, suffix: Uint8Array): string {
  return new ResumableSha256(state).update(suffix).digest();
}

function wordsOf(hex: string): number[] {
  const bytes = Buffer.from(hex, "hex");
  if (bytes.length !== 32) throw new Error("a kept SHA-256 state has eight words");
  return Array.from({ length: 8 }, (_, i) => bytes.readInt32BE(4 * i));
}

function wordBytes(h: Int32Array): Uint8Array {
  const out = Buffer.alloc(32);
  for (let i = 0; i < 8; i++) out.writeInt32BE(h[i]!, 4 * i);
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
