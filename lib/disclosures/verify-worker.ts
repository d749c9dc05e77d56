// A thread of a parallel full walk (verify-parallel.ts): checks the ranges it is sent on a
// connection of its own and answers with each range's result.
import { parentPort, workerData } from "node:worker_threads";
import { checkRange, WALK_SESSION, type BatchSize } from "./verify-range";
import { instantsAsDates, postgresClient, type ConnectionLimits } from "../db/connection";

const { databaseUrl, size, limits } = workerData as { databaseUrl: string; size: BatchSize; limits: ConnectionLimits };
// The service's own client as createDb makes it (its session set for a long walk, WALK_SESSION),
// without drizzle and the schema, which a thread would spend a second loading: the walk reads
// text, integers, booleans, float8 and jsonb only, whose parsing drizzle leaves as it is, so rows
// parse exactly as they do for a walk in the main thread.
const sql = postgresClient(databaseUrl, { ...limits, max: 1, settings: WALK_SESSION });
instantsAsDates(sql);

parentPort!.on("message", ({ id, afterSeq, upTo }: { id: number; afterSeq: number; upTo: number }) => {
  checkRange(sql, size, afterSeq, upTo).then(
    (result) => parentPort!.postMessage({ id, result }),
    (error: unknown) => parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) }),
  );
});
