import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";
import { CacheableRead } from "../cache/cacheable";
import { requireLicensedVersion } from "./access";
import { cachedRead } from "../cache/read-cache";
import { episodeNotWithdrawn } from "./withdrawn";
import {
  assertDurationRange,
  episodeConditions,
  episodeFilterOf,
  filterBindingParts,
  matchingTotal,
  type EpisodeFilter,
} from "./episode-filter";

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

export type { EpisodeFilter };

export type ListEpisodesInput = EpisodeFilter & { datasetId: string; version: string; limit: number; cursor?: string };

export type EpisodePage = {
  dataset_id: string;
  version: string;
  total: number;
  episodes: EpisodeRecord[];
  next_cursor: string | null;
};

/** What a cursor of a version's episode list is bound to: the endpoint, the version and the filter. */
export function episodeCursorBinding(datasetId: string, version: string, filter: EpisodeFilter): string {
  return queryBinding(["episodes", datasetId, version, ...filterBindingParts(filter)]);
}

/**
 * One page of a licensed version's episodes in episode_id byte order; `total` counts all matches.
 * Outcome, environment, task and contributor each have an index ending in episode_id, so a page
 * filtered on any of them is one index range scan at any depth; has_recovery and a duration range
 * are checked along that walk (or the primary key's), reading about as many rows as the page holds
 * divided by the share of episodes they keep.
 * Authorized and its cursor checked here; the page itself is read when asked for (and by the API only
 * when its cache does not hold it: a released version's page never changes).
 */
export async function episodePage(ctx: Ctx, input: ListEpisodesInput): Promise<CacheableRead<EpisodePage>> {
  const filter = episodeFilterOf(input);
  assertDurationRange(filter);
  const licensed = await requireLicensedVersion(ctx, input.datasetId, input.version);
  const { versionId, withdrawnEpisodes } = licensed;
  const bound = filterBindingParts(filter);
  const binding = episodeCursorBinding(input.datasetId, input.version, filter);
  const after = input.cursor ? decodeCursor(input.cursor, binding, ["string"])[0] : undefined;
  // The version id stands for the dataset and version; the rest is every parameter of the page.
  return new CacheableRead(["episodes", versionId, ...bound, after ?? null, input.limit], "immutable", async () => {
    const sql = sqlOf(ctx.db);
    // Distinct statements per filter shape, so each prepared plan fits its own index.
    const [rows, total] = await Promise.all([
      sql<EpisodeRecord[]>`
        select episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams
        from episodes e
        where version_id = ${versionId}
          ${withdrawnEpisodes ? sql`and ${episodeNotWithdrawn(sql, versionId)}` : sql``}
          ${episodeConditions(sql, filter)}
          ${after === undefined ? sql`` : sql`and episode_id > ${after}`}
        order by episode_id
        limit ${input.limit + 1}`,
      // Every page of a walk has the same total: counted once per filter (where it is counted at all).
      cachedRead(ctx, "episodes", ["episodes-total", versionId, ...bound], () => matchingTotal(sql, licensed, filter)),
    ]);
    const page = rows.slice(0, input.limit);
    const last = page.at(-1);
    return {
      dataset_id: input.datasetId,
      version: input.version,
      total,
      episodes: page,
      next_cursor: rows.length > input.limit && last ? encodeCursor(binding, [last.episode_id]) : null,
    };
  });
}

export async function listEpisodes(ctx: Ctx, input: ListEpisodesInput): Promise<EpisodePage> {
  return (await episodePage(ctx, input)).read();
}
