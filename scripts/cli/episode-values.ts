import type { ApiClient, EpisodeFilter } from "@/lib/client/api";

/** Episodes read to find a version's values: enough for any version a filter mistake is made on, without reading millions. */
const READ_AT_MOST = 10_000;

const CATEGORICAL = ["outcome", "environment", "task", "contributor"] as const;
const PLURAL = { outcome: "outcomes", environment: "environments", task: "tasks", contributor: "contributors" };

/**
 * What to say when a filter matched no episode: the values the version has for each field that was
 * filtered on ("its outcomes are failure, success"), so that `--outcome failed` is answered with
 * `failure`, and the durations it spans when a duration range was given. The API has no list of a
 * version's values, so its episodes are read (at most 10,000, and the message says so when there
 * are more).
 */
export async function filterValuesHint(
  api: ApiClient,
  datasetId: string,
  version: string,
  filter: EpisodeFilter,
): Promise<string | null> {
  const fields = CATEGORICAL.filter((field) => filter[field] !== undefined);
  const ranged = filter.min_duration_s !== undefined || filter.max_duration_s !== undefined;
  if (!fields.length && !ranged) return null;
  const seen = {
    outcome: new Set<string>(),
    environment: new Set<string>(),
    task: new Set<string>(),
    contributor: new Set<string>(),
  };
  let shortest = Number.POSITIVE_INFINITY;
  let longest = Number.NEGATIVE_INFINITY;
  let total = 0;
  let read = 0;
  for await (const episode of api.episodes(datasetId, version, {}, (t) => (total = t))) {
    for (const field of fields) seen[field].add(episode[field]);
    shortest = Math.min(shortest, episode.duration_s);
    longest = Math.max(longest, episode.duration_s);
    if (++read >= READ_AT_MOST) break;
  }
  if (!total) return `${datasetId}@${version} has no episodes.`;
  const among =
    read < total ? ` among its first ${read.toLocaleString("en")} of ${total.toLocaleString("en")} episodes` : "";
  const lines = fields.map(
    (field) =>
      `${datasetId}@${version}'s ${PLURAL[field]}${among}: ${[...seen[field]].sort().join(", ")} (--${field} ${filter[field]} matches none of them exactly).`,
  );
  if (ranged) lines.push(`${datasetId}@${version}'s episodes${among} last from ${shortest} s to ${longest} s.`);
  return lines.join("\n");
}
