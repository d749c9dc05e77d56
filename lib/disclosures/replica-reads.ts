import type { Ctx } from "../context";
import { replicaLag, type ReplicaLag } from "../db/replica";
import { requireReviewer } from "../auth/authorize";

/**
 * As of when the reviewer's reads of the log are: null when they are the primary's (current), or
 * the replica's lag, which a page that read from it shows.
 */
export async function reviewReadsAsOf(ctx: Ctx): Promise<ReplicaLag | null> {
  requireReviewer(ctx);
  return ctx.replica ? replicaLag(ctx.replica) : null;
}
