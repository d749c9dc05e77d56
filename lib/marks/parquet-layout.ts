import {
  binaryField,
  encodeStruct,
  field,
  intField,
  listField,
  readStruct,
  structField,
  type TStruct,
  ThriftError,
} from "./thrift";
import { ParquetFormatError } from "./format-error";

/**
 * A parquet file's footer as a typed Thrift tree (so that it can be written back with only what a
 * copy changes), with the facts of its schema and column chunks that marking and reading need.
 * Field numbers are parquet.thrift's.
 */

export const PHYSICAL = { BOOLEAN: 0, INT32: 1, INT64: 2, INT96: 3, FLOAT: 4, DOUBLE: 5, BYTE_ARRAY: 6, FIXED: 7 };
export const CODEC = { UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, LZO: 3, BROTLI: 4, LZ4: 5, ZSTD: 6, LZ4_RAW: 7 };
export const ENCODING = {
  PLAIN: 0,
  PLAIN_DICTIONARY: 2,
  RLE: 3,
  BIT_PACKED: 4,
  DELTA_BINARY_PACKED: 5,
  RLE_DICTIONARY: 8,
  BYTE_STREAM_SPLIT: 9,
};
export const PAGE = { DATA: 0, INDEX: 1, DICTIONARY: 2, DATA_V2: 3 };

/** A leaf column of the schema: where its values sit in rows. */
export type Leaf = {
  /** Its position among the leaves, which is its column chunk's position in every row group. */
  index: number;
  path: string[];
  /** The top-level field it belongs to: LeRobot's feature name (`observation.state`). */
  top: string;
  physical: number;
  maxDefinition: number;
  maxRepetition: number;
  /** The definition level at which a slot of the leaf exists (holds a value or a null). */
  slotDefinition: number;
};

export type Chunk = {
  /** The ColumnChunk struct of the footer and its ColumnMetaData. */
  chunk: TStruct;
  meta: TStruct;
  leaf: Leaf;
  codec: number;
  numValues: number;
  /** Where the chunk's pages lie in the file. */
  start: number;
  length: number;
};

export type RowGroup = { struct: TStruct; numRows: number; chunks: Chunk[] };

export type ParquetLayout = {
  bytes: Uint8Array;
  footer: TStruct;
  leaves: Leaf[];
  rowGroups: RowGroup[];
  numRows: number;
};

export { ParquetFormatError };

const MAGIC = [0x50, 0x41, 0x52, 0x31]; // PAR1

/** More rows than any data file holds (a 100 MB LeRobot file holds about a million): a footer claiming more is refused. */
export const MAX_ROWS = 100_000_000;

