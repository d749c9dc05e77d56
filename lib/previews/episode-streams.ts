import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import type { LeRobotFormatInfo } from "../db/schema";
import { requireReviewer } from "../auth/authorize";
import type { EpisodeDetail } from "../catalog/get-episode";
import { episodeRecord } from "../catalog/get-episode";
import { spanRows, toAnnotation, type AnnotationRecord } from "../catalog/list-annotations";
import { previewBasis, previewVersion, reviewedEpisodeVersions } from "./access";
import { episodeFiles, isVideo } from "./episode-files";

/**
 * A stream of an episode as the player lists it: video is played, anything else is listed with its
 * size. `codec` is the video codec where the import stated one (a LeRobot camera's `video.codec`),
 * so that a stream the browser cannot play can be named with what it holds.
 */
export type EpisodeStream = {
  stream: string;
  media_type: string;
  size_bytes: number;
  video: boolean;
  codec: string | null;
};

/**
 * The streams of an episode in a version, read on the basis the caller would preview it on (a
 * licence, or the review permission): what the player offers before anything is disclosed.
 * Listing them discloses nothing; only a preview's URLs do.
 */
export async function episodeStreams(
  ctx: Ctx,
  input: { episodeId: string; version?: string },
): Promise<EpisodeStream[]> {
  const version = await previewVersion(ctx, previewBasis(ctx), input.episodeId, input.version);
  const sql = sqlOf(ctx.db);
  const [files, [format]] = await Promise.all([
    episodeFiles(sql, version.versionId, input.episodeId),
    sql<
      { info: LeRobotFormatInfo | null }[]
    >`select format_info as info from dataset_versions where id = ${version.versionId}`,
  ]);
  const codecs = new Map((format?.info?.cameras ?? []).map((c) => [c.key, c.codec]));
  return files.map((f) => ({
    stream: f.stream,
    media_type: f.media_type,
    size_bytes: f.size_bytes,
    video: isVideo(f),
    codec: codecs.get(f.stream) ?? null,
  }));
}

/**
 * An episode as a reviewer or admin sees it to check what was disclosed: its metadata and spans in
 * any version that holds it (the newest, or the pinned one), without a licence.
 */
export async function reviewEpisode(
  ctx: Ctx,
  input: { episodeId: string; version?: string },
): Promise<EpisodeDetail & { spans: AnnotationRecord[] }> {
  requireReviewer(ctx);
  const { chosen, all } = await reviewedEpisodeVersions(ctx, input.episodeId, input.version);
  const [episode, spans] = await Promise.all([
    episodeRecord(sqlOf(ctx.db), chosen.versionId, input.episodeId),
    spanRows(ctx, chosen.versionId, input.episodeId),
  ]);
  return {
    dataset_id: chosen.datasetId,
    version: chosen.version,
    episode,
    versions: all.map((v) => v.version),
    spans: spans.map(toAnnotation),
  };
}
