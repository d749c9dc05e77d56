import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildLeRobotFixture } from "../testing/lerobot-fixtures";
import { runPython } from "../testing/python";
import { csvCells, parquetCells, type FrameCells } from "./cells";
import { markKey } from "./key";
import { markParquet } from "./parquet-mark";
import { binomialTailLog10, compareCells, testLicences, type Candidate } from "./trace";
import { steps32 } from "./ulp";

// Copies of a real LeRobot data file for three licences, each changed the ways a leaker would
// change it, traced against 50 licences: the right one named with p < 1e-9 (after multiplying by
// the 50 tested), every other above 0.01.

const SECRET = "a test installation's secret";
const LICENCES = Array.from({ length: 50 }, (_, i) => `lic_test${String(i).padStart(2, "0")}`);
const CANDIDATES: Candidate[] = LICENCES.map((licenceId) => ({ licenceId, key: markKey(SECRET, licenceId) }));
const HOLDERS = LICENCES.slice(0, 3);

// Each transformation of `copy` into `out/<name>.<ext>`, by pyarrow and pandas as a leaker would.
const TRANSFORM = `
import sys, numpy as np, pandas as pd, pyarrow as pa, pyarrow.parquet as pq, pyarrow.compute as pc
src, out = sys.argv[1], sys.argv[2]
t = pq.read_table(src)
n = t.num_rows
pq.write_table(t.take([i for i in range(n) if i % 3 != 1]), f"{out}/subset.parquet")
pq.write_table(t.take(np.random.default_rng(7).permutation(n)), f"{out}/reordered.parquet")
def cast(field):
    if pa.types.is_list(field.type) and pa.types.is_float32(field.type.value_type): return pa.field(field.name, pa.list_(pa.float64()))
    if pa.types.is_float32(field.type): return pa.field(field.name, pa.float64())
    return field
pq.write_table(t.cast(pa.schema([cast(f) for f in t.schema])), f"{out}/float64.parquet")
df = pd.read_parquet(src)
df.to_parquet(f"{out}/pandas.parquet")
pq.write_table(pq.read_table(src), f"{out}/pyarrow.parquet", compression="zstd", use_dictionary=False, data_page_version="2.0")
df.to_csv(f"{out}/numpy.csv", index=False)
flat = df[["episode_index", "frame_index"]].copy()
for name in ["observation.state", "action"]:
    for j in range(len(df[name].iloc[0])): flat[f"{name}_{j}"] = df[name].map(lambda v: v[j])
flat.to_csv(f"{out}/flat.csv", index=False)
# das pull renumbers a LeRobot v3.0 subset: the same rows under other episode indices.
e = t.column("episode_index")
pq.write_table(t.set_column(t.schema.get_field_index("episode_index"), "episode_index", pc.subtract(pa.scalar(7, pa.int64()), e)), f"{out}/renumbered.parquet")
h = t.cast(pa.schema([pa.field(f.name, pa.list_(pa.float16())) if f.name in ("observation.state", "action") else f for f in t.schema]))
pq.write_table(h, f"{out}/float16.parquet")
`;

const TRANSFORMATIONS = [
  "subset",
  "reordered",
  "float64",
  "pandas",
  "pyarrow",
  "renumbered",
  "numpy.csv",
  "flat.csv",
] as const;

async function cellsOf(file: string, names: Iterable<string>): Promise<FrameCells> {
  const bytes = new Uint8Array(await readFile(file));
  return file.endsWith(".csv") ? csvCells(new TextDecoder().decode(bytes), names) : parquetCells(bytes);
}

