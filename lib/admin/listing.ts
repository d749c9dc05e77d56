import type { Ctx } from "../context";
import { requireAdmin } from "../auth/authorize";
import { sqlOf } from "../db/client";
import { withTx } from "../db/tx";
import { DATASET_LISTINGS, type DatasetListing } from "../db/schema";
import { AppError } from "../errors";
import { DATASET_ID_PATTERN } from "../catalog/identifiers";
import { recordAdminAction } from "./audit";

export type DatasetListingRecord = {
  dataset_id: string;
  title: string;
  listing: DatasetListing;
  version_count: number;
  pending_request_count: number;
};

/** Every dataset with its listing and its pending access requests, by dataset id. */
export async function listDatasetListings(ctx: Ctx): Promise<DatasetListingRecord[]> {
  requireAdmin(ctx);
  return sqlOf(ctx.db)<DatasetListingRecord[]>`
    select d.id as dataset_id, d.title, d.listing,
           (select count(*)::int from dataset_versions v where v.dataset_id = d.id) as version_count,
           (select count(*)::int from access_requests r join dataset_versions v on v.id = r.version_id
             where v.dataset_id = d.id and r.status = 'pending') as pending_request_count
    from datasets d order by d.id`;
}

/**
 * Lists or unlists a dataset in the portal (the API is unaffected). Audited as `dataset.listing`
 * when it changes; setting the listing it already has changes nothing and records nothing.
 */
export async function setDatasetListing(
  ctx: Ctx,
  input: { datasetId: string; listing: DatasetListing },
): Promise<{ listing: DatasetListing; previous: DatasetListing; changed: boolean }> {
  requireAdmin(ctx);
  if (!DATASET_LISTINGS.includes(input.listing))
    throw new AppError("invalid_parameter", `A listing is one of ${DATASET_LISTINGS.join(", ")}.`);
  return withTx(ctx, async (tx) => {
    const sql = sqlOf(tx.db);
    const [row] = DATASET_ID_PATTERN.test(input.datasetId)
      ? await sql<{ listing: DatasetListing }[]>`select listing from datasets where id = ${input.datasetId} for update`
      : [];
    if (!row) throw new AppError("not_found", `There is no dataset '${input.datasetId}'.`);
    if (row.listing === input.listing) return { listing: input.listing, previous: row.listing, changed: false };
    await sql`update datasets set listing = ${input.listing} where id = ${input.datasetId}`;
    await recordAdminAction(tx, "dataset.listing", input.datasetId, { listing: input.listing, previous: row.listing });
    return { listing: input.listing, previous: row.listing, changed: true };
  });
}
