import { rename, rm } from "node:fs/promises";
import {
  asyncBufferFromFile,
  parquetMetadataAsync,
  parquetReadObjects,
  parquetSchema,
  type AsyncBuffer,
  type Compressors,
  type FileMetaData,
  type KeyValue,
  type SchemaElement,
} from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { decompress as decompressZstd } from "fzstd";
import { fileWriter, ParquetWriter, parquetWriteFile } from "hyparquet-writer";

/**
 * Parquet through hyparquet (pure JavaScript). Files are read a bounded number of rows at a time
 * and only the columns asked for (parquetBatches), so a v3 data file of 100,000 frames never sits
 * in memory whole, whether LeRobot wrote it with one row group per episode or a conversion wrote
 * it as one.
 *
 * hyparquet itself decodes only Snappy and uncompressed pages; pyarrow and HF `datasets` write
 * Snappy by default, but a dataset saved with `compression="zstd"` (or gzip, brotli, lz4) is as
 * valid, so every read passes hyparquet-compressors' decoders.
 */

export type ParquetFile = {
  path: string;
  metadata: FileMetaData;
  columns: string[];
  /** Where the bytes are read from; the file at `path` when left out (a test can watch the reads). */
  source?: AsyncBuffer;
};

/**
 * Opens a parquet file and checks its footer against the file (checkFooter): a footer is
 * whatever the file's writer says, and a reader that believed 10^15 rows would read on for days.
 */
export async function openParquet(path: string): Promise<ParquetFile> {
  const file = await asyncBufferFromFile(path);
  const metadata = await parquetMetadataAsync(file);
  checkFooter(path, metadata, file.byteLength);
  return { path, metadata, columns: parquetSchema(metadata).children.map((child) => child.element.name) };
}

/**
 * Refuses a footer whose row counts the column chunks cannot hold. Every row has at least one
 * value in every column (a null and an empty list take one too), so no row group has more rows
 * than any of its column chunks has values; the groups' rows add up to the file's; and every
 * chunk lies inside the file. A footer that also forges the value counts is caught while the rows
 * are read: a row the chunks do not hold comes out without a value (parquetBatches).
 */
function checkFooter(path: string, metadata: FileMetaData, fileBytes: number): void {
  const refuse = (why: string) => {
    throw new Error(`${path}: the parquet footer ${why}`);
  };
  let rows = 0n;
  for (const [g, group] of metadata.row_groups.entries()) {
    const declared = BigInt(group.num_rows);
    if (declared < 0n) refuse(`declares ${declared} rows in row group ${g}`);
    rows += declared;
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      if (!meta) continue;
      const column = meta.path_in_schema.join(".");
      if (BigInt(meta.num_values) < declared)
        refuse(
          `declares ${declared} rows in row group ${g}, but its column ${column} holds only ${meta.num_values} values`,
        );
      const start = BigInt(meta.dictionary_page_offset ?? meta.data_page_offset);
      if (start < 0n || start + BigInt(meta.total_compressed_size) > BigInt(fileBytes))
        refuse(`places column ${column} of row group ${g} beyond the end of the file (${fileBytes} bytes)`);
    }
  }
  if (rows !== BigInt(metadata.num_rows))
    refuse(`declares ${metadata.num_rows} rows, but its row groups add up to ${rows}`);
  if (rows > BigInt(Number.MAX_SAFE_INTEGER)) refuse(`declares ${rows} rows, more than any file holds`);
}

/** The most rows one read decodes: small row groups are read together up to it, a larger one in pages of it. */
export const BATCH_ROWS = 10_000;

/**
 * The most bytes one read may decompress: a page of a few hundred bytes can inflate to gigabytes
 * (a compressed run of one byte), so reads are sized from the footer to stay below it and a read
 * whose pages decompress to more is stopped before the page that crosses it.
 */
export const BATCH_BYTES = 256 * 1024 * 1024;

