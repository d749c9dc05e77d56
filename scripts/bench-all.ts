// npm run bench:all [-- --record] [--margin 15] [--only bench:downloads,bench:api]
// Every benchmark of package.json (each `bench:*` script), at a size that takes minutes, one after
// another; each one's figures (the JSON object its last line prints) compared with the last ones
// recorded in docs/benchmarks/latest.json. Ratios first (scripts/bench/ratios.ts: a figure over its
// limit measured in the same run, which holds from one machine to another): every one of them,
// against its record and its target, FLAGGED when more than 10% worse than its record. Then every
// other figure that moved by more than the margin, and whether that is slower or faster. With
// --record the new figures replace the recorded ones, and the ratio table at the top of
// docs/benchmarks.md is written again from them. Not a test: it never fails on a figure, only when
// a benchmark itself fails (a broken chain among them). Run it before closing an issue that
// touches a hot path, and say what it printed.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { progress, table } from "./bench/common";
import { compareRatios, RATIO_MARGIN_PERCENT, ratioOf, withRatioTable } from "./bench/ratios";

const { values } = parseArgs({
  options: {
    record: { type: "boolean", default: false },
    margin: { type: "string", default: "15" },
    only: { type: "string" },
  },
});
const MARGIN_PERCENT = Number(values.margin);
const LATEST = path.join(PROJECT_ROOT, "docs/benchmarks/latest.json");
const DOCUMENT = path.join(PROJECT_ROOT, "docs/benchmarks.md");

/**
 * The size each benchmark runs at here: minutes for all of them together, not the hours of their
 * full sizes (docs/benchmarks.md has those). A `bench:*` script not named here runs with its own
 * defaults and is compared all the same.
 */
const SIZES: Record<string, string[]> = {
  "bench:downloads": ["--requests", "20", "--seconds", "10"],
  "bench:api": ["--episodes", "50000", "--seconds", "2", "--revocations", "30"],
  "bench:import": ["--episodes", "10000", "--upload-episodes", "40"],
  "bench:review": ["--entries", "100000", "--samples", "15", "--export-rows", "50000"],
  "bench:episode": ["--runs", "3"],
  "bench:webhooks": ["--deliveries", "1500"],
  "bench:withdrawal": ["--entries", "100000", "--organizations", "200"],
  "bench:hub": ["--files", "100", "--file-mb", "1", "--runs", "1", "--head-episodes", "50000", "--head-samples", "500"],
  "bench:pull": ["--runs", "2"],
  "bench:leaks": ["--mb", "20", "--licences", "200", "--runs", "1"],
  "bench:scaling": [
    "--entries",
    "100000",
    "--archive-entries",
    "50000",
    "--catalog-episodes",
    "200000",
    "--samples",
    "10",
    "--seconds",
    "5",
  ],
};

/** Figures that describe the run rather than measure it (its size, what was reused). */
const NOT_FIGURES = new Set([
  "episodes",
  "entries",
  "download_requests",
  "disclosed_episodes",
  "upload_files",
  "upload_mb",
  "profiled",
  "reused",
  "database_bytes",
  "frames",
  "dimensions",
  "bytes",
  "files",
  "snapshot_files",
  "snapshot_entries",
  "file_mb",
  "leak_mb",
  "licences",
  "cells_changed",
  "evidence_cells",
  "log10_p_named",
]);

/**
 * Which way is better for a figure: a ratio's as scripts/bench/ratios.ts says; otherwise from its
 * name, rates and ratios up (`_per_s`, `_rps`, `_ratio`), times, memory and sizes down. Booleans
 * must stay true (the chain intact).
 */
function better(name: string): "higher" | "lower" {
  const ratio = ratioOf(name);
  if (ratio) return ratio.better;
  if (/(_per_s|_rps|_ratio)$/.test(name) || name.includes("_per_s_")) return "higher";
  return "lower";
}

/** A change in percent, signed so that a positive one is better. */
function gain(name: string, recorded: number, now: number): number {
  const change = ((now - recorded) / Math.abs(recorded)) * 100;
  return better(name) === "higher" ? change : -change;
}

type Figures = Record<string, unknown>;
type Recorded = {
  recorded_at: string;
  /** The machine's own speed and load when they were taken: the raw HMAC loop of bench:downloads, the load average. */
  machine: { cpus: number; load_average_1m_at_start: number; hmac_limit_per_s: number | null };
  benchmarks: Record<string, { args: string[]; seconds: number; figures: Figures }>;
};

const scripts = Object.keys(
  (JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts,
).filter((name) => name.startsWith("bench:") && name !== "bench:all");
const chosen = values.only ? values.only.split(",").map((s) => s.trim()) : scripts;
for (const name of chosen)
  if (!scripts.includes(name)) throw new Error(`${name} is not a benchmark of package.json (${scripts.join(", ")})`);

const recorded: Recorded | null = existsSync(LATEST) ? (JSON.parse(readFileSync(LATEST, "utf8")) as Recorded) : null;
const load = loadavg()[0]!;
progress(`load average ${load.toFixed(2)} on ${cpus().length} cores; benchmarks: ${chosen.join(", ")}`);

const now: Recorded["benchmarks"] = {};
const failed: string[] = [];
for (const name of chosen) {
  const args = SIZES[name] ?? [];
  progress(`${name} ${args.join(" ")}`);
  const started = Date.now();
  const { code, stdout } = await run(name, args);
  const seconds = Math.round((Date.now() - started) / 1000);
  const figures = lastJsonLine(stdout);
  if (code !== 0 || !figures) {
    failed.push(`${name} (exit ${code}${figures ? "" : ", no JSON line"})`);
    continue;
  }
  now[name] = { args, seconds, figures: flattened(figures) };
  progress(`${name} took ${seconds} s`);
}

/** The benchmark as `npm run` runs it, its table passed through to stderr, its stdout kept. */
function run(name: string, args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "--silent", name, "--", ...args], {
      cwd: PROJECT_ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk;
      process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout }));
  });
}

