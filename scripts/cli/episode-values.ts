import type { ApiClient, EpisodeFilter } from "@/lib/client/api";

/** Episodes read to find a version's values: enough for any version a filter mistake is made on, without reading millions. */
const READ_AT_MOST = 10_000;

/**
 * What to say when a filter matched no episode: the values the version has for each field that was
 * filtered on ("its outcomes are failure, success"), so that `--outcome failed` is answered with
 * `failure`. The API has no list of a version's values, so its episodes are read (at most 10,000,
 * and the message says so when there are more).
 */
export async function filterValuesHint(
  api: ApiClient,
  datasetId: string,
  version: string,
  filter: EpisodeFilter,
): Promise<string | null> {
  const fields = (["outcome", "environment"] as const).filter((field) => filter[field] !== undefined);
  if (!fields.length) return null;
  const seen = { outcome: new Set<string>(), environment: new Set<string>() };
  let total = 0;
  let read = 0;
  for await (const episode of api.episodes(datasetId, version, {}, (t) => (total = t))) {
    for (const field of fields) seen[field].add(episode[field]);
    if (++read >= READ_AT_MOST) break;
  }
  if (!total) return `${datasetId}@${version} has no episodes.`;
  const among =
    read < total ? ` among its first ${read.toLocaleString("en")} of ${total.toLocaleString("en")} episodes` : "";
  const plural = { outcome: "outcomes", environment: "environments" };
  return fields
    .map(
      (field) =>
        `${datasetId}@${version}'s ${plural[field]}${among}: ${[...seen[field]].sort().join(", ")} (--${field} ${filter[field]} matches none of them exactly).`,
    )
    .join("\n");
}
