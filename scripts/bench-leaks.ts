// npm run bench:leaks -- [--mb 100] [--dims 14] [--licences 1000] [--runs 3] [--file data.parquet] [--robustness]
// Leak tracing's figures (lib/marks), in this process, on a LeRobot v3.0 data file of --mb
// megabytes (frame rows of float32 state and action vectors of --dims, written once with
// hyparquet-writer into .data/bench-leaks/ and reused; --file marks a real one instead):
//   - marking it for one licence (the copy job's work, without the store): median of --runs, wall
//     and CPU time, and the copy's sha256 (what the job records);
//   - the storage one licence's copy of it costs (a whole object: the store keeps no shared part);
//   - tracing a leak of it (half its rows, reordered, cast to float64, as a leaker re-saves it)
//     against --licences licences: reading both files' cells, comparing them, testing every mark.
// With --robustness, also what is left of the mark after coalitions of 2 to 8 licensees average
// their copies or take each cell's majority, and after noise of ±1 to ±64 float steps (the figures
// docs/leak-tracing.md quotes), traced against 100 licences.
// Targets (docs/benchmarks.md): marking 100 MB under 3 s; tracing 100 MB against 1,000 licences
// under 30 s. The last line of stdout is one JSON object.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { SchemaElement } from "hyparquet";
import { parquetWriteBuffer } from "hyparquet-writer";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { parquetCells, type FrameCells } from "@/lib/marks/cells";
import { markKey } from "@/lib/marks/key";
import { markParquet } from "@/lib/marks/parquet-mark";
import { compareCells, testLicences } from "@/lib/marks/trace";
import { progress } from "./bench/common";

const { values } = parseArgs({
  options: {
    mb: { type: "string", default: "100" },
    dims: { type: "string", default: "14" },
    licences: { type: "string", default: "1000" },
    runs: { type: "string", default: "3" },
    file: { type: "string" },
    robustness: { type: "boolean", default: false },
  },
});
const MB = Number(values.mb);
const DIMS = Number(values.dims);
const LICENCES = Number(values.licences);
const RUNS = Number(values.runs);
if (!(MB > 0) || !Number.isInteger(DIMS) || DIMS < 1 || !Number.isInteger(LICENCES) || LICENCES < 1)
  throw new Error("--mb, --dims and --licences must be positive numbers");

const SECRET = "bench-leaks installation secret";
const original = new Uint8Array(readFileSync(values.file ?? (await generated())));
progress(`marking a ${(original.length / 1e6).toFixed(1)} MB file`);

