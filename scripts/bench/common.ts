import { spawn } from "node:child_process";
import http from "node:http";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { hasProductionBuild, NEXT_BIN, startNextServer, type NextServer } from "@/lib/dev/next-server";

/** Benchmarks print progress on stderr and reserve stdout for the table and the final JSON line. */
export const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export type Measurement = { p50: number; p99: number; perSecond: number; count: number };

/**
 * Latency of `operation` run back to back (one at a time), then throughput with `concurrency`
 * workers for `seconds`. Both after a warm-up, so caches and JITs are in their steady state.
 */
export async function measure(
  operation: () => Promise<void>,
  options: { warmup?: number; samples?: number; concurrency?: number; seconds?: number } = {},
): Promise<Measurement> {
  const { warmup = 200, samples = 1000, concurrency = 4, seconds = 5 } = options;
  for (let i = 0; i < warmup; i++) await operation();
  const latencies: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint();
    await operation();
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  latencies.sort((a, b) => a - b);
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
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), perSecond: done / elapsed, count: samples };
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

export function httpPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The production build under `next start` (built first if needed), as in deployment. */
export async function startProductionServer(env: Record<string, string>, nodeFlags: string[] = []): Promise<NextServer> {
  if (!hasProductionBuild()) {
    progress("building the production bundle (next build)");
    await new Promise<void>((resolve, reject) =>
      spawn(process.execPath, [NEXT_BIN, "build"], { cwd: PROJECT_ROOT, stdio: ["ignore", "ignore", "inherit"] }).on("exit", (code) =>
        code === 0 ? resolve() : reject(new Error(`next build exited with ${code}`)),
      ),
    );
  }
  return startNextServer({ ...process.env, ...env }, nodeFlags);
}

export function table(rows: Record<string, string | number>[]): string {
  const columns = Object.keys(rows[0] ?? {});
  const cell = (v: string | number) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]!).length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(columns), line(widths.map((w) => "-".repeat(w))), ...rows.map((r) => line(columns.map((c) => cell(r[c]!))))].join("\n");
}
