import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { NEXT_BIN, productionBuildIsCurrent, startNextServer, type NextServer } from "@/lib/dev/next-server";

/** Benchmarks print progress on stderr and reserve stdout for the table and the final JSON line. */
export const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** A figure to two decimals, as the benchmarks' JSON lines give their ratios. */
export function round(n: number): number {
  return Math.round(n * 100) / 100;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** `cpuMsPerOp`: CPU time a watched process (the server) spent per operation, when one was watched. */
export type Measurement = { p50: number; p99: number; perSecond: number; count: number; cpuMsPerOp?: number };

/**
 * CPU seconds a process has used so far, from /proc (Linux): the scheduler's own count of each of
 * its threads' time on a CPU (schedstat, in nanoseconds), summed, where the kernel keeps it; else
 * user + system time from its stat line, in clock ticks of 10 ms. A slice of a fraction of a second
 * holds a few dozen ticks, so the ticks alone made a page's cost against the floor swing by a tenth.
 */
export function processCpuSeconds(pid: number): number {
  let nanoseconds = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) nanoseconds += threadNanoseconds(pid, task);
  if (nanoseconds > 0) return nanoseconds / 1e9;
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after "pid (comm) ", in clock ticks.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}
const CLOCK_TICKS_PER_SECOND = 100;

/** A thread's time on a CPU so far, in ns; 0 without schedstat, or for a thread that ended since it was listed. */
function threadNanoseconds(pid: number, task: string): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]) || 0;
  } catch {
    return 0;
  }
}

type MeasureOptions = { warmup?: number; samples?: number; concurrency?: number; seconds?: number };

/** Latency of `operation` run back to back (one at a time), after a warm-up, so caches and JITs are in their steady state. */
async function latencies(operation: () => Promise<void>, warmup: number, samples: number): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await operation();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint();
    await operation();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

/** `operation` run by `concurrency` workers for `seconds`: how many completed, in how many seconds. */
async function run(
  operation: () => Promise<void>,
  concurrency: number,
  seconds: number,
): Promise<{ done: number; elapsed: number }> {
  let done = 0;
  const until = Date.now() + seconds * 1000;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        await operation();
        done++;
      }
    }),
  );
  return { done, elapsed: Number(process.hrtime.bigint() - started) / 1e9 };
}

/**
 * Operations that are compared with each other: the latency of each (run back to back), then
 * their throughput in alternating slices of `slice` seconds until each has had `seconds`. On a
 * machine whose load moves (other work on the same cores), each then meets the same load.
 */
export async function measureTogether<K extends string>(
  operations: Record<K, () => Promise<void>>,
  options: MeasureOptions & { slice?: number; watchPid?: number } = {},
): Promise<Record<K, Measurement>> {
  const { warmup = 200, samples = 1000, concurrency = 4, seconds = 5, slice = 0.5, watchPid } = options;
  const names = Object.keys(operations) as K[];
  const times = {} as Record<K, number[]>;
  for (const name of names) times[name] = await latencies(operations[name], warmup, samples);
  const totals = Object.fromEntries(names.map((name) => [name, { done: 0, elapsed: 0, cpu: 0 }])) as Record<
    K,
    { done: number; elapsed: number; cpu: number }
  >;
  const cpu = () => (watchPid === undefined ? 0 : processCpuSeconds(watchPid));
  for (let i = 0; i < Math.max(1, Math.round(seconds / slice)); i++) {
    // Each round starts one operation later, so that each follows every other equally often: what one
    // leaves behind (a collection due, caches another process cooled) falls on all of them alike.
    for (const name of [...names.slice(i % names.length), ...names.slice(0, i % names.length)]) {
      const before = cpu();
      const { done, elapsed } = await run(operations[name], concurrency, slice);
      totals[name].done += done;
      totals[name].elapsed += elapsed;
      totals[name].cpu += cpu() - before;
    }
  }
  return Object.fromEntries(
    names.map((name) => {
      const { done, elapsed, cpu: cpuSeconds } = totals[name];
      const measured: Measurement = {
        p50: percentile(times[name], 50),
        p99: percentile(times[name], 99),
        perSecond: done / elapsed,
        count: samples,
      };
      if (watchPid !== undefined) measured.cpuMsPerOp = (1000 * cpuSeconds) / done;
      return [name, measured];
    }),
  ) as Record<K, Measurement>;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** GET with a keep-alive agent: a lighter client than fetch, so the client's cost distorts less. */
export function httpGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", reject);
  });
}

export function httpPost(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", agent, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The production build of this code under `next start` (built first if missing or stale), as in deployment. */
export async function startProductionServer(
  env: Record<string, string>,
  nodeFlags: string[] = [],
): Promise<NextServer> {
  // Servers started together (two instances) wait for one build, rather than each starting its own.
  if (!productionBuildIsCurrent()) {
    building ??= new Promise<void>((resolve, reject) => {
      progress("building the production bundle (next build)");
      spawn(process.execPath, [NEXT_BIN, "build"], { cwd: PROJECT_ROOT, stdio: ["ignore", "ignore", "inherit"] }).on(
        "exit",
        (code) => (code === 0 ? resolve() : reject(new Error(`next build exited with ${code}`))),
      );
    }).finally(() => (building = null));
    await building;
  }
  return startNextServer({ ...process.env, ...env }, nodeFlags);
}
let building: Promise<void> | null = null;

export function table(rows: Record<string, string | number>[]): string {
  const columns = Object.keys(rows[0] ?? {});
  const cell = (v: string | number) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]!).length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(" | ")} |`;
  return [
    line(columns),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map((r) => line(columns.map((c) => cell(r[c]!)))),
  ].join("\n");
}
