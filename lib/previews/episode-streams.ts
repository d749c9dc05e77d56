import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import type { LeRobotFormatInfo } from "../db/schema";
import { requireReviewer } from "../auth/authorize";
import type { EpisodeDetail } from "../catalog/get-episode";
import { episodeRecord } from "../catalog/get-episode";
import { spanRows, toAnnotation, type AnnotationRecord } from "../catalog/list-annotations";
import { previewBasis, previewVersion, reviewedEpisodeVersions } from "./access";
import { readVersionDocument } from "../catalog/version-documents";
import { episodeFiles, isDataTable, isVideoFile } from "./episode-files";

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
  /** For a table of the robot's data (parquet), what the player needs to plot the episode's rows of it; null otherwise. */
  table: EpisodeTable | null;
};

/**
 * Where the episode's rows are in a table and what its columns' dimensions are called. A LeRobot
 * v3.0 data file holds many episodes: the player reads only the rows whose `episode_index` is the
 * episode's (and, by the file's statistics and page index, only their pages).
 */
export type EpisodeTable = {
  /** The episode's `episode_index` in a LeRobot dataset; null: every row of the file is the episode's. */
  episode_index: number | null;
  /** Each feature's dimension names, from LeRobot's meta/info.json (`features[key].names`); a dimension not named there is numbered. */
  names: Record<string, string[]>;
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
  const lerobot = Boolean(format?.info);
  const names = lerobot && files.some(isDataTable) ? await featureNames(ctx, version) : {};
  return files.map((f) => ({
    stream: f.stream,
    media_type: f.media_type,
    size_bytes: f.size_bytes,
    video: isVideoFile(f),
    codec: codecs.get(f.stream) ?? null,
    table: isDataTable(f) ? { episode_index: lerobot ? lerobotEpisodeIndex(input.episodeId) : null, names } : null,
  }));
}

/** The LeRobot importer names an episode `<dataset>-<episode_index as 6 digits>` (docs/lerobot.md). */
function lerobotEpisodeIndex(episodeId: string): number | null {
  const digits = /-(\d+)$/.exec(episodeId)?.[1];
  return digits === undefined ? null : Number(digits);
}

/**
 * Dimension names of each feature from meta/info.json. LeRobot writes `names` as a list, as
 * `{"motors": [...]}` or as nested lists; anything else (or an unreadable file) names nothing, and
 * the plots number the dimensions instead.
 */
async function featureNames(
  ctx: Ctx,
  version: { datasetId: string; version: string; versionId: number },
): Promise<Record<string, string[]>> {
  let features: Record<string, { names?: unknown }>;
  try {
    const info = await readVersionDocument(ctx, version, "meta/info.json");
    features = info && !info.truncated ? (JSON.parse(info.text).features ?? {}) : {};
  } catch {
    return {};
  }
  const flat = (value: unknown): string[] | null => {
    if (Array.isArray(value)) {
      const parts = value.map((v) => (typeof v === "string" ? [v] : flat(v)));
      return parts.every((p) => p !== null) ? parts.flat() : null;
    }
    if (value && typeof value === "object") {
      const lists = Object.values(value);
      return lists.length === 1 ? flat(lists[0]) : null;
    }
    return null;
  };
  const names: Record<string, string[]> = {};
  for (const [key, feature] of Object.entries(features ?? {})) {
    const list = flat(feature?.names);
    if (list?.length) names[key] = list.map((n) => n.slice(0, 200));
  }
  return names;
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