/**
 * The rows of a parquet file in batches of at most `rows` rows (default BATCH_ROWS), with the row
 * number (0-based, in the file) of each batch's first row. Only `columns` are decoded; a column
 * the file lacks is left out.
 *
 * Small row groups (LeRobot writes one per episode) are read together. A larger one is read a
 * range of rows at a time: a converted v3.0 dataset (LeRobot's v2.1 → v3.0 script concatenates
 * the episodes and writes each data file with `to_parquet`) has one row group per file, 100 MB or
 * more. For each range hyparquet fetches only the requested columns' bytes of the group (only the
 * pages of the range when the file has an offset index, which pyarrow writes only on request),
 * skips the pages of a flat column before the range without decompressing them and stops after
 * it. A nested column (a list, such as LeRobot's language columns) is decoded up to the end of
 * its chunk on each read: hyparquet cannot tell where its rows start without decoding them.
 */
export async function* parquetBatches(
  parquet: ParquetFile,
  columns?: string[],
  options: { rows?: number; bytes?: number; signal?: AbortSignal } = {},
): AsyncGenerator<{ first: number; rows: Record<string, unknown>[] }> {
  const file = parquet.source ?? (await asyncBufferFromFile(parquet.path));
  const wanted = columns?.filter((c) => parquet.columns.includes(c));
  const names = wanted ?? parquet.columns;
  const limit = options.rows ?? BATCH_ROWS;
  const budget = options.bytes ?? BATCH_BYTES;
  const { signal } = options;
  const read = async (rowStart: number, rowEnd: number) => {
    signal?.throwIfAborted();
    const rows = await parquetReadObjects({
      file,
      metadata: parquet.metadata,
      columns: wanted,
      rowStart,
      rowEnd,
      compressors: budgeted(budget, () => `rows ${rowStart + 1} to ${rowEnd}`, parquet.path),
      useOffsetIndex: true,
    });
    // hyparquet pads a range past the values the chunks hold with rows without values: the footer
    // declared rows that are not there. A null is null, never undefined.
    for (const [i, row] of rows.entries())
      for (const name of names)
        if (row[name] === undefined)
          throw new Error(
            `${parquet.path}: the parquet footer declares more rows than the column chunks hold (column ${name} has no value for row ${rowStart + i + 1})`,
          );
    return rows;
  };
  // The bytes one row of a group decodes to, by the footer, in the columns read.
  const rowBytes = (group: FileMetaData["row_groups"][number]) => {
    let bytes = 0;
    for (const chunk of group.columns)
      if (chunk.meta_data && names.includes(chunk.meta_data.path_in_schema[0]!))
        bytes += Number(chunk.meta_data.total_uncompressed_size);
    return bytes / Math.max(1, Number(group.num_rows));
  };
  let first = 0;
  let end = 0;
  let gathered = 0;
  const groups = parquet.metadata.row_groups;
  for (const [i, group] of groups.entries()) {
    signal?.throwIfAborted();
    const rows = Number(group.num_rows);
    const perRow = rowBytes(group);
    // As many rows as fit in both limits, and at least one (a row larger than the budget is refused while it is read).
    const fit = Math.max(1, Math.min(limit, Math.floor(budget / Math.max(1, perRow))));
    if (rows > fit) {
      // What is gathered so far first, then the large group in ranges of `fit` rows.
      if (end > first) yield { first, rows: await read(first, end) };
      for (let start = end; start < end + rows; start += fit)
        yield { first: start, rows: await read(start, Math.min(start + fit, end + rows)) };
      end += rows;
      first = end;
      gathered = 0;
      continue;
    }
    end += rows;
    gathered += rows * perRow;
    const next = groups[i + 1];
    if (
      next &&
      end - first + Number(next.num_rows) <= limit &&
      gathered + Number(next.num_rows) * rowBytes(next) <= budget
    )
      continue;
    if (end > first) yield { first, rows: await read(first, end) };
    first = end;
    gathered = 0;
  }
}

/**
 * The decoders, each told first how much its page says it will decompress to and refusing once a
 * read's pages add up to more than `budget`. Every decoder writes into a buffer of the page's
 * stated size, so a page cannot decompress to more than it says: zstd alone would otherwise
 * decode a whole frame before the length is compared.
 */
