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
  // A digest of the query, made only when a cursor is read or written: not for a page from the cache.
  const binding = () => episodeCursorBinding(input.datasetId, input.version, filter);
  const after = input.cursor ? decodeCursor(input.cursor, binding(), ["string"])[0] : undefined;
  // The version id stands for the dataset and version; the rest is every parameter of the page.
  return new CacheableRead(["episodes", versionId, ...bound, after ?? null, input.limit], async () => {
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
      next_cursor: rows.length > input.limit && last ? encodeCursor(binding(), [last.episode_id]) : null,
    };
  });
}

export async function listEpisodes(ctx: Ctx, input: ListEpisodesInput): Promise<EpisodePage> {
  return (await episodePage(ctx, input)).read();
}

export type FilterChoice = { value: string; count: number };

/** The values a licensed version's episodes have for the explorer's filters, each with its count, most frequent first. */
export type EpisodeFilterChoices = {
  tasks: FilterChoice[];
  contributors: FilterChoice[];
  /** Episodes with a recovery, and without one. */
  recoveries: { with: number; without: number };
  /** The shortest and longest duration, in seconds (0 for a version without episodes). */
  duration: { min: number; max: number };
};

/**
 * What the explorer offers to filter on beyond outcome and environment (which the version's
 * statistics already count), for a licensee only: contributors are people, never shown beside a
 * listed dataset's public facts. Read from `episode_facets` (a few hundred rows) less the withdrawn
 * episodes; the duration bounds from episodes_duration_idx's two ends.
 */
export async function episodeFilterChoices(
  ctx: Ctx,
  input: { datasetId: string; version: string },
): Promise<EpisodeFilterChoices> {
  const { versionId, withdrawnEpisodes } = await requireLicensedVersion(ctx, input.datasetId, input.version);
  const sql = sqlOf(ctx.db);
  const [facets, withdrawn, [bounds]] = await Promise.all([
    sql<{ task: string; contributor: string; has_recovery: boolean; n: number }[]>`
      select task, contributor, has_recovery, sum(episodes)::int as n
      from episode_facets where version_id = ${versionId} group by 1, 2, 3`,
    withdrawnEpisodes
      ? sql<{ task: string; contributor: string; has_recovery: boolean; n: number }[]>`
          select e.task, e.contributor, e.has_recovery, count(*)::int as n
          from withdrawn_episodes w join episodes e on e.version_id = w.version_id and e.episode_id = w.episode_id
          where w.version_id = ${versionId} group by 1, 2, 3`
      : Promise.resolve([]),
    sql<{ min: number | null; max: number | null }[]>`
      select (select duration_s from episodes e where version_id = ${versionId}
                ${withdrawnEpisodes ? sql`and ${episodeNotWithdrawn(sql, versionId)}` : sql``} order by duration_s limit 1) as min,
             (select duration_s from episodes e where version_id = ${versionId}
                ${withdrawnEpisodes ? sql`and ${episodeNotWithdrawn(sql, versionId)}` : sql``} order by duration_s desc limit 1) as max`,
  ]);
  const tasks = new Map<string, number>();
  const contributors = new Map<string, number>();
  const recoveries = { with: 0, without: 0 };
  const add = (
    rows: readonly { task: string; contributor: string; has_recovery: boolean; n: number }[],
    sign: 1 | -1,
  ) => {
    for (const { task, contributor, has_recovery, n } of rows) {
      tasks.set(task, (tasks.get(task) ?? 0) + sign * n);
      contributors.set(contributor, (contributors.get(contributor) ?? 0) + sign * n);
      recoveries[has_recovery ? "with" : "without"] += sign * n;
    }
  };
  add(facets, 1);
  add(withdrawn, -1);
  const byCount = (counts: Map<string, number>) =>
    [...counts]
      .filter(([, count]) => count > 0)
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
  return {
    tasks: byCount(tasks),
    contributors: byCount(contributors),
    recoveries,
    duration: { min: bounds?.min ?? 0, max: bounds?.max ?? 0 },
  };
}
