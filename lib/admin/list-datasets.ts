import type { Ctx } from "../context";
import { requireAdmin } from "../auth/authorize";
import { listVersionChoices } from "./list-licences";

export type DatasetVersionsRecord = {
  dataset_id: string;
  title: string;
  /** Newest first. */
  versions: { version: string; released_at: string; episode_count: number }[];
};

/** Every dataset with its released versions, newest first: what an operator grants licences to. */
export async function listDatasetVersions(ctx: Ctx): Promise<DatasetVersionsRecord[]> {
  requireAdmin(ctx);
  const datasets = new Map<string, DatasetVersionsRecord>();
  for (const v of await listVersionChoices(ctx)) {
    let dataset = datasets.get(v.dataset_id);
    if (!dataset)
      datasets.set(v.dataset_id, (dataset = { dataset_id: v.dataset_id, title: v.dataset_title, versions: [] }));
    dataset.versions.push({ version: v.version, released_at: v.released_at, episode_count: v.episode_count });
  }
  return [...datasets.values()];
}
