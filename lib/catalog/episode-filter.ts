import type { PendingQuery, Row } from "postgres";
import type { Sql } from "../db/client";
import { countOf, type FacetCounts } from "../db/schema";
import { AppError } from "../errors";
import { episodeNotWithdrawn } from "./withdrawn";

/**
 * Which episodes of a version a list, its total, or a download by filter covers: every field given
 * must hold, and a field left out does not narrow. One type for the API's episode pages, the
 * portal's explorer and downloads (whose request records it as sent, lib/downloads/scope.ts).
 * The duration range is closed: `min_duration_s <= duration_s <= max_duration_s`.
 */
export type EpisodeFilter = {
  outcome?: string;
  environment?: string;
  task?: string;
  contributor?: string;
  has_recovery?: boolean;
  min_duration_s?: number;
  max_duration_s?: number;
};

/** The filter's fields in the order cursors and cache keys name them. */
export const EPISODE_FILTER_FIELDS = [
  "outcome",
  "environment",
  "task",
  "contributor",
  "has_recovery",
  "min_duration_s",
  "max_duration_s",
] as const satisfies readonly (keyof EpisodeFilter)[];

/** Only the filter's own fields (from a wider input such as a page's parameters), the absent ones left out. */
export function episodeFilterOf(input: EpisodeFilter): EpisodeFilter {
  const filter: Record<string, unknown> = {};
  for (const field of EPISODE_FILTER_FIELDS) if (input[field] !== undefined) filter[field] = input[field];
  return filter as EpisodeFilter;
}

/** Whether the filter narrows at all. */
export const isFiltered = (filter: EpisodeFilter): boolean =>
  EPISODE_FILTER_FIELDS.some((field) => filter[field] !== undefined);

/**
 * The duration range's rule, for callers that read the two bounds apart (query parameters, a
 * request body): a range whose minimum exceeds its maximum matches nothing, and is far more likely a
 * mistake than a question, so it is refused rather than answered with an empty list.
 */
export function durationRangeProblem(filter: EpisodeFilter): string | null {
  const { min_duration_s: min, max_duration_s: max } = filter;
  return min !== undefined && max !== undefined && min > max
    ? `min_duration_s (${min}) must not exceed max_duration_s (${max})`
    : null;
}

export function assertDurationRange(filter: EpisodeFilter): void {
  const problem = durationRangeProblem(filter);
  if (problem) throw new AppError("invalid_parameter", problem);
}

/**
 * The values a cursor is bound to (decision 0016). Outcome and environment as they always were, so
 * cursors issued before the other filters existed still continue their walk; the others only when
 * one of them is given.
 */
export function filterBindingParts(filter: EpisodeFilter): (string | number | null)[] {
  const parts: (string | number | null)[] = [filter.outcome ?? null, filter.environment ?? null];
  const { task, contributor, has_recovery: recovery, min_duration_s: min, max_duration_s: max } = filter;
  if ([task, contributor, recovery, min, max].some((v) => v !== undefined))
    parts.push(
      task ?? null,
      contributor ?? null,
      recovery === undefined ? null : String(recovery),
      min ?? null,
      max ?? null,
    );
  return parts;
}

/**
 * The filter as conditions on a row aliased `e` that has the episode's columns (`episodes`, or
 * `episode_facets` without the duration), each `and ...`. Only the given fields become conditions,
 * so each filter shape is a distinct statement whose prepared plan fits its own index.
 */
export function episodeConditions(sql: Sql, filter: EpisodeFilter): PendingQuery<Row[]> {
  const { outcome, environment, task, contributor, has_recovery: recovery } = filter;
  const { min_duration_s: min, max_duration_s: max } = filter;
  return sql`${outcome === undefined ? sql`` : sql`and e.outcome = ${outcome}`}
    ${environment === undefined ? sql`` : sql`and e.environment = ${environment}`}
    ${task === undefined ? sql`` : sql`and e.task = ${task}`}
    ${contributor === undefined ? sql`` : sql`and e.contributor = ${contributor}`}
    ${recovery === undefined ? sql`` : recovery ? sql`and e.has_recovery` : sql`and not e.has_recovery`}
    ${min === undefined ? sql`` : sql`and e.duration_s >= ${min}::float8`}
    ${max === undefined ? sql`` : sql`and e.duration_s <= ${max}::float8`}`;
}

/** Episodes matching outcome and/or environment, counted at import: released versions never change. */
export function facetCount(counts: FacetCounts, episodeCount: number, filter: EpisodeFilter): number {
  const { outcome, environment } = filter;
  if (outcome !== undefined && environment !== undefined)
    return countOf(counts.pairs, JSON.stringify([outcome, environment]));
  if (outcome !== undefined) return countOf(counts.outcome, outcome);
  if (environment !== undefined) return countOf(counts.environment, environment);
  return episodeCount;
}

type CountedVersion = {
  versionId: number;
  episodeCount: number;
  facetCounts: FacetCounts;
  withdrawnEpisodes: number;
};

/**
 * How many of a version's episodes (withdrawn ones left out) match the filter, each shape read the
 * cheapest way it can be:
 * - outcome and environment alone: the counts made at import (already without withdrawn episodes);
 * - any categorical filter: a sum over the version's `episode_facets` rows (one per combination of
 *   values, a few hundred at most in practice), less the withdrawn episodes that match;
 * - a duration range: a count of the matching episodes, from an index alone where one covers the
 *   filter (episodes_duration_idx, or task's or contributor's index, which include the duration).
 */
export async function matchingTotal(sql: Sql, version: CountedVersion, filter: EpisodeFilter): Promise<number> {
  const { versionId, withdrawnEpisodes } = version;
  const beyondFacets = (["task", "contributor", "has_recovery"] as const).some((f) => filter[f] !== undefined);
  const ranged = filter.min_duration_s !== undefined || filter.max_duration_s !== undefined;
  if (!beyondFacets && !ranged) return facetCount(version.facetCounts, version.episodeCount, filter);
  if (ranged) {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from episodes e
      where e.version_id = ${versionId} ${episodeConditions(sql, filter)}
        ${withdrawnEpisodes ? sql`and ${episodeNotWithdrawn(sql, versionId)}` : sql``}`;
    return row!.n;
  }
  const [row] = await sql<{ n: number }[]>`
    select coalesce(sum(e.episodes), 0)::int
      ${
        withdrawnEpisodes
          ? sql`- (select count(*)::int from withdrawn_episodes w join episodes e on e.version_id = w.version_id and e.episode_id = w.episode_id
              where w.version_id = ${versionId} ${episodeConditions(sql, filter)})`
          : sql``
      } as n
    from episode_facets e where e.version_id = ${versionId} ${episodeConditions(sql, filter)}`;
  return row!.n;
}
