import { parquetMetadata, parquetRead } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { decompress as decompressZstd } from "fzstd";
import { ENCODING, PAGE, PHYSICAL, ParquetFormatError, type Chunk, type ParquetLayout } from "./parquet-layout";
import { bitWidth, chunkPages, decodeHybrid, decodeIndices, decompress, pageValues } from "./parquet-pages";
import { intField, structField } from "./thrift";

/**
 * The episode and frame index of every row of a parquet file (LeRobot's `episode_index` and
 * `frame_index`), the key of its marked cells; null when the file lacks either column. A row
 * without one (a null) has NaN there and carries no mark.
 *
 * PLAIN and dictionary pages of integer (or float) columns, what pyarrow, pandas and hyparquet
 * write, are decoded here; any other encoding through hyparquet, which knows them all but
 * assembles rows on the way (a third of the time of marking a 100 MB file).
 */
export type RowKeys = { episodes: Float64Array; frames: Float64Array };

export const KEY_COLUMNS = ["episode_index", "frame_index"] as const;

export async function readRowKeys(layout: ParquetLayout): Promise<RowKeys | null> {
  const leaves = KEY_COLUMNS.map((name) => layout.leaves.find((l) => l.path.length === 1 && l.path[0] === name));
  if (leaves.some((l) => !l)) return null;
  const out = { episodes: new Float64Array(layout.numRows), frames: new Float64Array(layout.numRows) };
  try {
    for (const [k, leaf] of leaves.entries()) {
      const target = k === 0 ? out.episodes : out.frames;
      let row = 0;
      for (const group of layout.rowGroups) {
        const chunk = group.chunks[leaf!.index]!;
        row += readFlatNumbers(layout.bytes, chunk, target, row, group.numRows);
      }
    }
  } catch (error) {
    if (!(error instanceof UnsupportedEncoding)) throw error;
    try {
      await readWithHyparquet(layout.bytes, out);
    } catch (failure) {
      throw new ParquetFormatError(`episode_index and frame_index cannot be read: ${(failure as Error).message}`);
    }
  }
  for (const target of [out.episodes, out.frames])
    for (let i = 0; i < target.length; i++) {
      const v = target[i]!;
      if (!Number.isNaN(v) && (!Number.isSafeInteger(v) || v < 0)) target[i] = Number.NaN;
    }
  return out;
}

class UnsupportedEncoding extends Error {}

/** A flat numeric chunk's values into `target` from `at`; returns the rows read. */
function readFlatNumbers(file: Uint8Array, chunk: Chunk, target: Float64Array, at: number, rows: number): number {
  const { physical, maxDefinition } = chunk.leaf;
  const width = physical === PHYSICAL.INT32 || physical === PHYSICAL.FLOAT ? 4 : 8;
  if (![PHYSICAL.INT32, PHYSICAL.INT64, PHYSICAL.FLOAT, PHYSICAL.DOUBLE].includes(physical))
    throw new UnsupportedEncoding();
  const decode = (bytes: Uint8Array, count: number): Float64Array => {
    const copy = new Uint8Array(count * width);
    copy.set(bytes.subarray(0, count * width));
    const values = new Float64Array(count);
    const source =
      physical === PHYSICAL.INT32
        ? new Int32Array(copy.buffer)
        : physical === PHYSICAL.INT64
          ? new BigInt64Array(copy.buffer)
          : physical === PHYSICAL.FLOAT
            ? new Float32Array(copy.buffer)
            : new Float64Array(copy.buffer);
    for (let i = 0; i < count; i++) values[i] = Number(source[i]!);
    return values;
  };
  let dictionary: Float64Array | null = null;
  let row = 0;
  for (const raw of chunkPages(file, chunk)) {
    const uncompressed = intField(raw.header, 2) ?? -1;
    if (raw.type === PAGE.DICTIONARY) {
      const body = decompress(chunk.codec, raw.body, uncompressed);
      dictionary = decode(body, Math.floor(body.length / width));
      continue;
    }
    if (raw.type !== PAGE.DATA && raw.type !== PAGE.DATA_V2) continue;
    const v2 = raw.type === PAGE.DATA_V2;
    const header = structField(raw.header, v2 ? 8 : 5)!;
    const slots = pageValues(intField(header, 1) ?? 0);
    const encoding = intField(header, v2 ? 4 : 2) ?? -1;
    let body: Uint8Array;
    let definition: Uint8Array | null = null;
    if (v2) {
      const rep = intField(header, 6) ?? 0;
      const def = intField(header, 5) ?? 0;
      if (maxDefinition > 0)
        decodeHybrid(raw.body, rep, rep + def, bitWidth(maxDefinition), (definition = new Uint8Array(slots)));
      const compressed = (header.fields.find((f) => f.id === 7)?.value ?? true) !== false;
      const rest = raw.body.subarray(rep + def);
      body = compressed ? decompress(chunk.codec, rest, uncompressed - rep - def) : rest;
    } else {
      const page = decompress(chunk.codec, raw.body, uncompressed);
      let pos = 0;
      if (maxDefinition > 0) {
        if (page.length < 4) throw new ParquetFormatError("a page's levels run past its end");
        const length = new DataView(page.buffer, page.byteOffset).getUint32(0, true);
        decodeHybrid(page, 4, 4 + length, bitWidth(maxDefinition), (definition = new Uint8Array(slots)));
        pos = 4 + length;
      }
      body = page.subarray(pos);
    }
    let present = slots;
    if (definition) {
      present = 0;
      for (let i = 0; i < slots; i++) if (definition[i] === maxDefinition) present++;
    }
    let values: Float64Array;
    if (encoding === ENCODING.PLAIN) values = decode(body, present);
    else if ((encoding === ENCODING.RLE_DICTIONARY || encoding === ENCODING.PLAIN_DICTIONARY) && dictionary) {
      values = new Float64Array(present);
      if (present) {
        const indices = decodeIndices(body, 1, body.length, body[0]!, present);
        for (let i = 0; i < present; i++) values[i] = dictionary[indices[i]!] ?? Number.NaN;
      }
    } else throw new UnsupportedEncoding();
    if (row + slots > rows) throw new Error("a column chunk holds more values than its row group has rows");
    let v = 0;
    for (let i = 0; i < slots; i++)
      target[at + row + i] = !definition || definition[i] === maxDefinition ? values[v++]! : Number.NaN;
    row += slots;
  }
  if (row !== rows) throw new Error(`a column chunk holds ${row} values for ${rows} rows`);
  return rows;
}

async function readWithHyparquet(bytes: Uint8Array, out: RowKeys): Promise<void> {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  await parquetRead({
    file: buffer,
    metadata: parquetMetadata(buffer),
    columns: [...KEY_COLUMNS],
    compressors: { ...compressors, ZSTD: (input, length) => decompressZstd(input, new Uint8Array(length)) },
    onChunk: ({ columnName, columnData, rowStart }) => {
      const target = columnName === "episode_index" ? out.episodes : out.frames;
      for (let i = 0; i < columnData.length; i++) {
        const value = columnData[i];
        target[rowStart + i] = value === null || value === undefined ? Number.NaN : Number(value);
      }
    },
  });
}
