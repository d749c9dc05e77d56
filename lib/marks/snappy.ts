import { snappyCompress } from "hyparquet-writer/src/snappy.js";
import { ParquetFormatError } from "./format-error";

/**
 * Snappy for the pages of a marked copy. Decoding copies literals and non-overlapping matches with
 * TypedArray.set (float pages are nearly all literals, which hyparquet's byte-by-byte decoder and
 * hysnappy's WebAssembly round trip each took 1.3 s per 100 MB). Encoding stores a page as one
 * literal when its original did not compress (the common case for sensor floats: snappy's own
 * encoder spends 0.5 to 1.3 s per 100 MB finding nothing), and compresses it otherwise.
 */

export class SnappyError extends ParquetFormatError {}

export function snappyDecode(input: Uint8Array, expected: number): Uint8Array {
  let pos = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= input.length || shift > 28) throw new SnappyError("snappy: bad length header");
    const byte = input[pos++]!;
    length += (byte & 0x7f) * 2 ** shift;
    if (!(byte & 0x80)) break;
  }
  if (length !== expected) throw new SnappyError(`snappy: page says ${expected} bytes, stream says ${length}`);
  const out = new Uint8Array(length);
  let at = 0;
  while (pos < input.length) {
    const tag = input[pos++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let len = tag >>> 2;
      if (len >= 60) {
        const bytes = len - 59;
        if (pos + bytes > input.length) throw new SnappyError("snappy: literal length runs past the end");
        len = 0;
        for (let i = 0; i < bytes; i++) len += input[pos + i]! * 2 ** (8 * i);
        pos += bytes;
      }
      len += 1;
      if (pos + len > input.length || at + len > length) throw new SnappyError("snappy: literal runs past the end");
      out.set(input.subarray(pos, pos + len), at);
      pos += len;
      at += len;
      continue;
    }
    let len: number;
    let offset: number;
    if (kind === 1) {
      if (pos >= input.length) throw new SnappyError("snappy: copy runs past the end");
      len = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | input[pos++]!;
    } else if (kind === 2) {
      if (pos + 2 > input.length) throw new SnappyError("snappy: copy runs past the end");
      len = (tag >>> 2) + 1;
      offset = input[pos]! | (input[pos + 1]! << 8);
      pos += 2;
    } else {
      if (pos + 4 > input.length) throw new SnappyError("snappy: copy runs past the end");
      len = (tag >>> 2) + 1;
      offset = (input[pos]! | (input[pos + 1]! << 8) | (input[pos + 2]! << 16) | (input[pos + 3]! << 24)) >>> 0;
      pos += 4;
    }
    if (offset === 0 || offset > at || at + len > length) throw new SnappyError("snappy: copy out of range");
    if (offset >= len) out.copyWithin(at, at - offset, at - offset + len);
    else for (let i = 0; i < len; i++) out[at + i] = out[at - offset + i]!;
    at += len;
  }
  if (at !== length) throw new SnappyError(`snappy: stream holds ${at} of ${length} bytes`);
  return out;
}

/** A snappy stream of one literal: valid for every decoder, and as fast as a copy. */
export function snappyStore(input: Uint8Array): Uint8Array {
  const header: number[] = [];
  let n = input.length;
  while (n >= 0x80) {
    header.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  header.push(n);
  if (input.length === 0) return Uint8Array.from(header);
  const len = input.length - 1;
  const out = new Uint8Array(header.length + 5 + input.length);
  out.set(header, 0);
  let at = header.length;
  out[at++] = 63 << 2; // a literal whose length-1 follows in 4 bytes
  out[at++] = len & 0xff;
  out[at++] = (len >>> 8) & 0xff;
  out[at++] = (len >>> 16) & 0xff;
  out[at++] = (len >>> 24) & 0xff;
  out.set(input, at);
  return out;
}

/** Snappy-compressed, or stored when `compressible` is false. */
export function snappyEncode(input: Uint8Array, compressible: boolean): Uint8Array {
  return compressible ? snappyCompress(input) : snappyStore(input);
}
