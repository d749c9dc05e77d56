import { brotliCompressSync, brotliDecompressSync, constants, crc32, gunzipSync, gzipSync } from "node:zlib";
import { decompress as decompressZstd } from "fzstd";
import { compressors } from "hyparquet-compressors";
import { CODEC, ENCODING, PAGE, PHYSICAL, ParquetFormatError, type Chunk, type Leaf } from "./parquet-layout";
import { snappyDecode, snappyEncode } from "./snappy";
import {
  binaryField,
  cloneStruct,
  encodeStruct,
  intField,
  readStruct,
  setField,
  structField,
  T,
  type TStruct,
} from "./thrift";

/**
 * The pages of a float column chunk: read (decompressed, levels and values decoded), and written
 * again with new values and everything else as it was. Levels are copied as their bytes, never
 * re-encoded, so a page's rows and nulls cannot change.
 */

/** A page as it lies in the file. */
export type RawPage = { header: TStruct; type: number; offset: number; headerLength: number; body: Uint8Array };

/** Every page of a chunk, in order. */
export function* chunkPages(bytes: Uint8Array, chunk: Chunk): Generator<RawPage> {
  const end = chunk.start + chunk.length;
  let offset = chunk.start;
  while (offset < end) {
    const reader = { bytes: bytes.subarray(0, end), offset };
    const header = readStruct(reader);
    const size = intField(header, 3) ?? -1;
    if (size < 0 || reader.offset + size > end) throw new ParquetFormatError("a page runs past its column chunk");
    yield {
      header,
      type: intField(header, 1) ?? -1,
      offset,
      headerLength: reader.offset - offset,
      body: bytes.subarray(reader.offset, reader.offset + size),
    };
    offset = reader.offset + size;
  }
}

/** The most a page may decompress to: a page of a few bytes can claim gigabytes. */
export const MAX_PAGE_BYTES = 512 * 1024 * 1024;
/** The most values (and nulls) a page or dictionary may claim: what is allocated for it is bounded by this. */
export const MAX_PAGE_VALUES = 64 * 1024 * 1024;

export function pageValues(count: number): number {
  if (!(count >= 0 && count <= MAX_PAGE_VALUES))
    throw new ParquetFormatError(`a page claims ${count} values (at most ${MAX_PAGE_VALUES})`);
  return count;
}

export function decompress(codec: number, input: Uint8Array, size: number): Uint8Array {
  if (size < 0 || size > MAX_PAGE_BYTES) throw new ParquetFormatError(`a page claims ${size} bytes uncompressed`);
  let out: Uint8Array;
  try {
    out = decompressed(codec, input, size);
  } catch (error) {
    if (error instanceof ParquetFormatError) throw error;
    throw new ParquetFormatError(`a page does not decompress: ${(error as Error).message}`);
  }
  if (out.length !== size) throw new ParquetFormatError(`a page decompressed to ${out.length} bytes, not ${size}`);
  return out;
}

function decompressed(codec: number, input: Uint8Array, size: number): Uint8Array {
  let out: Uint8Array;
  switch (codec) {
    case CODEC.UNCOMPRESSED:
      out = input;
      break;
    case CODEC.SNAPPY:
      out = snappyDecode(input, size);
      break;
    case CODEC.GZIP:
      out = gunzipSync(input, { maxOutputLength: size });
      break;
    case CODEC.BROTLI:
      out = brotliDecompressSync(input, { maxOutputLength: size });
      break;
    case CODEC.ZSTD:
      out = decompressZstd(input, new Uint8Array(size));
      break;
    case CODEC.LZ4:
      out = compressors.LZ4!(input, size);
      break;
    case CODEC.LZ4_RAW:
      out = compressors.LZ4_RAW!(input, size);
      break;
    default:
      throw new ParquetFormatError(`compression codec ${codec} is not supported`);
  }
  return out;
}

/**
 * The codec a rewritten chunk is written with: its own where Node can write it, else Snappy (Node
 * 20 has no zstd or lz4 encoder; the codec is the chunk's own, so readers take the change).
 */
export const writableCodec = (codec: number) =>
  codec === CODEC.UNCOMPRESSED || codec === CODEC.SNAPPY || codec === CODEC.GZIP || codec === CODEC.BROTLI
    ? codec
    : CODEC.SNAPPY;

