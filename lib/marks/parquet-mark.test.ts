import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildLeRobotFixture } from "../testing/lerobot-fixtures";
import { runPython } from "../testing/python";
import { parquetCells } from "./cells";
import { markKey } from "./key";
import { ParquetFormatError, footerBytes, parquetLayout } from "./parquet-layout";
import { copyTokenOf, markParquet } from "./parquet-mark";
import { steps32, steps64 } from "./ulp";

// A licence's copy of frame tables as writers really write them (pyarrow's dictionary pages, V2
// pages, zstd, gzip, byte-stream-split, page indexes, statistics, nulls, float64 columns), read
// back by pyarrow: same schema and metadata, every float within one step, statistics still true.

const KEY = markKey("a test secret", "lic_parquet");
const TOKEN = "00112233445566778899aabbccddeeff";

// Variants of one LeRobot data file, written by pyarrow.
const VARIANTS = `
import sys, pyarrow as pa, pyarrow.parquet as pq, pyarrow.compute as pc
src, out = sys.argv[1], sys.argv[2]
t = pq.read_table(src)
floats = ["observation.state", "action"]
pq.write_table(t, f"{out}/dictionary.parquet")
pq.write_table(t, f"{out}/v2-zstd-index.parquet", data_page_version="2.0", compression="zstd", write_page_index=True)
pq.write_table(t, f"{out}/split-gzip.parquet", use_dictionary=["timestamp"], use_byte_stream_split=floats, compression="gzip")
pq.write_table(t, f"{out}/small-pages.parquet", data_page_size=512, row_group_size=7, compression="none")
# float64 vectors with a null element and a null row.
state = t.column("observation.state").to_pylist()
state[1] = None
state[2] = [None] + state[2][1:]
d = t.set_column(t.schema.get_field_index("observation.state"), "observation.state", pa.array(state, pa.list_(pa.float64())))
pq.write_table(d, f"{out}/float64-nulls.parquet")
`;

// What pyarrow makes of a copy beside its original.
const CHECK = `
import sys, json, pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq
a, b = pq.ParquetFile(sys.argv[1]), pq.ParquetFile(sys.argv[2])
ta, tb = a.read(), b.read()
ma, mb = dict(ta.schema.metadata or {}), dict(tb.schema.metadata or {})
token = mb.pop(b"das.copy", b"").decode()
stats_true = True
names = tb.column_names
for g in range(b.metadata.num_row_groups):
    group = b.read_row_group(g)
    for c in range(b.metadata.num_columns):
        col = b.metadata.row_group(g).column(c)
        s = col.statistics
        if s is None or not s.has_min_max or col.physical_type not in ("FLOAT", "DOUBLE"): continue
        top = next(n for n in names if col.path_in_schema == n or col.path_in_schema.startswith(n + "."))
        values = group.column(top).combine_chunks()
        if pa.types.is_list(values.type): values = pc.list_flatten(values)
        values = [v for v in values.to_pylist() if v is not None]
        if values and (min(values) < s.min or max(values) > s.max): stats_true = False
print(json.dumps({
  "schema_equal": ta.schema.equals(tb.schema, check_metadata=False),
  "metadata_equal": ma == mb,
  "token": token,
  "rows": [ta.num_rows, tb.num_rows],
  "groups": [a.metadata.num_row_groups, b.metadata.num_row_groups],
  "other_columns_equal": all(ta.column(n).equals(tb.column(n)) for n in ta.column_names if n not in ("observation.state", "action")),
  "stats_true": stats_true,
}))
`;

let dir: string;
const variants = ["fixture", "dictionary", "v2-zstd-index", "split-gzip", "small-pages", "float64-nulls"];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "das-parquet-mark-"));
  const fixture = await buildLeRobotFixture(path.join(dir, "dataset"), { version: "v3.0", cameras: [] });
  const data = path.join(dir, "dataset", fixture.files.find((f) => f.stream === "data")!.path);
  await writeFile(path.join(dir, "fixture.parquet"), await readFile(data));
  await runPython(VARIANTS, [data, dir]);
}, 300_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

