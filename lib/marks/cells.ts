import { PAGE, PHYSICAL, parquetLayout, type ParquetLayout } from "./parquet-layout";
import { chunkPages, readDataPage, readDictionary, valuePositions, type FloatArray } from "./parquet-pages";
import { readRowKeys } from "./parquet-keys";
import { UNMARKED_COLUMNS } from "./parquet-mark";

/**
 * A frame table's float cells, however the file came: each row's episode and frame index, and per
 * column its values with the row and element of each. What a trace compares, a leaked file's
 * against the original's. A leaked parquet file may have been re-saved by anything (pyarrow,
 * pandas, polars) or cast to float64; a CSV may hold a vector as one cell ("[0.1, 0.2]", or numpy's
 * "[0.1 0.2]") or one column per element (`action_0`, `action.0`, `action[0]`).
 */
export type FloatColumn = {
  values: Float64Array;
  rows: Int32Array;
  elements: Int32Array;
  /** Stored as float32 (the original's type decides what a step is). */
  float32: boolean;
};

export type FrameCells = {
  rows: number;
  episodes: Float64Array;
  frames: Float64Array;
  columns: Map<string, FloatColumn>;
};

export class CellsError extends Error {}

/** The float cells of a parquet frame table (every float or double column but the indices and time). */
export async function parquetCells(bytes: Uint8Array): Promise<FrameCells> {
  const layout = parquetLayout(bytes);
  const keys = await readRowKeys(layout);
  if (!keys) throw new CellsError("no episode_index and frame_index columns: not a LeRobot frame table");
  const columns = new Map<string, FloatColumn>();
  for (const leaf of layout.leaves) {
    if (leaf.physical !== PHYSICAL.FLOAT && leaf.physical !== PHYSICAL.DOUBLE) continue;
    if (UNMARKED_COLUMNS.has(leaf.top) || columns.has(leaf.top)) continue;
    columns.set(leaf.top, readFloatLeaf(layout, leaf.index));
  }
  return { rows: layout.numRows, ...keys, columns };
}

function readFloatLeaf(layout: ParquetLayout, index: number): FloatColumn {
  const values: FloatArray[] = [];
  const rows: Int32Array[] = [];
  const elements: Int32Array[] = [];
  let firstRow = 0;
  let float32 = true;
  for (const group of layout.rowGroups) {
    const chunk = group.chunks[index]!;
    float32 = chunk.leaf.physical === PHYSICAL.FLOAT;
    let dictionary: FloatArray | null = null;
    const state = { row: -1, element: 0 };
    for (const raw of chunkPages(layout.bytes, chunk)) {
      if (raw.type === PAGE.DICTIONARY) dictionary = readDictionary(raw, chunk.codec, chunk.leaf.physical);
      if (raw.type !== PAGE.DATA && raw.type !== PAGE.DATA_V2) continue;
      const page = readDataPage(raw, chunk.codec, chunk.leaf, dictionary);
      const at = valuePositions(page, chunk.leaf, state);
      for (let i = 0; i < at.rows.length; i++) at.rows[i]! += firstRow;
      values.push(page.values);
      rows.push(at.rows);
      elements.push(at.elements);
    }
    firstRow += group.numRows;
  }
  return { values: joinFloats(values), rows: joinInts(rows), elements: joinInts(elements), float32 };
}

function joinFloats(parts: FloatArray[]): Float64Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Float64Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function joinInts(parts: Int32Array[]): Int32Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Int32Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** RFC 4180 records (quoted fields may hold separators, quotes and line breaks). */
export function* csvRecords(text: string): Generator<string[]> {
  let field = "";
  let record: string[] = [];
  let quoted = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === "") quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      record.push(field);
      yield record;
      record = [];
      field = "";
    } else field += c;
    i++;
  }
  if (field !== "" || record.length) {
    record.push(field);
    yield record;
  }
}

const PER_ELEMENT = /^(.+?)(?:[._/-](\d+)|\[(\d+)\])$/;

/**
 * The float cells of a CSV frame table, for the columns `names` (the original's float columns):
 * a column of that name (a number, or a vector in brackets), or one column per element.
 */
