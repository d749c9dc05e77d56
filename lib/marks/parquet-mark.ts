import {
  ENCODING,
  PAGE,
  PHYSICAL,
  footerBytes,
  keyValues,
  parquetLayout,
  type Chunk,
  type Leaf,
  type ParquetLayout,
} from "./parquet-layout";
import {
  chunkPages,
  concat,
  floatRange,
  readDataPage,
  readDictionary,
  updateStatistics,
  valuePositions,
  writableCodec,
  writeDataPage,
  type FloatArray,
} from "./parquet-pages";
import { readRowKeys } from "./parquet-keys";
import { cellWord, columnWord, isChosen, rowWords, upward, type MarkKey } from "./key";
import { markable32, markable64, step32, step64 } from "./ulp";
import {
  cloneStruct,
  encodeStruct,
  field,
  intField,
  listField,
  readStruct,
  setField,
  setI64,
  structField,
  T,
  type TStruct,
  type TValue,
} from "./thrift";

/**
 * A licence's copy of a LeRobot frame parquet file: a keyed quarter of the markable cells of its
 * float feature columns moved one float step up or down (float32 stays float32), keyed by each
 * cell's episode, frame, column and element; and the licence's token for the file in the
 * key/value metadata (`das.copy`), so that even a file with nothing to mark differs per licence.
 *
 * Only the pages of marked columns are rewritten: their levels keep their bytes, their values are
 * written PLAIN (or BYTE_STREAM_SPLIT where they were), their statistics made true again. Every
 * other column chunk is copied byte for byte; the schema, the key/value metadata (pyarrow's
 * ARROW:schema, the `huggingface` features) and the row groups stay as they were. Page indexes
 * and bloom filters of marked chunks are dropped (they described the old values); the others are
 * kept. A chunk compressed with a codec Node cannot write (zstd, lz4) is written with Snappy.
 */

/** Columns that never carry the mark: LeRobot's indices and time, whatever their type. */
export const UNMARKED_COLUMNS = new Set(["index", "timestamp", "frame_index", "episode_index", "task_index"]);

export const COPY_TOKEN_KEY = "das.copy";

export type MarkReport = {
  /** The columns marked (top-level names). */
  columns: string[];
  /** Cells that could carry a mark, and cells changed. */
  markable: number;
  changed: number;
};

export async function markParquet(
  bytes: Uint8Array,
  key: MarkKey,
  token: string,
): Promise<{ bytes: Uint8Array; report: MarkReport }> {
  const layout = parquetLayout(bytes);
  const keys = await readRowKeys(layout);
  const marked = keys ? markedLeaves(layout) : [];
  const report: MarkReport = { columns: [...new Set(marked.map((l) => l.top))], markable: 0, changed: 0 };
  const words = keys && marked.length ? rowWords(key, keys.episodes, keys.frames) : new Int32Array(0);
  const columnWords = new Map(report.columns.map((name) => [name, columnWord(key, name)]));
  const rewrite = (chunk: Chunk, firstRow: number) =>
    markChunk(layout.bytes, chunk, (values, rows, elements) => {
      const cells = { words, column: columnWords.get(chunk.leaf.top)!, firstRow, rows, elements };
      const [markable, changed] =
        values instanceof Float32Array ? markFloats(values, cells) : markDoubles(values, cells);
      report.markable += markable;
      report.changed += changed;
    });
  const copy = assemble(layout, new Set(marked.map((l) => l.index)), rewrite, token);
  return { bytes: copy, report };
}

type Cells = { words: Int32Array; column: number; firstRow: number; rows: Int32Array; elements: Int32Array };

/** Moves the chosen cells of a page's float32 values; returns how many could carry the mark and how many do. */
function markFloats(values: Float32Array, cells: Cells): [number, number] {
  const bits = new Int32Array(values.buffer, values.byteOffset, values.length);
  const { words, column, firstRow, rows, elements } = cells;
  let markable = 0;
  let changed = 0;
  for (let i = 0; i < values.length; i++) {
    if (!markable32(values[i]!)) continue;
    markable++;
    const word = cellWord(words, firstRow + rows[i]!, column, elements[i]!);
    if (!isChosen(word)) continue;
    step32(values, bits, i, upward(word));
    changed++;
  }
  return [markable, changed];
}

function markDoubles(values: Float64Array, cells: Cells): [number, number] {
  const halves = new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
  const { words, column, firstRow, rows, elements } = cells;
  let markable = 0;
  let changed = 0;
  for (let i = 0; i < values.length; i++) {
    if (!markable64(values[i]!)) continue;
    markable++;
    const word = cellWord(words, firstRow + rows[i]!, column, elements[i]!);
    if (!isChosen(word)) continue;
    step64(values, halves, i, upward(word));
    changed++;
  }
  return [markable, changed];
}

/** The leaves that carry the mark: float and double columns of features, never the indices or time. */
export function markedLeaves(layout: ParquetLayout): Leaf[] {
  return layout.leaves.filter(
    (l) => (l.physical === PHYSICAL.FLOAT || l.physical === PHYSICAL.DOUBLE) && !UNMARKED_COLUMNS.has(l.top),
  );
}