describe.each(["v2.1", "v3.0"] as const)("a LeRobot %s data file", (version) => {
  let dir: string;
  let original: FrameCells;
  const copies = new Map<string, string>();

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "das-marks-"));
    // Episodes of 60 frames: a third of a v2.1 file (one episode) still holds a hundred marked cells.
    const fixture = await buildLeRobotFixture(path.join(dir, "dataset"), { version, length: () => 60 });
    const data = path.join(dir, "dataset", fixture.files.find((f) => f.stream === "data")!.path);
    const bytes = new Uint8Array(await readFile(data));
    original = await parquetCells(bytes);
    for (const licence of HOLDERS) {
      const copy = await markParquet(bytes, markKey(SECRET, licence), `token-${licence}`);
      const file = path.join(dir, `${licence}.parquet`);
      await writeFile(file, copy.bytes);
      await runPython(TRANSFORM, [file, await mkdtempIn(dir, licence)]);
      copies.set(licence, file);
    }
  }, 300_000);

  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("moves a quarter of the float cells by exactly one step, and nothing else", async () => {
    for (const licence of HOLDERS) {
      const copy = await cellsOf(copies.get(licence)!, []);
      expect(copy.episodes).toEqual(original.episodes);
      expect(copy.frames).toEqual(original.frames);
      let moved = 0;
      let cells = 0;
      for (const [name, column] of original.columns) {
        const marked = copy.columns.get(name)!;
        expect(marked.rows).toEqual(column.rows);
        expect(marked.elements).toEqual(column.elements);
        for (let i = 0; i < column.values.length; i++) {
          const d = steps32(column.values[i]!, marked.values[i]!, 1_000_000)!;
          expect(Math.abs(d)).toBeLessThanOrEqual(1);
          if (d !== 0) moved++;
          cells++;
        }
      }
      expect(moved / cells).toBeGreaterThan(0.15);
      expect(moved / cells).toBeLessThan(0.35);
    }
  });

  it.each(TRANSFORMATIONS)("traces %s to its licence, and to no other", async (name) => {
    for (const licence of HOLDERS) {
      const file = path.join(dir, licence, name.endsWith(".csv") ? name : `${name}.parquet`);
      const leaked = await cellsOf(file, original.columns.keys());
      const comparison = compareCells(original, leaked);
      expect(comparison.moved).toBeGreaterThan(40);
      const [first, ...others] = testLicences(comparison, CANDIDATES);
      expect(first!.licenceId).toBe(licence);
      expect(first!.named).toBe(true);
      expect(first!.log10Adjusted).toBeLessThan(-9);
      for (const other of others) {
        expect(other.named).toBe(false);
        expect(other.log10Adjusted).toBeGreaterThan(-2);
        // Every moved cell of an exact transformation is the named licence's: none is left to test another on.
        if (!name.endsWith(".csv")) expect(other.chosen).toBe(0);
      }
    }
  });

  it("names no licence for the original, or for a copy rounded to float16", async () => {
    for (const leaked of [original, await cellsOf(path.join(dir, HOLDERS[0]!, "float16.parquet"), [])]) {
      const verdicts = testLicences(compareCells(original, leaked), CANDIDATES);
      expect(verdicts.filter((v) => v.named)).toEqual([]);
      for (const v of verdicts) expect(v.log10Adjusted).toBeGreaterThan(-2);
    }
  });

  it("names both licences of a copy averaged from two", async () => {
    const [a, b] = await Promise.all(HOLDERS.slice(0, 2).map((l) => cellsOf(copies.get(l)!, [])));
    const averaged: FrameCells = { ...a!, columns: new Map() };
    for (const [name, column] of a!.columns) {
      const other = b!.columns.get(name)!.values;
      averaged.columns.set(name, {
        ...column,
        values: column.values.map((v, i) => Math.fround((v + other[i]!) / 2)),
        float32: true,
      });
    }
    const named = testLicences(compareCells(original, averaged), CANDIDATES).filter((v) => v.named);
    expect(named.map((v) => v.licenceId).sort()).toEqual(HOLDERS.slice(0, 2));
  });
});

describe("the binomial tail", () => {
  it("is exact where it can be checked by hand", () => {
    expect(binomialTailLog10(10, 10)).toBeCloseTo(Math.log10(1 / 1024), 10);
    expect(binomialTailLog10(10, 0)).toBe(0);
    expect(10 ** binomialTailLog10(4, 3)).toBeCloseTo(5 / 16, 10);
    expect(10 ** binomialTailLog10(4, 2)).toBeCloseTo(11 / 16, 10);
    expect(binomialTailLog10(60_000, 60_000)).toBeCloseTo(-60_000 * Math.log10(2), 6);
  });
});

async function mkdtempIn(dir: string, name: string): Promise<string> {
  const out = path.join(dir, name);
  await import("node:fs/promises").then((fs) => fs.mkdir(out, { recursive: true }));
  return out;
}