export function csvCells(text: string, names: Iterable<string>): FrameCells {
  const wanted = new Set(names);
  const records = csvRecords(text);
  const header = records.next().value;
  if (!header) throw new CellsError("an empty CSV file");
  const episodeAt = header.indexOf("episode_index");
  const frameAt = header.indexOf("frame_index");
  if (episodeAt < 0 || frameAt < 0) throw new CellsError("no episode_index and frame_index columns");
  // Which column holds what: a whole column (element from the cell), or one element of one.
  const sources: { at: number; name: string; element: number | null }[] = [];
  for (const [at, title] of header.entries()) {
    if (wanted.has(title)) sources.push({ at, name: title, element: null });
    else {
      const m = PER_ELEMENT.exec(title);
      if (m && wanted.has(m[1]!)) sources.push({ at, name: m[1]!, element: Number(m[2] ?? m[3]) });
    }
  }
  const episodes: number[] = [];
  const frames: number[] = [];
  const built = new Map<string, { values: number[]; rows: number[]; elements: number[] }>();
  for (const s of sources) built.set(s.name, { values: [], rows: [], elements: [] });
  let row = 0;
  for (const record of records) {
    if (record.length === 1 && record[0] === "") continue;
    episodes.push(wholeNumber(record[episodeAt]));
    frames.push(wholeNumber(record[frameAt]));
    for (const s of sources) {
      const column = built.get(s.name)!;
      const cell = record[s.at] ?? "";
      const numbers = s.element === null ? numbersOf(cell) : [Number(cell.trim() || Number.NaN)];
      for (const [j, value] of numbers.entries()) {
        if (Number.isNaN(value)) continue;
        column.values.push(value);
        column.rows.push(row);
        column.elements.push(s.element ?? j);
      }
    }
    row++;
  }
  const columns = new Map<string, FloatColumn>();
  for (const [name, c] of built) {
    // Per-element columns come element by element: put each row's elements back together.
    const order = c.values.map((_, i) => i).sort((a, b) => c.rows[a]! - c.rows[b]! || c.elements[a]! - c.elements[b]!);
    columns.set(name, {
      values: Float64Array.from(order, (i) => c.values[i]!),
      rows: Int32Array.from(order, (i) => c.rows[i]!),
      elements: Int32Array.from(order, (i) => c.elements[i]!),
      float32: false,
    });
  }
  return { rows: row, episodes: Float64Array.from(episodes), frames: Float64Array.from(frames), columns };
}

function wholeNumber(text: string | undefined): number {
  const n = Number((text ?? "").trim());
  return Number.isSafeInteger(n) && n >= 0 ? n : Number.NaN;
}

/** A cell's numbers: one, or a bracketed vector separated by commas or spaces (numpy's repr). */
function numbersOf(cell: string): number[] {
  const text = cell.trim();
  if (!text.startsWith("[")) return [text ? Number(text) : Number.NaN];
  return text
    .replace(/^\[|\]$/g, "")
    .split(/[\s,]+/)
    .filter((t) => t !== "")
    .map(Number);
}

/** Several files' cells as one table (the original data files a leaked table's rows come from). */
export function mergeCells(parts: FrameCells[]): FrameCells {
  if (parts.length === 1) return parts[0]!;
  const rows = parts.reduce((n, p) => n + p.rows, 0);
  const episodes = new Float64Array(rows);
  const frames = new Float64Array(rows);
  const gathered = new Map<
    string,
    { values: Float64Array[]; rows: Int32Array[]; elements: Int32Array[]; float32: boolean }
  >();
  let first = 0;
  for (const part of parts) {
    episodes.set(part.episodes, first);
    frames.set(part.frames, first);
    for (const [name, column] of part.columns) {
      const into = gathered.get(name) ?? { values: [], rows: [], elements: [], float32: column.float32 };
      gathered.set(name, into);
      into.values.push(column.values);
      into.rows.push(column.rows.map((r) => r + first));
      into.elements.push(column.elements);
    }
    first += part.rows;
  }
  const columns = new Map<string, FloatColumn>();
  for (const [name, c] of gathered)
    columns.set(name, {
      values: joinFloats(c.values),
      rows: joinInts(c.rows),
      elements: joinInts(c.elements),
      float32: c.float32,
    });
  return { rows, episodes, frames, columns };
}