function budgeted(budget: number, what: () => string, path: string): Compressors {
  let used = 0;
  const wrap =
    (decode: (input: Uint8Array, length: number) => Uint8Array) =>
    (input: Uint8Array, length: number): Uint8Array => {
      used += length;
      if (used > budget)
        throw new Error(
          `${path}: ${what()} decompress to more than ${budget.toLocaleString("en")} bytes, the most one read may hold`,
        );
      return decode(input, length);
    };
  return {
    SNAPPY: wrap(compressors.SNAPPY!),
    GZIP: wrap(compressors.GZIP!),
    BROTLI: wrap(compressors.BROTLI!),
    ZSTD: wrap((input, length) => decompressZstd(input, new Uint8Array(length))),
    LZ4: wrap(compressors.LZ4!),
    LZ4_RAW: wrap(compressors.LZ4_RAW!),
  };
}

/**
 * Writes rows with a given schema and key/value metadata, e.g. the schema of the file they were
 * read from, so that a filtered copy keeps every column type (and pyarrow's ARROW:schema and the
 * `huggingface` features entry) as it was. Written beside the target and renamed over it, so a
 * reader never sees half a file.
 */
export async function writeParquet(
  path: string,
  rows: Record<string, unknown>[],
  schema: SchemaElement[],
  kvMetadata?: KeyValue[],
): Promise<void> {
  const top = topLevelNames(schema);
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    parquetWriteFile({
      filename: temporary,
      schema,
      kvMetadata,
      columnData: top.map((name) => ({ name, data: rows.map((row) => row[name] ?? null) })),
    });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * Copies a parquet file to `target` one batch at a time (never the whole file in memory), with
 * `transform` applied to each batch's rows: it returns one entry per row, the row to write or null
 * to leave it out. The schema, the key/value metadata and the row groups (LeRobot's one per
 * episode) stay as they were, each group with the rows it keeps (a group left without rows is not
 * written), except that a group larger than a batch (a converted dataset's one per file) is
 * written as groups of a batch each: readers of the format, LeRobot's among them, do not depend on
 * where groups end. The copy is written whole before this returns; it is the caller's to rename
 * into place, so that a set of files can be swapped in together once every one of them is written.
 */
export async function rewriteParquet(
  source: ParquetFile,
  target: string,
  transform: (rows: Record<string, unknown>[], first: number) => (Record<string, unknown> | null)[],
): Promise<void> {
  const { schema, key_value_metadata: kvMetadata, row_groups } = source.metadata;
  const top = topLevelNames(schema);
  // Where each row group starts in the file, and where the last one ends.
  const starts = [0];
  for (const group of row_groups) starts.push(starts.at(-1)! + Number(group.num_rows));
  // The first row group the next batch can hold rows of: batches come in order.
  let group = 0;
  try {
    const writer = new ParquetWriter({ writer: fileWriter(target), schema, kvMetadata });
    for await (const { first, rows } of parquetBatches(source)) {
      const out = transform(rows, first);
      if (out.length !== rows.length) throw new Error(`${source.path}: a rewrite gives each row or null in its place`);
      // The batch's rows by the row group they were read from (whole groups, or a page of one), less the rows left out.
      const sizes: number[] = [];
      const end = first + rows.length;
      while (group < row_groups.length && starts[group + 1]! <= first) group++;
      for (let g = group; g < row_groups.length && starts[g]! < end; g++) {
        const from = Math.max(starts[g]!, first);
        const to = Math.min(starts[g + 1]!, end);
        if (to <= from) continue;
        const kept = out.slice(from - first, to - first).filter((row) => row !== null).length;
        if (kept > 0) sizes.push(kept);
      }
      const kept = out.filter((row) => row !== null);
      if (kept.length)
        await writer.write({
          columnData: top.map((name) => ({ name, data: kept.map((row) => row[name] ?? null) })),
          rowGroupSize: sizes,
        });
    }
    await writer.finish();
  } catch (error) {
    await rm(target, { force: true });
    throw error;
  }
}

function topLevelNames(schema: SchemaElement[]): string[] {
  const names: string[] = [];
  // Walk the flattened tree: each element is followed by its num_children subtrees.
  let i = 1;
  const skip = (index: number): number => {
    let next = index + 1;
    for (let c = 0; c < (schema[index]!.num_children ?? 0); c++) next = skip(next);
    return next;
  };
  for (let c = 0; c < (schema[0]?.num_children ?? 0); c++) {
    names.push(schema[i]!.name);
    i = skip(i);
  }
  return names;
}