// Marking.
const marks: { wall: number; cpu: number; sha: number }[] = [];
let copy: Uint8Array = new Uint8Array();
let changed = 0;
for (let run = 0; run < RUNS; run++) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const made = await markParquet(original, markKey(SECRET, `lic_bench${run}`), "0".repeat(32));
  const marked = performance.now();
  createHash("sha256").update(made.bytes).digest("hex");
  const used = process.cpuUsage(cpu);
  marks.push({ wall: marked - started, cpu: (used.user + used.system) / 1000, sha: performance.now() - marked });
  if (run === 0) {
    copy = made.bytes;
    changed = made.report.changed;
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// The leak: half the rows of licence 0's copy, reordered, cast to float64 (the shape of a re-save).
progress("writing the leak: half the copy's rows, reordered, as float64");
const leakBytes = asParquet(halfReorderedAsFloat64(await parquetCells(copy)));
progress(`tracing a ${(leakBytes.length / 1e6).toFixed(1)} MB leak against ${LICENCES} licences`);
const traceStarted = performance.now();
const traceCpu = process.cpuUsage();
const [originalCells, leaked] = [await parquetCells(original), await parquetCells(leakBytes)];
const read = performance.now();
const comparison = compareCells(originalCells, leaked);
const compared = performance.now();
const candidates = Array.from({ length: LICENCES }, (_, i) => ({
  licenceId: `lic_bench${i}`,
  key: markKey(SECRET, `lic_bench${i}`),
}));
const verdicts = testLicences(comparison, candidates);
const tested = performance.now();
const traceUsed = process.cpuUsage(traceCpu);
const named = verdicts.filter((v) => v.named).map((v) => v.licenceId);
if (named.join() !== "lic_bench0")
  throw new Error(`the leak traced to ${named.join(", ") || "no licence"}, not lic_bench0`);

const figures = {
  file_mb: Number((original.length / 1e6).toFixed(1)),
  dimensions: DIMS,
  frames: originalCells.rows,
  mark_ms: Math.round(median(marks.map((m) => m.wall))),
  mark_cpu_ms: Math.round(median(marks.map((m) => m.cpu))),
  copy_sha256_ms: Math.round(median(marks.map((m) => m.sha))),
  mark_mb_per_s: Number((original.length / 1e6 / (median(marks.map((m) => m.wall)) / 1000)).toFixed(1)),
  cells_changed: changed,
  copy_bytes_per_licence: copy.length,
  copy_size_ratio: Number((copy.length / original.length).toFixed(4)),
  licences: LICENCES,
  trace_ms: Math.round(tested - traceStarted),
  trace_cpu_ms: Math.round((traceUsed.user + traceUsed.system) / 1000),
  leak_mb: Number((leakBytes.length / 1e6).toFixed(1)),
  trace_read_ms: Math.round(read - traceStarted),
  trace_compare_ms: Math.round(compared - read),
  trace_test_licences_ms: Math.round(tested - compared),
  evidence_cells: comparison.evidence.row.length,
  log10_p_named: Number(verdicts[0]!.log10Adjusted.toFixed(1)),
};
if (values.robustness) await robustness();
process.stdout.write(
  `${[
    `marking ${figures.file_mb} MB (${figures.frames} frames, ${DIMS}-dim state and action): ${figures.mark_ms} ms (${figures.mark_cpu_ms} ms CPU), sha256 of the copy ${figures.copy_sha256_ms} ms`,
    `storage per licence: ${figures.copy_bytes_per_licence} bytes for this file (${figures.copy_size_ratio} of the original): a whole copy of every file`,
    `tracing half its rows, reordered, as float64, against ${LICENCES} licences: ${figures.trace_ms} ms (both files read ${figures.trace_read_ms}, compared ${figures.trace_compare_ms}, licences tested ${figures.trace_test_licences_ms}); named lic_bench0, log10 p ${figures.log10_p_named}`,
  ].join("\n")}\n${JSON.stringify(figures)}\n`,
);

/**
 * Coalitions and noise against the mark: each derived leak traced against 100 licences, naming
 * which of the colluders are named, and the strongest p-value of a licence that is not one.
 */
async function robustness(): Promise<void> {
  const originalCells = await parquetCells(original);
  const candidates = Array.from({ length: 100 }, (_, i) => ({
    licenceId: `lic_${i}`,
    key: markKey(SECRET, `lic_${i}`),
  }));
  const copies: FrameCells[] = [];
  for (let i = 0; i < 8; i++)
    copies.push(await parquetCells((await markParquet(original, markKey(SECRET, `lic_${i}`), "0".repeat(32))).bytes));
  const derived = (combine: (values: number[]) => number, from: FrameCells[]): FrameCells => {
    const out: FrameCells = { ...originalCells, columns: new Map() };
    for (const [name, column] of originalCells.columns) {
      const values = from.map((copy) => copy.columns.get(name)!.values);
      out.columns.set(name, {
        ...column,
        values: column.values.map((_, i) => combine(values.map((v) => v[i]!))),
        float32: true,
      });
    }
    return out;
  };
  const trace = (label: string, leak: FrameCells, colluders: number) => {
    const verdicts = testLicences(compareCells(originalCells, leak), candidates);
    const isColluder = (id: string) => Number(id.slice(4)) < colluders;
    const named = verdicts.filter((v) => v.named);
    const innocent = Math.min(...verdicts.filter((v) => !isColluder(v.licenceId)).map((v) => v.log10Adjusted));
    process.stdout.write(
      `${label}: ${named.filter((v) => isColluder(v.licenceId)).length} of ${colluders} named (log10 p ${named.map((v) => v.log10Adjusted.toFixed(0)).join(", ") || "-"}), ${named.filter((v) => !isColluder(v.licenceId)).length} innocent named, strongest innocent log10 p ${innocent.toFixed(2)}\n`,
    );
  };
  const average = (values: number[]) => Math.fround(values.reduce((a, b) => a + b, 0) / values.length);
  const majority = (values: number[]) => {
    const counts = new Map<number, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1])[0]![0];
  };
  for (const k of [2, 3, 5, 8]) {
    trace(`average of ${k} copies`, derived(average, copies.slice(0, k)), k);
    if (k > 2) trace(`majority of ${k} copies`, derived(majority, copies.slice(0, k)), k);
  }
  const f32 = new Float32Array(1);
  const bits = new Int32Array(f32.buffer);
  for (const steps of [1, 2, 4, 8, 16, 64]) {
    let seed = 12345;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const noisy = ([v]: number[]) => {
      f32[0] = v!;
      bits[0]! += Math.round((random() * 2 - 1) * steps);
      return f32[0]!;
    };
    trace(`noise of up to ±${steps} steps on every cell`, derived(noisy, [copies[0]!]), 1);
  }
}

