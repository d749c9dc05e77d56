import type { Ctx } from "../context";
import { getDb } from "../db/client";
import { env } from "../env";
import { errorFields, log } from "../log";
import { startSchedule } from "../schedule";
import { collectRenderedViews } from "./collect";

/** The first collection after a start: soon, but not in the middle of the server's own start. */
const FIRST_ATTEMPT_MS = 60_000;

/**
 * Every RENDERED_COLLECTION_INTERVAL_MINUTES each server collects the rendered meta/ of views
 * unused for RENDERED_VIEW_RETENTION_DAYS (lib/views/collect.ts), as the log's months are looked
 * after: a timer per instance, no job queue. Instances that collect at once agree through the
 * database (a view is deleted once; object batches take the lock in turn, and the second finds
 * nothing left). A failure is logged and tried again at the next interval; it never reaches a request.
 */
export function startRenderedCollectionFromEnv(): void {
  // The schedule is the service's own work, not a person's: it acts as an operator would with das-admin.
  const ctx: Ctx = {
    db: getDb(),
    requestId: "rendered-collection",
    principal: { kind: "operator", name: "rendered collection", organizationId: null },
  };
  startSchedule("rendered-collection", env().RENDERED_COLLECTION_INTERVAL_MINUTES, FIRST_ATTEMPT_MS, () =>
    collectOnSchedule(ctx),
  );
}

export async function collectOnSchedule(ctx: Ctx): Promise<void> {
  try {
    const collected = await collectRenderedViews(ctx);
    if (collected.views || collected.objects) log.info("rendered views collected", collected);
  } catch (error) {
    log.error("rendered views not collected; trying again at the next interval", { ...errorFields(error) });
  }
}
