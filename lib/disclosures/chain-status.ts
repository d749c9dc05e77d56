import type { Ctx } from "../context";
import { requireReviewer } from "../auth/authorize";
import { lastFullCheckpoint, verifyChainDetailed, type ChainReport, type Checkpoint } from "./verify";

export type ChainStatus =
  | {
      report: ChainReport;
      checkedAt: Date;
      /** The checkpoint the check started from: entries up to it were verified then, not now. */
      from: Checkpoint | null;
      /** Entries this check hashed (those after `from`). */
      entriesChecked: number;
      /** The last time the whole log was walked from the genesis (`das-admin disclosures verify --full`), or null if never. */
      lastFull: Checkpoint | null;
    }
  | { report: null; checkedAt: null };

const FRESH_MS = 60_000;
/** A broken log stays broken until someone repairs it: checked again less often. */
const BROKEN_FRESH_MS = 10 * 60_000;

// Per process: the last result, and the check under way (one at a time, however many reviewers look).
let last: ChainStatus | undefined;
let running: Promise<void> | undefined;

/**
 * The chain's verification for the reviewer banner. It is incremental only: the entries appended
 * since the newest checkpoint, after checking that the checkpoint's entry still holds its hash,
 * so it costs what was appended since, never a walk of the whole log. The full walk is the
 * periodic job's (`das-admin disclosures verify --full`); its last time is shown from the
 * checkpoints. A page never waits long for a check: it shows the latest result (and its time)
 * while a fresh one runs in the background when the last is over a minute old. The first call
 * waits up to `waitMs`.
 */
export async function chainStatus(ctx: Ctx, waitMs = 3000): Promise<ChainStatus> {
  requireReviewer(ctx);
  const freshFor = last?.report?.intact === false ? BROKEN_FRESH_MS : FRESH_MS;
  if (!running && (!last || Date.now() - last.checkedAt!.getTime() > freshFor)) {
    running = check(ctx)
      .then((status) => {
        last = status;
      })
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
      });
  }
  if (!last && running) await Promise.race([running, new Promise((resolve) => setTimeout(resolve, waitMs))]);
  return last ?? { report: null, checkedAt: null };
}

async function check(ctx: Ctx): Promise<ChainStatus> {
  const verification = await verifyChainDetailed(ctx, { mode: "incremental" });
  return {
    report: verification.report,
    checkedAt: new Date(),
    from: verification.from,
    entriesChecked: verification.entriesChecked,
    lastFull: await lastFullCheckpoint(ctx),
  };
}