export function compress(codec: number, input: Uint8Array, compressible: boolean): Uint8Array {
  switch (codec) {
    case CODEC.UNCOMPRESSED:
      return input;
    case CODEC.SNAPPY:
      return snappyEncode(input, compressible);
    case CODEC.GZIP:
      return gzipSync(input, { level: compressible ? 6 : 1 });
    case CODEC.BROTLI:
      return brotliCompressSync(input, { params: { [constants.BROTLI_PARAM_QUALITY]: compressible ? 5 : 1 } });
    default:
      throw new ParquetFormatError(`compression codec ${codec} cannot be written`);
  }
}

/**
 * Decodes an RLE / bit-packed hybrid run of `count` levels of `width` bits into `out`, from
 * `bytes[offset, end)`; returns where it stopped.
 */
export function decodeHybrid(
  bytes: Uint8Array,
  offset: number,
  end: number,
  width: number,
  out: Uint8Array | Uint32Array,
): number {
  if (width > 24) throw new ParquetFormatError(`levels or indices of ${width} bits`);
  end = Math.min(end, bytes.length);
  const count = out.length;
  let seen = 0;
  let pos = offset;
  const byteWidth = (width + 7) >> 3;
  const mask = (1 << width) - 1;
  while (seen < count) {
    if (pos >= end) throw new ParquetFormatError("levels end early");
    let header = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[pos++]!;
      header += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) break;
      if (pos >= end || shift > 28) throw new ParquetFormatError("a bad run header in levels");
    }
    if (header % 2 === 0) {
      const run = header / 2;
      let value = 0;
      for (let i = 0; i < byteWidth; i++) value |= bytes[pos++]! << (8 * i);
      if (value > mask) throw new ParquetFormatError("a run's value is wider than its bit width");
      out.fill(value, seen, Math.min(count, seen + run));
      seen += run;
    } else {
      const groups = (header - 1) / 2;
      const values = groups * 8;
      const runBytes = groups * width;
      if (pos + runBytes > end) throw new ParquetFormatError("bit-packed levels run past their end");
      let buffer = 0;
      let bits = 0;
      let p = pos;
      for (let i = 0; i < values; i++) {
        while (bits < width) {
          buffer |= bytes[p++]! << bits;
          bits += 8;
        }
        if (seen < count) out[seen++] = buffer & mask;
        buffer >>>= width;
        bits -= width;
      }
      pos += runBytes;
    }
  }
  return pos;
}

/** Dictionary indices (up to 24 bits wide: 16 million distinct values in one chunk). */
export function decodeIndices(
  bytes: Uint8Array,
  offset: number,
  end: number,
  width: number,
  count: number,
): Uint32Array {
  const out = new Uint32Array(count);
  decodeHybrid(bytes, offset, end, width, out);
  return out;
}

export type FloatArray = Float32Array | Float64Array;

/** A data page decoded: its levels (as bytes and decoded) and its non-null values. */
export type DataPage = {
  raw: RawPage;
  v2: boolean;
  /** Slots (values and nulls) in the page. */
  slots: number;
  repetition: Uint8Array | null;
  definition: Uint8Array | null;
  /** The levels exactly as stored: v1 with their length prefixes, v2 as the header counts them. */
  levelBytes: Uint8Array;
  encoding: number;
  values: FloatArray;
  /** Whether the original compressed well: a rewrite spends time compressing only then. */
  compressible: boolean;
};

const floatArrayOf = (physical: number, n: number): FloatArray =>
  physical === PHYSICAL.FLOAT ? new Float32Array(n) : new Float64Array(n);

/** A dictionary page's values. */
export function readDictionary(raw: RawPage, codec: number, physical: number): FloatArray {
  const header = structField(raw.header, 7);
  const count = pageValues(header ? (intField(header, 1) ?? 0) : 0);
  const body = decompress(codec, raw.body, intField(raw.header, 2) ?? -1);
  const width = physical === PHYSICAL.FLOAT ? 4 : 8;
  if (count * width > body.length) throw new ParquetFormatError("a dictionary page holds fewer values than it says");
  const values = floatArrayOf(physical, count);
  new Uint8Array(values.buffer).set(body.subarray(0, count * width));
  return values;
}