type ChunkBytes = { bytes: Uint8Array; meta: (start: number) => void };

/** What a chunk's rewritten pages were: per (page type, encoding), how many. */
type Written = { codec: number; pages: Map<string, number>; uncompressed: number; length: number };

/**
 * A float chunk's pages decoded, its values handed to `change` page by page (with each value's row
 * in the chunk and element in its row), and written again; the dictionary page is dropped, since
 * no page refers to it any more.
 */
function markChunk(
  file: Uint8Array,
  chunk: Chunk,
  change: (values: FloatArray, rows: Int32Array, elements: Int32Array) => void,
): ChunkBytes {
  const codec = writableCodec(chunk.codec);
  const physical = chunk.leaf.physical;
  let dictionary: FloatArray | null = null;
  const parts: Uint8Array[] = [];
  const written: Written = { codec, pages: new Map(), uncompressed: 0, length: 0 };
  const state = { row: -1, element: 0 };
  const original = structField(chunk.meta, 12);
  const stats = original && cloneStruct(original);
  const range = { min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };
  for (const raw of chunkPages(file, chunk)) {
    if (raw.type === PAGE.DICTIONARY) {
      dictionary = readDictionary(raw, chunk.codec, physical);
      continue;
    }
    if (raw.type !== PAGE.DATA && raw.type !== PAGE.DATA_V2) continue; // an index page: unused by readers
    const page = readDataPage(raw, chunk.codec, chunk.leaf, dictionary);
    const { rows, elements } = valuePositions(page, chunk.leaf, state);
    change(page.values, rows, elements);
    const out = writeDataPage(page, codec, physical);
    parts.push(out.header, out.body);
    written.uncompressed += out.uncompressed;
    const kind = `${raw.type}:${out.encoding}`;
    written.pages.set(kind, (written.pages.get(kind) ?? 0) + 1);
    if (stats) floatRange(page.values, range);
  }
  if (stats) updateStatistics(stats, range, physical);
  const bytes = concat(parts);
  written.length = bytes.length;
  return { bytes, meta: (start) => rewriteChunkMeta(chunk, written, stats, start) };
}

/**
 * A rewritten chunk's metadata made true of its new pages at `start`: codec, encodings, sizes,
 * offsets (no dictionary page any more), statistics and encoding counts; its bloom filter and page
 * indexes, which described the old values, dropped.
 */
function rewriteChunkMeta(chunk: Chunk, written: Written, stats: TStruct | undefined, start: number): void {
  const m = chunk.meta;
  const encodings = [...new Set([...written.pages.keys()].map((kind) => Number(kind.split(":")[1])))];
  const levels = (listField(m, 2) as number[]).filter((e) => e === ENCODING.RLE || e === ENCODING.BIT_PACKED);
  setField(m, 4, T.I32, written.codec);
  setField(m, 2, T.LIST, { kind: "list", elementType: T.I32, items: [...new Set([...encodings, ...levels])] });
  setI64(m, 6, written.uncompressed);
  setI64(m, 7, written.length);
  setI64(m, 9, start);
  setField(m, 10, T.I64, undefined);
  setField(m, 11, T.I64, undefined);
  if (stats) setField(m, 12, T.STRUCT, stats);
  if (field(m, 13) !== undefined)
    setField(m, 13, T.LIST, {
      kind: "list",
      elementType: T.STRUCT,
      items: [...written.pages].map(([kind, count]) => {
        const [type, encoding] = kind.split(":").map(Number);
        return {
          kind: "struct" as const,
          fields: [
            { id: 1, type: T.I32, value: type! },
            { id: 2, type: T.I32, value: encoding! },
            { id: 3, type: T.I32, value: count },
          ],
        };
      }),
    });
  setField(m, 14, T.I64, undefined);
  setField(m, 15, T.I32, undefined);
  for (const id of [4, 5, 6, 7]) setField(chunk.chunk, id, T.I64, undefined);
}

/** Bytes laid out one after another, with where the next one starts. */
class Layout {
  readonly parts: Uint8Array[] = [];
  at = 0;
  push(bytes: Uint8Array): number {
    const start = this.at;
    this.parts.push(bytes);
    this.at += bytes.length;
    return start;
  }
}

/**
 * The copy's bytes: PAR1, every row group's chunks in order (rewritten, or copied with their
 * offsets moved), the kept bloom filters and page indexes, and the footer with the copy token.
 */
function assemble(
  layout: ParquetLayout,
  marked: Set<number>,
  rewrite: (chunk: Chunk, firstRow: number) => ChunkBytes,
  token: string,
): Uint8Array {
  const out = new Layout();
  out.push(Uint8Array.of(0x50, 0x41, 0x52, 0x31));
  const moved = placeChunks(layout, marked, rewrite, out);
  placeBeside(layout, moved, out);
  setCopyToken(layout, token);
  out.push(footerBytes(layout.footer));
  return concat(out.parts);
}

