import type { Ctx } from "../context";
import { requireReviewer } from "../auth/authorize";
import { verifyChain, type ChainReport } from "./verify";

export type ChainStatus = { report: ChainReport; checkedAt: Date } | { report: null; checkedAt: null };

const FRESH_MS = 60_000;

// Per process: the last result, and the run under way (one at a time, however many reviewers look).
let last: { report: ChainReport; checkedAt: Date } | undefined;
let running: Promise<void> | undefined;

/**
 * The chain's verification for the reviewer banner. A walk over millions of entries takes a while,
 * so a page never waits for one: it shows the latest result (and its time) while a fresh walk
 * runs in the background when the last is over a minute old. The first call waits up to `waitMs`.
 */
export async function chainStatus(ctx: Ctx, waitMs = 3000): Promise<ChainStatus> {
  requireReviewer(ctx);
  if (!running && (!last || Date.now() - last.checkedAt.getTime() > FRESH_MS)) {
    running = verifyChain(ctx)
      .then((report) => {
        last = { report, checkedAt: new Date() };
      })
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
      });
  }
  if (!last && running) await Promise.race([running, new Promise((resolve) => setTimeout(resolve, waitMs))]);
  return last ?? { report: null, checkedAt: null };
}