export function readDataPage(raw: RawPage, codec: number, leaf: Leaf, dictionary: FloatArray | null): DataPage {
  const v2 = raw.type === PAGE.DATA_V2;
  const header = structField(raw.header, v2 ? 8 : 5);
  if (!header) throw new ParquetFormatError("a data page without its header");
  const slots = pageValues(intField(header, 1) ?? 0);
  const encoding = intField(header, v2 ? 4 : 2) ?? 0;
  const uncompressed = intField(raw.header, 2) ?? -1;
  const compressible = raw.body.length < 0.8 * uncompressed;
  let levelBytes: Uint8Array;
  let valueBytes: Uint8Array;
  let repetition: Uint8Array | null = null;
  let definition: Uint8Array | null = null;
  if (v2) {
    const repLength = intField(header, 6) ?? 0;
    const defLength = intField(header, 5) ?? 0;
    if (repLength + defLength > raw.body.length) throw new ParquetFormatError("a page's levels run past its end");
    levelBytes = raw.body.subarray(0, repLength + defLength);
    if (leaf.maxRepetition > 0)
      decodeHybrid(levelBytes, 0, repLength, bitWidth(leaf.maxRepetition), (repetition = new Uint8Array(slots)));
    if (leaf.maxDefinition > 0)
      decodeHybrid(
        levelBytes,
        repLength,
        repLength + defLength,
        bitWidth(leaf.maxDefinition),
        (definition = new Uint8Array(slots)),
      );
    const rest = raw.body.subarray(repLength + defLength);
    const compressed = (header.fields.find((f) => f.id === 7)?.value ?? true) !== false;
    valueBytes = compressed ? decompress(codec, rest, uncompressed - repLength - defLength) : rest;
  } else {
    const body = decompress(codec, raw.body, uncompressed);
    let pos = 0;
    const prefixed = (width: number) => {
      if (pos + 4 > body.length) throw new ParquetFormatError("a page's levels run past its end");
      const length = new DataView(body.buffer, body.byteOffset + pos, 4).getUint32(0, true);
      const levels = new Uint8Array(slots);
      decodeHybrid(body, pos + 4, pos + 4 + length, width, levels);
      pos += 4 + length;
      return levels;
    };
    if (leaf.maxRepetition > 0) repetition = prefixed(bitWidth(leaf.maxRepetition));
    if (leaf.maxDefinition > 0) definition = prefixed(bitWidth(leaf.maxDefinition));
    levelBytes = body.subarray(0, pos);
    valueBytes = body.subarray(pos);
  }
  let present = slots;
  if (definition) {
    present = 0;
    for (let i = 0; i < slots; i++) if (definition[i] === leaf.maxDefinition) present++;
  }
  const values = decodeValues(valueBytes, encoding, leaf.physical, present, dictionary);
  return { raw, v2, slots, repetition, definition, levelBytes, encoding, values, compressible };
}

function decodeValues(
  bytes: Uint8Array,
  encoding: number,
  physical: number,
  count: number,
  dictionary: FloatArray | null,
): FloatArray {
  const width = physical === PHYSICAL.FLOAT ? 4 : 8;
  const values = floatArrayOf(physical, count);
  if (encoding === ENCODING.PLAIN) {
    if (count * width > bytes.length) throw new ParquetFormatError("a page holds fewer values than its levels say");
    new Uint8Array(values.buffer).set(bytes.subarray(0, count * width));
  } else if (encoding === ENCODING.PLAIN_DICTIONARY || encoding === ENCODING.RLE_DICTIONARY) {
    if (!dictionary) throw new ParquetFormatError("a dictionary-encoded page without a dictionary");
    if (count === 0) return values;
    const indices = decodeIndices(bytes, 1, bytes.length, bytes[0]!, count);
    for (let i = 0; i < count; i++) {
      const index = indices[i]!;
      if (index >= dictionary.length) throw new ParquetFormatError("a dictionary index out of range");
      values[i] = dictionary[index]!;
    }
  } else if (encoding === ENCODING.BYTE_STREAM_SPLIT) {
    if (count * width > bytes.length) throw new ParquetFormatError("a page holds fewer values than its levels say");
    const out = new Uint8Array(values.buffer);
    for (let b = 0; b < width; b++) for (let i = 0; i < count; i++) out[i * width + b] = bytes[b * count + i]!;
  } else {
    throw new ParquetFormatError(`float values encoded as ${encoding} are not supported`);
  }
  return values;
}

function encodeValues(values: FloatArray, encoding: number): Uint8Array {
  const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  if (encoding !== ENCODING.BYTE_STREAM_SPLIT) return bytes;
  const width = values.BYTES_PER_ELEMENT;
  const count = values.length;
  const out = new Uint8Array(bytes.length);
  for (let b = 0; b < width; b++) for (let i = 0; i < count; i++) out[b * count + i] = bytes[i * width + b]!;
  return out;
}

/**
 * The page written again with `page.values` (changed in place by the caller) as PLAIN, or as
 * BYTE_STREAM_SPLIT where it was: a dictionary page's references become the values themselves, so
 * the chunk needs no dictionary. Header fields other than sizes, encoding, statistics and CRC stay.
 * Returns the header and the body, for the caller to place.
 */
