import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireLicensedVersion, type ReleasedVersion } from "./access";
import { episodeNotWithdrawn } from "./withdrawn";

export type Count = { value: string; count: number };
export type Bucket = { from: number; to: number; count: number };

export type VersionStatistics = {
  dataset_id: string;
  version: string;
  episode_count: number;
  file_count: number;
  total_bytes: number;
  streams: string[];
  outcomes: Count[];
  environments: Count[];
  recoveries: number;
  contributors: number;
  duration: { min: number; max: number; mean: number; buckets: Bucket[] };
};

const BUCKETS = 12;

// Released versions never change, so what is computed once per version is kept for the process;
// withdrawals only ever add to a version's withdrawn episodes, so their count completes the key.
const computed = new Map<
  string,
  Omit<VersionStatistics, "dataset_id" | "version" | "outcomes" | "environments" | "episode_count">
>();

/** The numbers behind a licensed version's charts: outcome split, environments, durations. */
export async function versionStatistics(
  ctx: Ctx,
  input: { datasetId: string; version: string },
): Promise<VersionStatistics> {
  return statisticsOf(ctx, input.datasetId, await requireLicensedVersion(ctx, input.datasetId, input.version));
}

/**
 * The numbers behind a released version's charts, for a caller already allowed to see them: the
 * licence rule above, or a listed dataset's catalog facts (lib/catalog/listing.ts).
 */
export async function statisticsOf(ctx: Ctx, datasetId: string, licensed: ReleasedVersion): Promise<VersionStatistics> {
  const byCount = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
  const key = `${licensed.versionId}:${licensed.withdrawnEpisodes}`;
  let rest = computed.get(key);
  if (!rest) {
    const sql = sqlOf(ctx.db);
    const [summary] = await sql<
      {
        streams: string[];
        recoveries: number;
        contributors: number;
        min: number | null;
        max: number | null;
        mean: number | null;
      }[]
    >`
      select v.streams,
             count(*) filter (where e.has_recovery)::int as recoveries, count(distinct e.contributor)::int as contributors,
             min(e.duration_s) as min, max(e.duration_s) as max, avg(e.duration_s) as mean
      from dataset_versions v left join episodes e on e.version_id = v.id
        ${licensed.withdrawnEpisodes ? sql`and ${episodeNotWithdrawn(sql, licensed.versionId)}` : sql``}
      where v.id = ${licensed.versionId} group by v.id`;
    const min = summary!.min ?? 0;
    const max = summary!.max ?? 0;
    const width = max > min ? (max - min) / BUCKETS : 1;
    const rows = await sql<{ bucket: number; count: number }[]>`
      select least(width_bucket(duration_s, ${min}::float8, ${min + width * BUCKETS}::float8, ${BUCKETS}), ${BUCKETS}) as bucket, count(*)::int as count
      from episodes e where version_id = ${licensed.versionId}
        ${licensed.withdrawnEpisodes ? sql`and ${episodeNotWithdrawn(sql, licensed.versionId)}` : sql``}
      group by 1`;
    const buckets = Array.from({ length: max > min ? BUCKETS : 1 }, (_, i) => ({
      from: min + i * width,
      to: min + (i + 1) * width,
      count: 0,
    }));
    for (const row of rows) buckets[Math.min(buckets.length, Math.max(1, row.bucket)) - 1]!.count += row.count;
    rest = {
      file_count: licensed.fileCount,
      total_bytes: licensed.totalBytes,
      streams: summary!.streams,
      recoveries: summary!.recoveries,
      contributors: summary!.contributors,
      duration: { min, max, mean: summary!.mean ?? 0, buckets },
    };
    computed.set(key, rest);
  }
  return {
    dataset_id: datasetId,
    version: licensed.version,
    episode_count: licensed.episodeCount,
    outcomes: byCount(licensed.facetCounts.outcome),
    environments: byCount(licensed.facetCounts.environment),
    ...rest,
  };
}