/** The bench's data file, written once per size into .data/bench-leaks/. */
async function generated(): Promise<string> {
  const dir = path.join(PROJECT_ROOT, ".data", "bench-leaks");
  const file = path.join(dir, `data-${MB}mb-${DIMS}d.parquet`);
  if (existsSync(file) && statSync(file).size > 0) return file;
  mkdirSync(dir, { recursive: true });
  // About 4 bytes per float (sensor floats do not compress) and 9 per row of indices and time
  // (their dictionary and delta-like runs compress to almost nothing): measured, 121 bytes a row at 14.
  const rows = Math.round((MB * 1e6) / (8 * DIMS + 9));
  progress(`writing ${rows} frames of ${DIMS}-dim state and action to ${file} (once)`);
  const list = (name: string): SchemaElement[] => [
    { name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
    { name: "list", repetition_type: "REPEATED", num_children: 1 },
    { name: "element", type: "FLOAT", repetition_type: "OPTIONAL" },
  ];
  const column = (name: string, type: "FLOAT" | "INT64"): SchemaElement => ({
    name,
    type,
    repetition_type: "OPTIONAL",
  });
  const state: number[][] = [];
  const action: number[][] = [];
  const time: number[] = [];
  const frame: bigint[] = [];
  const episode: bigint[] = [];
  const index: bigint[] = [];
  for (let r = 0, e = 0, f = 0; r < rows; r++) {
    const s = Array.from({ length: DIMS }, (_, j) => Math.fround(Math.sin(r / 97 + j) + Math.random() * 1e-2));
    state.push(s);
    action.push(s.map((v) => Math.fround(v * 0.5 + Math.random() * 1e-3)));
    time.push(Math.fround(f / 30));
    frame.push(BigInt(f));
    episode.push(BigInt(e));
    index.push(BigInt(r));
    if (++f === 600) [f, e] = [0, e + 1];
  }
  const bytes = parquetWriteBuffer({
    schema: [
      { name: "schema", num_children: 7 },
      ...list("observation.state"),
      ...list("action"),
      column("timestamp", "FLOAT"),
      column("frame_index", "INT64"),
      column("episode_index", "INT64"),
      column("index", "INT64"),
      column("task_index", "INT64"),
    ],
    rowGroupSize: 100_000,
    columnData: [
      { name: "observation.state", data: state },
      { name: "action", data: action },
      { name: "timestamp", data: time },
      { name: "frame_index", data: frame },
      { name: "episode_index", data: episode },
      { name: "index", data: index },
      { name: "task_index", data: index.map(() => 0n) },
    ],
  });
  writeFileSync(file, Buffer.from(bytes));
  return file;
}

/** A frame table's cells as a parquet file of float64 vectors (its two key columns and its float columns). */
function asParquet(cells: FrameCells): Uint8Array {
  const names = [...cells.columns.keys()];
  const rows = names.map((name) => {
    const column = cells.columns.get(name)!;
    const out: number[][] = Array.from({ length: cells.rows }, () => []);
    for (let i = 0; i < column.values.length; i++) out[column.rows[i]!]!.push(column.values[i]!);
    return out;
  });
  const written = parquetWriteBuffer({
    schema: [
      { name: "schema", num_children: names.length + 2 },
      ...names.flatMap((name): SchemaElement[] => [
        { name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { name: "element", type: "DOUBLE", repetition_type: "OPTIONAL" },
      ]),
      { name: "episode_index", type: "INT64", repetition_type: "OPTIONAL" },
      { name: "frame_index", type: "INT64", repetition_type: "OPTIONAL" },
    ],
    rowGroupSize: 100_000,
    columnData: [
      ...names.map((name, i) => ({ name, data: rows[i]! })),
      { name: "episode_index", data: Array.from(cells.episodes, (e) => BigInt(e)) },
      { name: "frame_index", data: Array.from(cells.frames, (f) => BigInt(f)) },
    ],
  });
  return new Uint8Array(written);
}

/** Every other row of a table, in reverse order, its values as float64: a re-saved leak. */
function halfReorderedAsFloat64(cells: FrameCells): FrameCells {
  const kept: number[] = [];
  for (let r = cells.rows - 1; r >= 0; r -= 2) kept.push(r);
  const newRow = new Int32Array(cells.rows).fill(-1);
  kept.forEach((r, i) => (newRow[r] = i));
  const columns = new Map<string, FrameCells["columns"] extends Map<string, infer C> ? C : never>();
  for (const [name, column] of cells.columns) {
    const order: number[] = [];
    for (let i = 0; i < column.values.length; i++) if (newRow[column.rows[i]!]! >= 0) order.push(i);
    order.sort(
      (a, b) => newRow[column.rows[a]!]! - newRow[column.rows[b]!]! || column.elements[a]! - column.elements[b]!,
    );
    columns.set(name, {
      values: Float64Array.from(order, (i) => column.values[i]!),
      rows: Int32Array.from(order, (i) => newRow[column.rows[i]!]!),
      elements: Int32Array.from(order, (i) => column.elements[i]!),
      float32: false,
    });
  }
  return {
    rows: kept.length,
    episodes: Float64Array.from(kept, (r) => cells.episodes[r]!),
    frames: Float64Array.from(kept, (r) => cells.frames[r]!),
    columns,
  };
}
