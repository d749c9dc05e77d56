// A worker thread of the log generator: draws the batches it is sent (scripts/bench/disclosure-log.ts).
import { parentPort, workerData } from "node:worker_threads";
import { planBatch, type Plan } from "./disclosure-log";

const plan = workerData as Plan;
parentPort!.on("message", (batch: number) => parentPort!.postMessage({ batch, planned: planBatch(plan, batch) }));
