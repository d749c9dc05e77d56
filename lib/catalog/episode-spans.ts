import type { Ctx } from "../context";
import { resolveEpisodeVersion, spanRows, toAnnotation, type AnnotationRecord } from "./list-annotations";

export type EpisodeSpans = {
  episode_id: string;
  dataset_id: string;
  version: string;
  spans: AnnotationRecord[];
};

/**
 * Every subtask span of an episode at once, for a page that draws the whole timeline: the same
 * version, licence check and order as `listAnnotations`, without its cursor pages.
 */
export async function listEpisodeSpans(
  ctx: Ctx,
  input: { episodeId: string; version?: string },
): Promise<EpisodeSpans> {
  const { chosen } = await resolveEpisodeVersion(ctx, input.episodeId, input.version);
  const rows = await spanRows(ctx, chosen.versionId, input.episodeId);
  return {
    episode_id: input.episodeId,
    dataset_id: chosen.datasetId,
    version: chosen.version,
    spans: rows.map(toAnnotation),
  };
}
