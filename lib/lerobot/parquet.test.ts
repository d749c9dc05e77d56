import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { asyncBufferFromFile, type AsyncBuffer, type SchemaElement } from "hyparquet";
import { parquetWriteFile } from "hyparquet-writer";
import { afterAll, describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { forgeParquetRowCount } from "@/lib/testing/lerobot-fixtures";
import { BATCH_ROWS, openParquet, parquetBatches, rewriteParquet, type ParquetFile } from "./parquet";

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

/** The byte ranges read from a file, as [start, end). */
function watched(file: AsyncBuffer, reads: [number, number][]): AsyncBuffer {
  return {
    byteLength: file.byteLength,
    slice(start, end) {
      reads.push([start, end ?? file.byteLength]);
      return file.slice(start, end);
    },
  };
}

const ROWS = 24_000;
const PAGE_ROWS = 2_000;
const IMAGE_BYTES = 200;

/**
 * A data file as LeRobot's v2.1 → v3.0 conversion leaves it: one row group for the whole file,
 * pages of about 2,000 rows, an image column that is most of the bytes, a list column (as the
 * language columns are), and, as pyarrow writes by default, no offset index unless asked.
 */
function convertedDataFile(offsetIndex: boolean): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "das-parquet-"));
  roots.push(root);
  const file = path.join(root, "file-000.parquet");
  const schema: SchemaElement[] = [
    { name: "schema", num_children: 4 },
    { name: "episode_index", type: "INT64", repetition_type: "OPTIONAL" },
    { name: "timestamp", type: "FLOAT", repetition_type: "OPTIONAL" },
    { name: "labels", repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
    { name: "list", repetition_type: "REPEATED", num_children: 1 },
    { name: "element", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" },
    { name: "observation.images.top", type: "BYTE_ARRAY", repetition_type: "OPTIONAL" },
  ];
  parquetWriteFile({
    filename: file,
    schema,
    rowGroupSize: ROWS,
    pageSize: PAGE_ROWS * 8,
    columnData: [
      { name: "episode_index", data: Array.from({ length: ROWS }, (_, i) => BigInt(Math.floor(i / 300))), offsetIndex },
      { name: "timestamp", data: Array.from({ length: ROWS }, (_, i) => Math.fround((i % 300) / 30)), offsetIndex },
      {
        name: "labels",
        data: Array.from({ length: ROWS }, (_, i) => (i % 7 ? [] : [`label ${i}`, "grasp"])),
        offsetIndex,
      },
      {
        name: "observation.images.top",
        data: Array.from({ length: ROWS }, () => new Uint8Array(randomBytes(IMAGE_BYTES))),
        offsetIndex,
      },
    ],
  });
  return file;
}

/** The byte range of each column chunk in the file's one row group. */
function chunkRanges(parquet: ParquetFile): Map<string, [number, number]> {
  return new Map(
    parquet.metadata.row_groups[0]!.columns.map((c) => {
      const start = Number(c.meta_data!.dictionary_page_offset || c.meta_data!.data_page_offset);
      return [c.meta_data!.path_in_schema[0]!, [start, start + Number(c.meta_data!.total_compressed_size)]];
    }),
  );
}

describe("parquetBatches on a file of one large row group", () => {
  it.each([false, true])(
    "reads the columns asked for in pages of rows, never the others' bytes (offset index: %s)",
    async (offsetIndex) => {
      const file = convertedDataFile(offsetIndex);
      const reads: [number, number][] = [];
      const parquet = { ...(await openParquet(file)), source: watched(await asyncBufferFromFile(file), reads) };
      expect(parquet.metadata.row_groups).toHaveLength(1);
      const chunks = chunkRanges(parquet);
      const image = chunks.get("observation.images.top")!;
      // Random bytes do not compress: the image column is nearly all of the file, as in a real one.
      expect(image[1] - image[0]).toBeGreaterThan(ROWS * IMAGE_BYTES);

      const batches: { first: number; size: number }[] = [];
      const episodes: number[] = [];
      const labels: string[] = [];
      for await (const { first, rows } of parquetBatches(parquet, ["episode_index", "timestamp", "labels"], {
        rows: 5_000,
      })) {
        batches.push({ first, size: rows.length });
        for (const row of rows) {
          episodes.push(Number(row.episode_index));
          labels.push(...(row.labels as string[]));
          expect(Object.keys(row).sort()).toEqual(["episode_index", "labels", "timestamp"]);
        }
      }
      // Pages of at most 5,000 rows, in order, every row once, the list column's rows in their place.
      expect(batches).toEqual(
        [0, 5_000, 10_000, 15_000, 20_000].map((first) => ({ first, size: Math.min(5_000, ROWS - first) })),
      );
      expect(episodes).toEqual(Array.from({ length: ROWS }, (_, i) => Math.floor(i / 300)));
      expect(labels.filter((l) => l !== "grasp")).toEqual(
        Array.from({ length: ROWS }, (_, i) => i)
          .filter((i) => i % 7 === 0)
          .map((i) => `label ${i}`),
      );

      // Not one byte of the image column is read.
      expect(reads.filter(([start, end]) => start < image[1] && end > image[0])).toEqual([]);
      const wantedBytes = ["episode_index", "timestamp", "labels"].reduce(
        (n, c) => n + chunks.get(c)![1] - chunks.get(c)![0],
        0,
      );
      const dataReads = reads.filter(([start]) => start < image[0]);
      if (offsetIndex) {
        // Each read is some pages of one column (or its dictionary), never a whole chunk.
        for (const [start, end] of dataReads) {
          const [, chunk] = [...chunks].find(([, [from, to]]) => start >= from && start < to)!;
          expect(end - start).toBeLessThan(chunk[1] - chunk[0]);
        }
      } else {
        // Without an offset index each read fetches the columns' chunks, and only those.
        for (const [start, end] of dataReads) expect(end - start).toBeLessThanOrEqual(wantedBytes);
      }
    },
  );

  it("rewrites a file with one large row group a page at a time, every row kept or dropped as asked, and in order", async () => {
    const parquet = await openParquet(convertedDataFile(false));
    expect(parquet.metadata.row_groups).toHaveLength(1);
    const root = mkdtempSync(path.join(os.tmpdir(), "das-rewrite-"));
    roots.push(root);
    const target = path.join(root, "out.parquet");
    const batches: number[] = [];
    // Every third row dropped, the rest with episode_index doubled.
    await rewriteParquet(parquet, target, (rows, first) => {
      batches.push(rows.length);
      return rows.map((row, i) =>
        (first + i) % 3 === 0 ? null : { ...row, episode_index: BigInt(row.episode_index as bigint) * 2n },
      );
    });
    expect(Math.max(...batches)).toBeLessThanOrEqual(BATCH_ROWS);
    const before: number[] = [];
    for await (const { rows } of parquetBatches(parquet, ["episode_index"]))
      before.push(...rows.map((r) => Number(r.episode_index)));
    const rewritten = await openParquet(target);
    const after: number[] = [];
    for await (const { rows } of parquetBatches(rewritten, ["episode_index"]))
      after.push(...rows.map((r) => Number(r.episode_index)));
    expect(after).toEqual(before.filter((_, i) => i % 3 !== 0).map((e) => e * 2));
    expect(rewritten.columns).toEqual(parquet.columns);
    expect(rewritten.metadata.row_groups.every((g) => Number(g.num_rows) <= BATCH_ROWS)).toBe(true);
  });

  /** Three rows of episode_index and a GZIP column of `bytes` bytes a row: kilobytes on disk. */
  function smallFile(bytes = 16): string {
    const root = mkdtempSync(path.join(os.tmpdir(), "das-parquet-"));
    roots.push(root);
    const file = path.join(root, "file.parquet");
    parquetWriteFile({
      filename: file,
      columnData: [
        { name: "episode_index", data: [0n, 1n, 2n], type: "INT64" },
        {
          name: "notes",
          data: [0, 1, 2].map(() => new Uint8Array(bytes).fill(0x61)),
          type: "BYTE_ARRAY",
          codec: "GZIP",
        },
      ],
      compressors: { GZIP: (input: Uint8Array) => new Uint8Array(gzipSync(input)) },
    });
    return file;
  }

  it("refuses a footer that declares more rows than its column chunks hold, naming the file, at once", async () => {
    const file = smallFile();
    forgeParquetRowCount(file, 10n ** 15n);
    await expect(openParquet(file)).rejects.toThrow(
      `${file}: the parquet footer declares 1000000000000000 rows in row group 0, but its column episode_index holds only 3 values`,
    );
    // Value counts forged as well: the first read past the values there are stops.
    forgeParquetRowCount(file, 10n ** 15n, { values: true });
    const parquet = await openParquet(file);
    const started = Date.now();
    const read = async () => {
      for await (const _ of parquetBatches(parquet)) {
      }
    };
    await expect(read()).rejects.toThrow(
      `${file}: the parquet footer declares more rows than the column chunks hold (column episode_index has no value for row 4)`,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("stops between reads once its signal is aborted", async () => {
    const parquet = await openParquet(convertedDataFile(false));
    const controller = new AbortController();
    const firsts: number[] = [];
    const read = async () => {
      for await (const { first } of parquetBatches(parquet, ["episode_index"], {
        rows: 1_000,
        signal: controller.signal,
      })) {
        firsts.push(first);
        if (firsts.length === 2) controller.abort(new Error("interrupted"));
      }
    };
    await expect(read()).rejects.toThrow("interrupted");
    expect(firsts).toEqual([0, 1_000]);
  });

  it("decompresses no more than a read may hold, and nothing of a column not asked for", async () => {
    const file = smallFile(8 * 2 ** 20);
    const parquet = await openParquet(file);
    const bytes = 4 * 2 ** 20;
    const rows: unknown[] = [];
    for await (const batch of parquetBatches(parquet, ["episode_index"], { bytes })) rows.push(...batch.rows);
    expect(rows).toEqual([{ episode_index: 0n }, { episode_index: 1n }, { episode_index: 2n }]);
    const read = async () => {
      for await (const _ of parquetBatches(parquet, undefined, { bytes })) {
      }
    };
    await expect(read()).rejects.toThrow(
      `${file}: rows 1 to 1 decompress to more than 4,194,304 bytes, the most one read may hold`,
    );
  });
});