/** Nested figures (a list of runs) as one level, named by their path: `runs.0.plot_ms`. */
function flattened(figures: Figures, prefix = ""): Figures {
  const flat: Figures = {};
  for (const [key, value] of Object.entries(figures)) {
    if (value && typeof value === "object") Object.assign(flat, flattened(value as Figures, `${prefix}${key}.`));
    else flat[`${prefix}${key}`] = value;
  }
  return flat;
}

function lastJsonLine(stdout: string): Figures | null {
  const line = stdout.trim().split("\n").at(-1) ?? "";
  try {
    const parsed = JSON.parse(line) as unknown;
    return parsed && typeof parsed === "object" ? (parsed as Figures) : null;
  } catch {
    return null;
  }
}

// The ratios: every one a benchmark that ran reported, against its record and its target.
const { lines: ratioLines, flagged } = compareRatios(
  Object.fromEntries(Object.entries(now).map(([name, b]) => [name, b.figures])),
  Object.fromEntries(Object.entries(recorded?.benchmarks ?? {}).map(([name, b]) => [name, b.figures])),
);

// Every other figure of every benchmark that ran, against the recorded one.
const moved: Record<string, string>[] = [];
let compared = 0;
for (const [name, { args, figures }] of Object.entries(now)) {
  const before = recorded?.benchmarks[name];
  if (!before) continue;
  const sameSize = JSON.stringify(before.args) === JSON.stringify(args);
  for (const [figure, value] of Object.entries(figures)) {
    if (NOT_FIGURES.has(figure.split(".").at(-1)!) || ratioOf(figure)) continue;
    const old = before.figures[figure];
    if (typeof value === "boolean") {
      compared++;
      if (value !== old) moved.push({ benchmark: name, figure, recorded: String(old), now: String(value), change: "" });
      continue;
    }
    if (typeof value !== "number" || typeof old !== "number" || old === 0) continue;
    compared++;
    const change = ((value - old) / Math.abs(old)) * 100;
    if (Math.abs(change) <= MARGIN_PERCENT) continue;
    const worse = gain(figure, old, value) < 0;
    moved.push({
      benchmark: name + (sameSize ? "" : " (other size)"),
      figure,
      recorded: String(old),
      now: String(value),
      change: `${change > 0 ? "+" : ""}${change.toFixed(0)}% ${worse ? "WORSE" : "better"}`,
    });
  }
}

const hmacNow = (now["bench:downloads"]?.figures.hmac_limit_per_s as number | undefined) ?? null;
const machine = {
  cpus: cpus().length,
  load_average_1m_at_start: Number(load.toFixed(2)),
  hmac_limit_per_s: hmacNow ?? recorded?.machine.hmac_limit_per_s ?? null,
};
console.log("");
console.log(
  ratioLines.length
    ? `Ratios (each figure over its limit, measured in the same run; flagged when over ${RATIO_MARGIN_PERCENT}% worse than recorded):\n${table(ratioLines)}`
    : "No ratios reported.",
);
if (flagged.length) console.log(`FLAGGED, worse than recorded by over ${RATIO_MARGIN_PERCENT}%: ${flagged.join(", ")}`);
console.log("");
if (!recorded) console.log(`No figures recorded yet (${path.relative(PROJECT_ROOT, LATEST)}); run with --record.`);
else {
  console.log(
    `Every other figure, compared with ${path.relative(PROJECT_ROOT, LATEST)} of ${recorded.recorded_at}: ${compared} figures, margin ±${MARGIN_PERCENT}%.`,
  );
  const hmacThen = recorded.machine.hmac_limit_per_s;
  if (hmacNow && hmacThen)
    console.log(
      `The machine's speed (raw HMAC loop) is ${((hmacNow / hmacThen) * 100).toFixed(0)}% of then's; load average ${machine.load_average_1m_at_start} now, ${recorded.machine.load_average_1m_at_start} then. An absolute figure that moved with the machine is not the code's; the ratios above do not move with it.`,
    );
  console.log(moved.length ? table(moved) : `Nothing moved by more than ${MARGIN_PERCENT}%.`);
}
if (failed.length) console.log(`Failed: ${failed.join(", ")}`);

if (values.record) {
  if (failed.length) console.log("Not recorded: a benchmark failed.");
  else {
    const next: Recorded = {
      recorded_at: new Date().toISOString(),
      machine,
      // A benchmark not run this time keeps its last figures.
      benchmarks: { ...recorded?.benchmarks, ...now },
    };
    mkdirSync(path.dirname(LATEST), { recursive: true });
    writeFileSync(LATEST, `${JSON.stringify(next, null, 2)}\n`);
    writeFileSync(DOCUMENT, withRatioTable(readFileSync(DOCUMENT, "utf8"), next));
    console.log(
      `Recorded in ${path.relative(PROJECT_ROOT, LATEST)}; the ratios in ${path.relative(PROJECT_ROOT, DOCUMENT)}.`,
    );
  }
}
process.exit(failed.length ? 1 : 0);
