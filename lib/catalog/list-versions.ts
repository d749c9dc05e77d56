import type { ChangelogType } from "../db/schema";
import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { AppError } from "../errors";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";
import { CacheableRead } from "../cache/cacheable";
import { requireVisibleDataset } from "./access";
import type { VersionFormat } from "./version-format";

export type VersionRecord = {
  version: string;
  licensed: boolean;
  released_at: string;
  episode_count: number;
  changelog: { type: ChangelogType; description: string }[];
  /** A version imported from a LeRobot dataset: its facts. Left out for other versions. */
  format?: VersionFormat;
};

export type { VersionFormat };

export type ListVersionsInput = { datasetId: string; limit: number; cursor?: string };

export type VersionList = { dataset_id: string; versions: VersionRecord[]; next_cursor: string | null };

/**
 * All released versions of a visible dataset, newest first, each saying whether the caller holds it.
 * The page depends on the caller only through which of the dataset's versions it holds.
 */
export async function versionsPage(ctx: Ctx, input: ListVersionsInput): Promise<CacheableRead<VersionList>> {
  const access = await requireVisibleDataset(ctx, input.datasetId);
  const binding = queryBinding(["versions", input.datasetId]);
  // A dataset has tens of versions, already read newest first for the visibility check: page in memory.
  let start = 0;
  if (input.cursor) {
    const [after] = decodeCursor(input.cursor, binding, ["string"]);
    start = access.findIndex((v) => v.version === after) + 1;
    if (start === 0)
      throw new AppError("invalid_cursor", "The cursor does not fit this query. Start again without a cursor.");
  }
  const page = access.slice(start, start + input.limit);
  const held = access.filter((v) => v.licenceId !== null).map((v) => v.versionId);
  return new CacheableRead(["versions", input.datasetId, held, start, input.limit], async () => {
    const last = page.at(-1);
    return {
      dataset_id: input.datasetId,
      versions: await versionRecords(ctx, page),
      next_cursor: start + input.limit < access.length && last ? encodeCursor(binding, [last.version]) : null,
    };
  });
}

export async function listVersions(ctx: Ctx, input: ListVersionsInput): Promise<VersionList> {
  return (await versionsPage(ctx, input)).read();
}

/** Versions as the API and the portal show them: each with whether the caller holds it, and its changelog. */
export async function versionRecords(
  ctx: Ctx,
  versions: Awaited<ReturnType<typeof requireVisibleDataset>>,
): Promise<VersionRecord[]> {
  if (!versions.length) return [];
  const sql = sqlOf(ctx.db);
  const changelog = await sql<{ versionId: number; type: ChangelogType; description: string }[]>`
    select version_id as "versionId", type, description from changelog_entries
    where version_id in ${sql(versions.map((v) => v.versionId))}
    order by version_id, position`;
  return versions.map((v) => ({
    version: v.version,
    licensed: v.licenceId !== null,
    released_at: v.releasedAt.toISOString(),
    episode_count: v.episodeCount,
    changelog: changelog
      .filter((c) => c.versionId === v.versionId)
      .map((c) => ({ type: c.type, description: c.description })),
    ...(v.format ? { format: v.format } : {}),
  }));
}
