import type { Ctx } from "../context";
import { requireAdmin } from "../auth/authorize";
import { sqlOf } from "../db/client";
import { env } from "../env";
import { deleteObject, s3Client } from "../storage/client";
import { renderedObjectKey, storeLocation, URL_TTL_SECONDS } from "../storage/config";
import { RENDERED_OBJECTS_LOCK, USED_AT_RESOLUTION_SECONDS } from "./render";

/**
 * Collection of rendered meta/ (decision 0147). Every withdrawal, fingerprinted licence or camera
 * subset makes views of new keys; the old ones are never asked for again. Two steps:
 *
 * 1. Views unused for longer than the retention are deleted with their files' rows, in one
 *    statement. A reader that touches a view's `used_at` (lib/views/render.ts's renderedView)
 *    at the same moment decides the race by row lock: touched first, the view is no longer old
 *    and is kept; deleted first, the reader finds it gone and renders it again.
 * 2. Objects of the ledger (`rendered_objects`) that no rendered_files row names any more are
 *    deleted from the store, then from the ledger, a batch per transaction, holding the
 *    rendered-objects lock alone: a render holds it shared from before it looks for its objects
 *    in the store until its rows commit, so no object is deleted between a render's put (or its
 *    finding the object already there) and the rows that name it. A batch whose store deletions
 *    fail rolls back its ledger rows, and the next run deletes them again (S3 deletes are
 *    idempotent); a crash half way leaves the same state.
 *
 * The retention is in days, far longer than anything that may still use a view's objects without
 * touching the view: a signed URL (URL_TTL_SECONDS), a Hub GET's reused disclosure (as long as its
 * URL), a plan's URLs (the same), the hour `used_at` may lag. A view collected and then asked for
 * is rendered again, to the same bytes.
 */

export type Collection = {
  /** Views deleted, unused for longer than the retention. */
  views: number;
  /** Their files' rows. */
  files: number;
  /** Objects deleted from the store (no remaining view names them). */
  objects: number;
  retention_days: number;
};

/** Objects deleted per transaction: renders wait for at most one batch's store deletions. */
const OBJECTS_PER_BATCH = 200;
const PARALLEL_DELETES = 8;

/**
 * The shortest retention the service accepts (RENDERED_VIEW_RETENTION_DAYS is at least 1): a day,
 * far longer than a signed URL's life and the lag of `used_at` together (the test holds it so).
 */
export const MIN_RETENTION_SECONDS = 86_400;
export const MUST_OUTLAST_SECONDS = URL_TTL_SECONDS + USED_AT_RESOLUTION_SECONDS;

export async function collectRenderedViews(
  ctx: Ctx,
  options: { retentionDays?: number; objectsPerBatch?: number } = {},
): Promise<Collection> {
  requireAdmin(ctx);
  const retentionDays = options.retentionDays ?? env().RENDERED_VIEW_RETENTION_DAYS;
  const retentionSeconds = retentionDays * 86_400;
  if (!(retentionSeconds >= MIN_RETENTION_SECONDS))
    throw new Error(`a retention of ${retentionDays} day(s) is shorter than the shortest allowed, 1 day`);
  const sql = sqlOf(ctx.db);
  // Step 1. The files' rows go in the same statement as their view (the key is checked at its end).
  const [gone] = await sql<{ views: number; files: number }[]>`
    with views as (
      delete from rendered_views where used_at < now() - make_interval(secs => ${retentionSeconds})
      returning view_key
    ), files as (
      delete from rendered_files f using views v where f.view_key = v.view_key returning f.sha256
    )
    select (select count(*) from views)::int as views, (select count(*) from files)::int as files`;
  // Step 2, a batch at a time until no object is left that no row names.
  const location = storeLocation();
  const client = s3Client(location);
  let objects = 0;
  try {
    for (;;) {
      const deleted = await sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtext(${RENDERED_OBJECTS_LOCK}))`;
        const orphans = await tx<{ sha256: string }[]>`
          select o.sha256 from rendered_objects o
          where not exists (select 1 from rendered_files f where f.sha256 = o.sha256)
          order by o.sha256 limit ${options.objectsPerBatch ?? OBJECTS_PER_BATCH}`;
        const shas = orphans.map((o) => o.sha256);
        for (let at = 0; at < shas.length; at += PARALLEL_DELETES)
          await Promise.all(
            shas
              .slice(at, at + PARALLEL_DELETES)
              .map((sha) => deleteObject(client, location.bucket, renderedObjectKey(sha))),
          );
        if (shas.length) await tx`delete from rendered_objects where sha256 = any(${shas}::text[])`;
        return shas.length;
      });
      objects += deleted;
      if (!deleted) break;
    }
  } finally {
    client.destroy();
  }
  return { views: gone!.views, files: gone!.files, objects, retention_days: retentionDays };
}