describe.each(variants)("a licence's copy of %s", (name) => {
  it("keeps the footer's bytes through the Thrift reader and writer", async () => {
    const bytes = new Uint8Array(await readFile(path.join(dir, `${name}.parquet`)));
    const length = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 8).getUint32(0, true);
    const footer = bytes.subarray(bytes.length - 8 - length);
    expect(Buffer.from(footerBytes(parquetLayout(bytes).footer)).equals(Buffer.from(footer))).toBe(true);
  });

  it("reads in pyarrow with the same schema, metadata, rows and other columns; floats within one step; true statistics", async () => {
    const source = path.join(dir, `${name}.parquet`);
    const bytes = new Uint8Array(await readFile(source));
    const { bytes: copy, report } = await markParquet(bytes, KEY, TOKEN);
    expect(report.columns.sort()).toEqual(["action", "observation.state"]);
    expect(report.changed / report.markable).toBeGreaterThan(0.15);
    expect(report.changed / report.markable).toBeLessThan(0.35);
    const target = path.join(dir, `${name}.copy.parquet`);
    await writeFile(target, copy);
    const checked = JSON.parse(await runPython(CHECK, [source, target]));
    expect(checked).toEqual({
      schema_equal: true,
      metadata_equal: true,
      token: TOKEN,
      rows: [checked.rows[0], checked.rows[0]],
      groups: [checked.groups[0], checked.groups[0]],
      other_columns_equal: true,
      stats_true: true,
    });
    const [a, b] = [await parquetCells(bytes), await parquetCells(copy)];
    for (const [column, values] of a.columns) {
      const other = b.columns.get(column)!;
      expect(other.rows).toEqual(values.rows);
      expect(other.elements).toEqual(values.elements);
      for (let i = 0; i < values.values.length; i++) {
        const d = values.float32
          ? steps32(values.values[i]!, other.values[i]!, 1e6)
          : steps64(values.values[i]!, other.values[i]!, 1e6);
        expect(Math.abs(d!)).toBeLessThanOrEqual(1);
      }
    }
    expect(copyTokenOf(parquetLayout(copy))).toBe(TOKEN);
  });
});

describe("a parquet file that is not a frame table", () => {
  it("gets the token and nothing else", async () => {
    const source = path.join(dir, "dataset/meta/tasks.parquet");
    const bytes = new Uint8Array(await readFile(source));
    const { bytes: copy, report } = await markParquet(bytes, KEY, TOKEN);
    expect(report).toEqual({ columns: [], markable: 0, changed: 0 });
    expect(copyTokenOf(parquetLayout(copy))).toBe(TOKEN);
    const target = path.join(dir, "tasks.copy.parquet");
    await writeFile(target, copy);
    expect(JSON.parse(await runPython(CHECK, [source, target]))).toMatchObject({
      schema_equal: true,
      metadata_equal: true,
      other_columns_equal: true,
    });
  });
});

const footerLength = (bytes: Uint8Array) =>
  new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 8).getUint32(0, true);

describe("a hostile file", () => {
  const refused = async (bytes: Uint8Array) => {
    await expect(markParquet(bytes, KEY, TOKEN)).rejects.toThrow(ParquetFormatError);
  };

  it("is refused with a reason, whatever is wrong with it", async () => {
    const good = new Uint8Array(await readFile(path.join(dir, "dictionary.parquet")));
    await refused(new TextEncoder().encode("not parquet at all"));
    await refused(good.subarray(0, good.length - 1));
    // A footer length larger than the file.
    const long = good.slice();
    new DataView(long.buffer).setUint32(long.length - 8, 0x7fffffff, true);
    await refused(long);
    // An encrypted footer.
    const encrypted = good.slice();
    encrypted.set(new TextEncoder().encode("PARE"), encrypted.length - 4);
    await refused(encrypted);
    // A footer that claims a trillion rows (a reader that believed it would allocate for them).
    const layout = parquetLayout(good);
    const rows = layout.footer.fields.find((f) => f.id === 3)!;
    rows.value = 10n ** 12n;
    await refused(Buffer.concat([good.subarray(0, good.length - 8 - footerLength(good)), footerBytes(layout.footer)]));
    // The first page's header overwritten: its sizes are garbage.
    const pages = good.slice();
    pages.fill(0xff, 4, 40);
    await refused(pages);
  });
});
