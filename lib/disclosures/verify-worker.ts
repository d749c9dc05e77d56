// A thread of a parallel full walk (verify-parallel.ts): checks the ranges it is sent on a
// connection of its own and answers with each range's result.
import { parentPort, workerData } from "node:worker_threads";
import { checkRange, WALK_SESSION, type BatchSize } from "./verify-range";
import { createDb, sqlOf } from "../db/client";

const { databaseUrl, size } = workerData as { databaseUrl: string; size: BatchSize };
// The service's own client, so rows parse exactly as they do for a walk in the main thread; its
// session set for a long walk (WALK_SESSION).
const sql = sqlOf(createDb(databaseUrl, { max: 1, settings: WALK_SESSION }));

parentPort!.on("message", ({ id, afterSeq, upTo }: { id: number; afterSeq: number; upTo: number }) => {
  checkRange(sql, size, afterSeq, upTo).then(
    (result) => parentPort!.postMessage({ id, result }),
    (error: unknown) => parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) }),
  );
});
