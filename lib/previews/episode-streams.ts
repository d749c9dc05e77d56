import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireReviewer } from "../auth/authorize";
import type { EpisodeDetail } from "../catalog/get-episode";
import { episodeRecord } from "../catalog/get-episode";
import { spanRows, toAnnotation, type AnnotationRecord } from "../catalog/list-annotations";
import { previewBasis, previewVersion, reviewedEpisodeVersions } from "./access";
import { episodeFiles, isVideo } from "./episode-files";

/** A stream of an episode as the player lists it: video is played, anything else is listed with its size. */
export type EpisodeStream = { stream: string; media_type: string; size_bytes: number; video: boolean };

/**
 * The streams of an episode in a version, read on the basis the caller would preview it on (a
 * licence, or the review permission): what the player offers before anything is disclosed.
 * Listing them discloses nothing; only a preview's URLs do.
 */
export async function episodeStreams(ctx: Ctx, input: { episodeId: string; version?: string }): Promise<EpisodeStream[]> {
  const version = await previewVersion(ctx, previewBasis(ctx), input.episodeId, input.version);
  const files = await episodeFiles(sqlOf(ctx.db), version.versionId, input.episodeId);
  return files.map((f) => ({ stream: f.stream, media_type: f.media_type, size_bytes: f.size_bytes, video: isVideo(f) }));
}

/**
 * An episode as a reviewer or admin sees it to check what was disclosed: its metadata and spans in
 * any version that holds it (the newest, or the pinned one), without a licence.
 */
export async function reviewEpisode(ctx: Ctx, input: { episodeId: string; version?: string }): Promise<EpisodeDetail & { spans: AnnotationRecord[] }> {
  requireReviewer(ctx);
  const { chosen, all } = await reviewedEpisodeVersions(ctx, input.episodeId, input.version);
  const [episode, spans] = await Promise.all([episodeRecord(sqlOf(ctx.db), chosen.versionId, input.episodeId), spanRows(ctx, chosen.versionId, input.episodeId)]);
  return { dataset_id: chosen.datasetId, version: chosen.version, episode, versions: all.map((v) => v.version), spans: spans.map(toAnnotation) };
}