/** Reads the footer of a whole file held in memory; refuses what is not plain (unencrypted) parquet. */
export function parquetLayout(bytes: Uint8Array): ParquetLayout {
  if (bytes.length < 12) throw new ParquetFormatError("not a parquet file: too short");
  const at = bytes.length - 4;
  if (MAGIC.some((b, i) => bytes[i] !== b) || MAGIC.some((b, i) => bytes[at + i] !== b))
    throw new ParquetFormatError("not a parquet file (or an encrypted one): no PAR1 at both ends");
  const footerLength = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 8, 4).getUint32(0, true);
  const footerStart = bytes.length - 8 - footerLength;
  if (footerStart < 4) throw new ParquetFormatError("the footer length is larger than the file");
  let footer: TStruct;
  try {
    footer = readStruct({ bytes: bytes.subarray(footerStart, bytes.length - 8), offset: 0 });
  } catch (error) {
    if (error instanceof ThriftError) throw new ParquetFormatError(`unreadable footer: ${error.message}`);
    throw error;
  }
  const leaves = schemaLeaves(listField(footer, 2) as TStruct[]);
  const numRows = intField(footer, 3) ?? 0;
  const rowGroups = (listField(footer, 4) as TStruct[]).map((struct, g): RowGroup => {
    const columns = listField(struct, 1) as TStruct[];
    if (columns.length !== leaves.length)
      throw new ParquetFormatError(`row group ${g} has ${columns.length} column chunks for ${leaves.length} columns`);
    const chunks = columns.map((chunk, c): Chunk => {
      const meta = structField(chunk, 3);
      if (!meta) throw new ParquetFormatError(`row group ${g} column ${c} has no metadata (encrypted?)`);
      if (binaryField(chunk, 1)) throw new ParquetFormatError("column chunks in other files are not supported");
      const dataOffset = intField(meta, 9) ?? -1;
      const dictionaryOffset = intField(meta, 11);
      const start =
        dictionaryOffset !== undefined && dictionaryOffset > 0 ? Math.min(dictionaryOffset, dataOffset) : dataOffset;
      const length = intField(meta, 7) ?? -1;
      if (start < 4 || length < 0 || start + length > footerStart)
        throw new ParquetFormatError(`row group ${g} places column ${leaves[c]!.path.join(".")} outside the file`);
      return {
        chunk,
        meta,
        leaf: leaves[c]!,
        codec: intField(meta, 4) ?? 0,
        numValues: intField(meta, 5) ?? 0,
        start,
        length,
      };
    });
    const groupRows = intField(struct, 3) ?? 0;
    // Every row has a slot in every column chunk: a group cannot hold more rows than a chunk holds values.
    if (groupRows < 0 || chunks.some((c) => c.numValues < groupRows))
      throw new ParquetFormatError(`row group ${g} declares ${groupRows} rows its column chunks do not hold`);
    return { struct, numRows: groupRows, chunks };
  });
  const total = rowGroups.reduce((n, g) => n + g.numRows, 0);
  if (total !== numRows || numRows > MAX_ROWS)
    throw new ParquetFormatError(
      `the footer declares ${numRows} rows (its row groups hold ${total}; at most ${MAX_ROWS})`,
    );
  return { bytes, footer, leaves, rowGroups, numRows };
}

/** The leaves of a flattened schema (each element followed by its num_children subtrees). */
function schemaLeaves(schema: TStruct[]): Leaf[] {
  const leaves: Leaf[] = [];
  let next = 1;
  const walk = (path: string[], definition: number, repetition: number) => {
    const element = schema[next++];
    if (!element) throw new ParquetFormatError("the schema ends inside a group");
    const name = new TextDecoder().decode(binaryField(element, 4) ?? new Uint8Array());
    const kind = intField(element, 3) ?? 0; // 0 required, 1 optional, 2 repeated
    const d = definition + (kind === 0 ? 0 : 1);
    const r = repetition + (kind === 2 ? 1 : 0);
    const children = intField(element, 5) ?? 0;
    if (children > 0) {
      for (let i = 0; i < children; i++) walk([...path, name], d, r);
      return;
    }
    leaves.push({
      index: leaves.length,
      path: [...path, name],
      top: path[0] ?? name,
      physical: intField(element, 1) ?? -1,
      maxDefinition: d,
      maxRepetition: r,
      slotDefinition: kind === 1 ? d - 1 : d,
    });
  };
  const root = schema[0];
  if (!root) throw new ParquetFormatError("the schema is empty");
  const top = intField(root, 5) ?? 0;
  for (let i = 0; i < top; i++) walk([], 0, 0);
  if (next !== schema.length) throw new ParquetFormatError("the schema has elements outside its tree");
  return leaves;
}

/** The file's key/value metadata. */
export function keyValues(layout: ParquetLayout): { key: string; value: string | undefined }[] {
  const decode = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));
  return (listField(layout.footer, 5) as TStruct[]).map((kv) => ({
    key: decode(binaryField(kv, 1)) ?? "",
    value: decode(binaryField(kv, 2)),
  }));
}

/** The encoded footer followed by its length and PAR1: the end of a file. */
export function footerBytes(footer: TStruct): Uint8Array {
  const encoded = encodeStruct(footer);
  const out = new Uint8Array(encoded.length + 8);
  out.set(encoded, 0);
  new DataView(out.buffer).setUint32(encoded.length, encoded.length, true);
  out.set(MAGIC, encoded.length + 4);
  return out;
}

export const hasField = (struct: TStruct, id: number) => field(struct, id) !== undefined;