/** Every row group's chunks, marked ones rewritten; the unchanged ones, with how far they moved. */
function placeChunks(
  layout: ParquetLayout,
  marked: Set<number>,
  rewrite: (chunk: Chunk, firstRow: number) => ChunkBytes,
  out: Layout,
): { chunk: Chunk; delta: number }[] {
  const moved: { chunk: Chunk; delta: number }[] = [];
  let firstRow = 0;
  for (const group of layout.rowGroups) {
    let groupStart = -1;
    let compressed = 0;
    let uncompressed = 0;
    for (const chunk of group.chunks) {
      if (marked.has(chunk.leaf.index)) {
        const { bytes, meta } = rewrite(chunk, firstRow);
        const start = out.push(bytes);
        meta(start);
        setI64(chunk.chunk, 2, start);
        if (groupStart < 0) groupStart = start;
      } else {
        const start = out.push(layout.bytes.subarray(chunk.start, chunk.start + chunk.length));
        const delta = start - chunk.start;
        for (const id of [9, 10, 11]) {
          const offset = intField(chunk.meta, id);
          if (offset !== undefined && offset > 0) setI64(chunk.meta, id, offset + delta);
        }
        const fileOffset = intField(chunk.chunk, 2);
        if (fileOffset !== undefined && fileOffset > 0) setI64(chunk.chunk, 2, fileOffset + delta);
        moved.push({ chunk, delta });
        if (groupStart < 0) groupStart = start;
      }
      compressed += intField(chunk.meta, 7) ?? 0;
      uncompressed += intField(chunk.meta, 6) ?? 0;
    }
    if (intField(group.struct, 2) !== undefined) setI64(group.struct, 2, uncompressed);
    if (intField(group.struct, 5) !== undefined) setI64(group.struct, 5, groupStart);
    if (intField(group.struct, 6) !== undefined) setI64(group.struct, 6, compressed);
    firstRow += group.numRows;
  }
  return moved;
}

/** What lies beside the unchanged chunks (bloom filters, page indexes), moved to after the data. */
function placeBeside(layout: ParquetLayout, moved: { chunk: Chunk; delta: number }[], out: Layout): void {
  const copy = (offset: number | undefined, length: number | undefined): number | undefined =>
    offset === undefined || length === undefined || offset < 4 || offset + length > layout.bytes.length - 8
      ? undefined
      : out.push(layout.bytes.subarray(offset, offset + length));
  for (const { chunk } of moved) {
    const bloom = copy(intField(chunk.meta, 14), intField(chunk.meta, 15));
    setField(chunk.meta, 14, T.I64, bloom === undefined ? undefined : BigInt(bloom));
    if (bloom === undefined) setField(chunk.meta, 15, T.I32, undefined);
    const columnIndex = copy(intField(chunk.chunk, 6), intField(chunk.chunk, 7));
    setField(chunk.chunk, 6, T.I64, columnIndex === undefined ? undefined : BigInt(columnIndex));
    if (columnIndex === undefined) setField(chunk.chunk, 7, T.I32, undefined);
  }
  for (const { chunk, delta } of moved) {
    const offsetIndex = movedOffsetIndex(layout.bytes, chunk, delta);
    if (offsetIndex) {
      setI64(chunk.chunk, 4, out.push(offsetIndex));
      setField(chunk.chunk, 5, T.I32, offsetIndex.length);
    } else {
      setField(chunk.chunk, 4, T.I64, undefined);
      setField(chunk.chunk, 5, T.I32, undefined);
    }
  }
}

/** An unchanged chunk's offset index with its pages' offsets moved by `delta`, or null when it has none. */
function movedOffsetIndex(file: Uint8Array, chunk: Chunk, delta: number): Uint8Array | null {
  const offset = intField(chunk.chunk, 4);
  const length = intField(chunk.chunk, 5);
  if (offset === undefined || length === undefined || offset < 4 || offset + length > file.length) return null;
  const index = readStruct({ bytes: file.subarray(offset, offset + length), offset: 0 });
  for (const location of listField(index, 1) as TStruct[]) {
    const at = intField(location, 1);
    if (at !== undefined) setI64(location, 1, at + delta);
  }
  return encodeStruct(index);
}

/** Adds (or replaces) the `das.copy` entry of the footer's key/value metadata. */
function setCopyToken(layout: ParquetLayout, token: string): void {
  const encoder = new TextEncoder();
  const entry: TStruct = {
    kind: "struct",
    fields: [
      { id: 1, type: T.BINARY, value: encoder.encode(COPY_TOKEN_KEY) },
      { id: 2, type: T.BINARY, value: encoder.encode(token) },
    ],
  };
  const kept = (listField(layout.footer, 5) as TStruct[]).filter(
    (_, i) => keyValues(layout)[i]!.key !== COPY_TOKEN_KEY,
  );
  setField(layout.footer, 5, T.LIST, { kind: "list", elementType: T.STRUCT, items: [...kept, entry] as TValue[] });
}

/** The copy token a parquet file carries, if any. */
export function copyTokenOf(layout: ParquetLayout): string | null {
  return keyValues(layout).find((kv) => kv.key === COPY_TOKEN_KEY)?.value ?? null;
}
