import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import type { FacetCounts } from "../db/schema";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";
import { CacheableRead } from "../cache/cacheable";
import { requireLicensedVersion } from "./access";
import { episodeNotWithdrawn } from "./withdrawn";

export type EpisodeRecord = {
  episode_id: string;
  task: string;
  environment: string;
  duration_s: number;
  outcome: string;
  has_recovery: boolean;
  contributor: string;
  streams: string[];
};

export type EpisodeFilter = { outcome?: string; environment?: string };

export type ListEpisodesInput = EpisodeFilter & { datasetId: string; version: string; limit: number; cursor?: string };

export type EpisodePage = {
  dataset_id: string;
  version: string;
  total: number;
  episodes: EpisodeRecord[];
  next_cursor: string | null;
};

/** Episodes matching a filter, counted at import: released versions never change. */
export function matchingCount(counts: FacetCounts, episodeCount: number, filter: EpisodeFilter): number {
  const { outcome, environment } = filter;
  if (outcome !== undefined && environment !== undefined)
    return counts.pairs[JSON.stringify([outcome, environment])] ?? 0;
  if (outcome !== undefined) return counts.outcome[outcome] ?? 0;
  if (environment !== undefined) return counts.environment[environment] ?? 0;
  return episodeCount;
}

/**
 * One page of a licensed version's episodes in episode_id byte order; `total` counts all matches.
 * Each filter shape has an index ending in episode_id, so a page is one index range scan at any depth.
 * Authorized and its cursor checked here; the page itself is read when asked for (and by the API only
 * when its cache does not hold it: a released version's page never changes).
 */
export async function episodePage(ctx: Ctx, input: ListEpisodesInput): Promise<CacheableRead<EpisodePage>> {
  const { versionId, episodeCount, facetCounts, withdrawnEpisodes } = await requireLicensedVersion(
    ctx,
    input.datasetId,
    input.version,
  );
  const filter = { outcome: input.outcome, environment: input.environment };
  const binding = queryBinding(["episodes", input.datasetId, input.version, filter.outcome, filter.environment]);
  const after = input.cursor ? decodeCursor(input.cursor, binding, ["string"])[0] : undefined;
  // The version id stands for the dataset and version; the rest is every parameter of the page.
  return new CacheableRead(
    ["episodes", versionId, filter.outcome ?? null, filter.environment ?? null, after ?? null, input.limit],
    "immutable",
    async () => {
      const sql = sqlOf(ctx.db);
      // Distinct statements per filter shape, so each prepared plan fits its own index.
      const rows = await sql<EpisodeRecord[]>`
      select episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams
      from episodes e
      where version_id = ${versionId}
        ${withdrawnEpisodes ? sql`and ${episodeNotWithdrawn(sql, versionId)}` : sql``}
        ${filter.outcome === undefined ? sql`` : sql`and outcome = ${filter.outcome}`}
        ${filter.environment === undefined ? sql`` : sql`and environment = ${filter.environment}`}
        ${after === undefined ? sql`` : sql`and episode_id > ${after}`}
      order by episode_id
      limit ${input.limit + 1}`;
      const page = rows.slice(0, input.limit);
      const last = page.at(-1);
      return {
        dataset_id: input.datasetId,
        version: input.version,
        total: matchingCount(facetCounts, episodeCount, filter),
        episodes: page,
        next_cursor: rows.length > input.limit && last ? encodeCursor(binding, [last.episode_id]) : null,
      };
    },
  );
}

export async function listEpisodes(ctx: Ctx, input: ListEpisodesInput): Promise<EpisodePage> {
  return (await episodePage(ctx, input)).read();
}
