import type { Ctx } from "../context";
import type { UserPrincipal } from "../auth/principal";
import { sqlOf } from "../db/client";
import type { ChangelogType, DatasetListing } from "../db/schema";
import { AppError, NOT_VISIBLE } from "../errors";
import { datasetVersionAccess, releasedVersions, type ReleasedVersion } from "./access";
import { DATASET_ID_PATTERN } from "./identifiers";
import type { VersionFormat } from "./version-format";
import { versionRecords } from "./list-versions";
import { statisticsOf, versionStatistics, type VersionStatistics } from "./version-statistics";

/**
 * What the portal shows of datasets beyond the caller's licences. A `listed` dataset's catalog
 * facts (title, description, versions, episode counts, charts) are shown to every signed-in member
 * of an organisation, who may then request a licence (lib/catalog/access-requests.ts); its
 * episodes, annotations, files, README and previews stay behind the licence rule of
 * lib/catalog/access.ts, which this module never relaxes. API keys never come here: the API shows
 * a key only what its licences give, listed or not.
 */

/** A signed-in member of an organisation; anyone else (a key, a reviewer, an operator) is refused. */
export function requireMember(ctx: Ctx): asserts ctx is Ctx<UserPrincipal & { organizationId: string }> {
  const p = ctx.principal;
  if (p.kind !== "user" || !p.organizationId)
    throw new AppError("forbidden", "Listed datasets and access requests are for members of an organisation.");
}

export type ListedDatasetRecord = {
  dataset_id: string;
  title: string;
  description: string;
  updated_at: string;
  /** Newest first. */
  versions: { version: string; released_at: string; episode_count: number }[];
};

/** Every listed dataset with its released versions, by dataset id; counts as every reader has them. */
export async function listedDatasets(ctx: Ctx): Promise<ListedDatasetRecord[]> {
  requireMember(ctx);
  const rows = await sqlOf(ctx.db)<{ dataset_id: string; title: string; description: string; updated_at: Date }[]>`
    select d.id as dataset_id, d.title, d.description, d.updated_at
    from datasets d
    where d.listing = 'listed' and exists (select 1 from dataset_versions v where v.dataset_id = d.id)
    order by d.id`;
  return Promise.all(
    rows.map(async (r) => ({
      ...r,
      updated_at: r.updated_at.toISOString(),
      versions: (await releasedVersions(ctx, r.dataset_id)).map((v) => ({
        version: v.version,
        released_at: v.releasedAt.toISOString(),
        episode_count: v.episodeCount,
      })),
    })),
  );
}

export type PortalVersion = {
  version: string;
  /** Usable by the caller now: its episodes can be explored and downloaded. */
  licensed: boolean;
  released_at: string;
  episode_count: number;
  changelog: { type: ChangelogType; description: string }[];
  format?: VersionFormat;
};

export type PortalDataset = {
  dataset_id: string;
  title: string;
  description: string;
  listed: boolean;
  /** Newest first. */
  versions: PortalVersion[];
};

type DatasetRow = { title: string; description: string; listing: DatasetListing };

async function datasetRow(ctx: Ctx, datasetId: string): Promise<DatasetRow | undefined> {
  if (!DATASET_ID_PATTERN.test(datasetId)) return undefined;
  const [row] = await sqlOf(ctx.db)<DatasetRow[]>`
    select title, description, listing from datasets where id = ${datasetId}`;
  return row;
}

/**
 * A dataset as the portal's dataset page shows it: one the caller holds a usable licence for, or a
 * listed one; otherwise the same 404 as a dataset that does not exist.
 */
export async function portalDataset(ctx: Ctx, datasetId: string): Promise<PortalDataset> {
  requireMember(ctx);
  const [row, access] = await Promise.all([
    datasetRow(ctx, datasetId),
    DATASET_ID_PATTERN.test(datasetId) ? datasetVersionAccess(ctx, datasetId) : Promise.resolve([]),
  ]);
  const listed = row?.listing === "listed";
  if (!row || !access.length || (!listed && !access.some((v) => v.licenceId)))
    throw new AppError("not_found", NOT_VISIBLE.dataset);
  return {
    dataset_id: datasetId,
    title: row.title,
    description: row.description,
    listed,
    versions: await versionRecords(ctx, access),
  };
}

/** Nothing for a listed dataset; the same 404 as a missing dataset for an unlisted one. */
export async function requireListedDataset(ctx: Ctx, datasetId: string): Promise<void> {
  requireMember(ctx);
  const row = await datasetRow(ctx, datasetId);
  if (row?.listing !== "listed") throw new AppError("not_found", NOT_VISIBLE.dataset);
}

/** A released version of a listed dataset; 404 for an unlisted dataset or a version it does not have. */
export async function requireListedVersion(ctx: Ctx, datasetId: string, version: string): Promise<ReleasedVersion> {
  await requireListedDataset(ctx, datasetId);
  const found = (await releasedVersions(ctx, datasetId)).find((v) => v.version === version);
  if (!found) throw new AppError("not_found", `Dataset '${datasetId}' has no version '${version}'.`);
  return found;
}

/** A version's charts: a listed dataset's for any member, otherwise by the licence rule (403/404 as the API). */
export async function portalVersionStatistics(
  ctx: Ctx,
  input: { datasetId: string; version: string },
): Promise<VersionStatistics> {
  requireMember(ctx);
  const row = await datasetRow(ctx, input.datasetId);
  if (row?.listing === "listed")
    return statisticsOf(ctx, input.datasetId, await requireListedVersion(ctx, input.datasetId, input.version));
  return versionStatistics(ctx, input);
}