export function writeDataPage(
  page: DataPage,
  codec: number,
  physical: number,
): { header: Uint8Array; body: Uint8Array; uncompressed: number; encoding: number } {
  const encoding = page.encoding === ENCODING.BYTE_STREAM_SPLIT ? ENCODING.BYTE_STREAM_SPLIT : ENCODING.PLAIN;
  const values = encodeValues(page.values, encoding);
  const header = cloneStruct(page.raw.header);
  const sub = structField(header, page.v2 ? 8 : 5)!;
  setField(sub, page.v2 ? 4 : 2, T.I32, encoding);
  const pageStats = structField(sub, page.v2 ? 8 : 5);
  if (pageStats) updateStatistics(pageStats, floatRange(page.values), physical);
  let body: Uint8Array;
  let uncompressed: number;
  if (page.v2) {
    const compressed = (sub.fields.find((f) => f.id === 7)?.value ?? true) !== false;
    const stored = compressed ? compress(codec, values, page.compressible) : values;
    body = concat([page.levelBytes, stored]);
    uncompressed = page.levelBytes.length + values.length;
  } else {
    const plain = concat([page.levelBytes, values]);
    uncompressed = plain.length;
    body = compress(codec, plain, page.compressible);
  }
  setField(header, 2, T.I32, uncompressed);
  setField(header, 3, T.I32, body.length);
  if (header.fields.some((f) => f.id === 4)) setField(header, 4, T.I32, crc32(body) | 0);
  const encoded = encodeStruct(header);
  return { header: encoded, body, uncompressed: encoded.length + uncompressed, encoding };
}

/** The least and greatest of `values` (NaN left out); min > max when there is none. */
export function floatRange(
  values: FloatArray,
  into = { min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY },
) {
  let { min, max } = into;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  into.min = min;
  into.max = max;
  return into;
}

/**
 * A statistics struct made true of values whose range is `range` again: min and max (both the
 * deprecated and the current fields) where it has them, each kept as written while its value is
 * unchanged (so -0 and +0 stay as the writer chose), and the distinct count dropped (marking
 * changes it).
 */
export function updateStatistics(
  stats: TStruct | undefined,
  range: { min: number; max: number },
  physical: number,
): void {
  if (!stats) return;
  setField(stats, 4, T.I64, undefined);
  if (range.min > range.max) return;
  for (const [id, value] of [
    [1, range.max],
    [2, range.min],
    [5, range.max],
    [6, range.min],
  ] as const) {
    const old = binaryField(stats, id);
    if (!old) continue;
    if (readFloat(old, physical) === value) continue;
    setField(stats, id, T.BINARY, floatBytes(value, physical));
  }
}

export function readFloat(bytes: Uint8Array, physical: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (physical === PHYSICAL.FLOAT) return bytes.length === 4 ? view.getFloat32(0, true) : Number.NaN;
  return bytes.length === 8 ? view.getFloat64(0, true) : Number.NaN;
}

export function floatBytes(value: number, physical: number): Uint8Array {
  const out = new Uint8Array(physical === PHYSICAL.FLOAT ? 4 : 8);
  const view = new DataView(out.buffer);
  if (physical === PHYSICAL.FLOAT) view.setFloat32(0, value, true);
  else view.setFloat64(0, value, true);
  return out;
}

export const bitWidth = (max: number) => 32 - Math.clz32(max);

export function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Where each value of a page sits: its row (counted from the chunk's first row, carried across
 * pages in `state`, which starts at row -1) and its element within that row (0 for a flat column).
 */
export function valuePositions(
  page: DataPage,
  leaf: Leaf,
  state: { row: number; element: number },
): { rows: Int32Array; elements: Int32Array } {
  const { repetition, definition } = page;
  const rows = new Int32Array(page.values.length);
  const elements = new Int32Array(page.values.length);
  let v = 0;
  for (let i = 0; i < page.slots; i++) {
    if (!repetition || repetition[i] === 0) {
      state.row++;
      state.element = 0;
    }
    const d = definition ? definition[i]! : leaf.maxDefinition;
    if (d < leaf.slotDefinition) continue;
    if (d === leaf.maxDefinition) {
      rows[v] = state.row;
      elements[v++] = state.element;
    }
    state.element++;
  }
  if (v !== rows.length) throw new ParquetFormatError("a page's levels and values disagree");
  return { rows, elements };
}
