import { Worker } from "node:worker_threads";
import { cpus } from "node:os";
import { connectionLimits, isTransactionPooler } from "../db/client";
import type { RangeChecker } from "./verify";
import { DEFAULT_BATCH, type BatchSize, type RangeCheck } from "./verify-range";

/**
 * A full walk spread over threads. Checking an entry is mostly this process's work (parsing its
 * row, serialising it, two SHA-256), about 16 µs each against the database's 12 µs: one thread
 * leaves a core idle. Each thread here has a connection of its own (in WALK_SESSION) and checks
 * whole ranges (reads, episode digests, hashes, the links inside the range); the walk links the
 * ranges to each other in seq order (verify.ts), so the first break is still the one reported.
 *
 * For das-admin and the benchmarks, which run TypeScript through tsx: a thread starts as plain
 * Node, registers tsx, then loads verify-worker.ts. Nothing in the web service imports this.
 */
export type ParallelRangeChecker = RangeChecker & { close(): Promise<void> };

export function parallelRangeChecker(
  databaseUrl: string,
  options: { threads?: number; batch?: BatchSize; batchesPerRange?: number } = {},
): ParallelRangeChecker {
  const threads = Math.max(1, options.threads ?? cpus().length);
  const size = options.batch ?? DEFAULT_BATCH;
  const limits = { ...connectionLimits(), transactionPooler: isTransactionPooler(databaseUrl) };
  const workerUrl = new URL("./verify-worker.ts", import.meta.url).href;
  const tsconfig = new URL("../../tsconfig.json", import.meta.url).pathname;
  const bootstrap = `import("tsx/esm/api").then(({ register }) => { register({ tsconfig: ${JSON.stringify(tsconfig)} }); return import(${JSON.stringify(workerUrl)}); })`;
  const pending = new Map<number, { resolve: (r: RangeCheck) => void; reject: (e: Error) => void; thread: number }>();
  /** Ranges each thread holds; a range goes to the thread that holds fewest, so none idles while another has two. */
  const held = Array.from({ length: threads }, () => 0);
  let failure: Error | null = null;
  const fail = (error: Error) => {
    failure ??= error;
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };
  // Started at the first range asked for: a walk too short to use them starts none.
  let started: Worker[] | null = null;
  const start = () =>
    Array.from({ length: threads }, () => {
      const worker = new Worker(bootstrap, { eval: true, workerData: { databaseUrl, size, limits } });
      worker.on("message", (m: { id: number; result?: RangeCheck; error?: string }) => {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (p) held[p.thread]!--;
        if (m.error !== undefined) p?.reject(new Error(m.error));
        else p?.resolve(m.result!);
      });
      worker.on("error", fail);
      worker.on("exit", (code) => code !== 0 && fail(new Error(`a verification thread exited with code ${code}`)));
      return worker;
    });
  let next = 0;
  return {
    // Ranges of two batches, two per thread in flight: each thread reads its next range while it
    // hashes one. Short enough that the walk's last ranges keep every thread busy (ranges of four
    // batches left one thread idle for a fifth of a walk of 100,000 entries on two).
    rangeEntries: size.entries * (options.batchesPerRange ?? 2),
    inFlight: threads * 2,
    check(afterSeq, upTo) {
      if (failure) return Promise.reject(failure);
      const id = next++;
      return new Promise<RangeCheck>((resolve, reject) => {
        const thread = held.indexOf(Math.min(...held));
        pending.set(id, { resolve, reject, thread });
        held[thread]!++;
        started ??= start();
        started[thread]!.postMessage({ id, afterSeq, upTo });
      });
    },
    async close() {
      await Promise.all((started ?? []).map((w) => w.terminate()));
    },
  };
}
