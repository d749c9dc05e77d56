import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import type { RequestedScope } from "../db/schema";
import { AppError } from "../errors";
import { newLogId } from "../ids";
import { canonicalJson } from "../canonical-json";
import { appendToLog, logClock, notRecorded, type Refusal, type Refused } from "../disclosures/append";
import { equalEntryValid, reusableEntry } from "../disclosures/reuse";
import { episodesDigest, filesDigest, sha256Hex } from "../disclosures/chain";
import { objectKey, presigner, URL_TTL_SECONDS } from "../storage/config";
import { deliveredFiles } from "../fingerprints/delivered";
import { previewBasis, previewVersion, type PreviewBasis, type PreviewVersion } from "./access";
import { episodeFiles, isVideo, type EpisodeFile } from "./episode-files";
import { refuseWithdrawnContent, withdrawnMeanwhile } from "../catalog/withdrawn";
import { byteOrder } from "../byte-order";

/** What a preview asks for: one episode, in a version (the newest the caller may read by default), some or all of its video streams. */
export type PreviewRequest = { episode_id: string; version?: string; streams?: string[] };

export type PreviewStream = {
  stream: string;
  /** A signed GET URL of the file holding the stream (HTTP Range requests work), valid until `expires_at`. */
  url: string;
  media_type: string;
  /** Where the episode lies in that file, in the file's seconds. */
  start_s: number;
  end_s: number;
};

export type Preview = {
  preview_id: string;
  episode_id: string;
  dataset_id: string;
  version: string;
  expires_at: string;
  streams: PreviewStream[];
};

/**
 * A repeat within the last minute of an earlier preview's URLs is a new preview: a player handed
 * URLs about to stop working would only have to ask again.
 */
export const PREVIEW_REUSE_MARGIN_SECONDS = 60;

/** The log's refusal of a preview while an equal one is valid (the one this request reuses then). */
const equalPreviewValid: Refusal = equalEntryValid("an equal preview valid", PREVIEW_REUSE_MARGIN_SECONDS);

/**
 * Signed URLs to watch an episode's video streams, disclosed in the log first (channel
 * `preview`): content leaves the service through them as through a download. The scope is the
 * episode and the streams played; the episodes disclosed are every episode the signed files hold. One entry per recipient, episode, version and streams while an
 * earlier preview's URLs are valid: a repeat (the player pressed again, a second tab) returns that
 * same preview, same id, URLs and expiry, and writes nothing. The decision is made under the
 * chain's lock, so concurrent repeats cannot write two entries. As for downloads, URLs are signed
 * only after the entry has committed; if the commit fails, the caller gets 503 and no URL.
 */
export async function createPreview(
  ctx: Ctx,
  request: PreviewRequest,
): Promise<{ preview: Preview; replayed: boolean }> {
  // Another request made the same preview between our look and the append, or an episode of the
  // preview was withdrawn meanwhile: the log refused the entry. Asked again, the preview is the
  // other request's, or the withdrawal is seen; refused twice, 503.
  for (let attempt = 1; ; attempt++) {
    const made = await recordPreview(ctx, request);
    if (!("refused" in made)) return withUrls(made, request);
    if (attempt > 1) throw notRecorded("The preview", made);
  }
}

/** The preview's URLs, signed at its entry's time: a 503 if they cannot be. */
async function withUrls(
  made: Exclude<Awaited<ReturnType<typeof recordPreview>>, Refused>,
  request: PreviewRequest,
): Promise<{ preview: Preview; replayed: boolean }> {
  try {
    const urls = await presigner().presignKeys(
      made.files.map((f) => f.objectKey),
      { signingDate: made.occurredAt, expiresIn: URL_TTL_SECONDS },
    );
    return {
      replayed: made.replayed,
      preview: {
        preview_id: made.id,
        episode_id: request.episode_id,
        dataset_id: made.version.datasetId,
        version: made.version.version,
        expires_at: made.expiresAt.toISOString(),
        streams: made.files.map((f, i) => ({
          stream: f.stream,
          url: urls[i]!,
          media_type: f.media_type,
          start_s: f.start_s,
          end_s: f.end_s,
        })),
      },
    };
  } catch (error) {
    throw notRecorded("The preview", error);
  }
}

/**
 * The preview's files and its entry in the log: an earlier valid preview of the same request, or
 * a new one; or the log's refusal of the new one.
 */
async function recordPreview(ctx: Ctx, request: PreviewRequest) {
  const basis = previewBasis(ctx);
  const sql = sqlOf(ctx.db);
  const version = await previewVersion(ctx, basis, request.episode_id, request.version);
  const chosen = chosenStreams(await episodeFiles(sql, version.versionId, request.episode_id), request, version);
  // A video shared with a withdrawn episode would play it too (a reviewer's version says nothing of withdrawals: asked).
  if (!("withdrawnEpisodes" in version) || (version as { withdrawnEpisodes: number }).withdrawnEpisodes > 0)
    await refuseWithdrawnContent(sql, version.versionId, chosen);
  // A licensee's preview of a fingerprinted version plays their licence's own copies (a 503 while
  // any is being made); a reviewer's plays the originals.
  const licenceId = basis.kind === "licence" ? version.licenceId : null;
  const files = await deliveredFiles(sql, version, licenceId, chosen);
  const copies =
    version.fingerprinted && licenceId !== null ? files.map((f) => ({ path: f.path, sha256: f.sha256 })) : undefined;
  const requestedScope: RequestedScope = { episode_ids: [request.episode_id], streams: files.map((f) => f.stream) };
  const requestSha256 = sameRequest(basis, version, requestedScope);
  // Looked for before the chain's lock: a committed preview is the answer whoever made it. Whether
  // one was committed since is decided again under the lock, by the append itself.
  const earlier = await validPreview(ctx, requestSha256);
  if (earlier)
    return {
      id: earlier.id,
      occurredAt: earlier.occurred_at,
      expiresAt: earlier.expires_at,
      version,
      files,
      replayed: true,
    };
  // A file that holds several episodes (LeRobot v3.0) shows all of them to whoever has its URL:
  // every episode of every file signed is disclosed, as for a download.
  const delivered = [...new Set([request.episode_id, ...files.flatMap((f) => f.episode_ids)])].sort(byteOrder);
  const chained = await appendToLog(ctx, {
    entry: {
      id: newLogId("pv"),
      organizationId: basis.kind === "licence" ? basis.organizationId : null,
      apiKeyId: basis.kind === "licence" ? basis.apiKeyId : null,
      userId: basis.userId,
      reviewerRole: basis.kind === "review" ? basis.role : null,
      channel: "preview",
      datasetId: version.datasetId,
      version: version.version,
      versionId: version.versionId,
      licenceId: version.licenceId,
      // A reviewer's preview has no licence, so it names no terms.
      termsSha256: basis.kind === "licence" ? version.termsSha256 : undefined,
      requestedScope,
      episodeCount: delivered.length,
      fileCount: files.length,
      totalBytes: files.reduce((sum, f) => sum + f.size_bytes, 0),
      episodesSha256: episodesDigest(delivered),
      ...(copies ? { filesSha256: filesDigest(copies) } : {}),
      requestId: ctx.requestId,
      idempotencyScope: null,
      idempotencyKey: null,
      requestSha256,
    },
    episodeIds: delivered,
    ...(copies ? { files: copies } : {}),
    ttlSeconds: URL_TTL_SECONDS,
    refusals: [equalPreviewValid, withdrawnMeanwhile],
  }).catch((error) => {
    throw notRecorded("The preview", error);
  });
  if ("refused" in chained) return chained;
  return {
    id: chained.id,
    occurredAt: chained.occurredAt,
    expiresAt: chained.expiresAt,
    version,
    files,
    replayed: false,
  };
}

/** The video files asked for (all of the episode's by default); any stream named that is not one is a 400 naming it. */
function chosenStreams(files: EpisodeFile[], request: PreviewRequest, version: PreviewVersion): EpisodeFile[] {
  const videos = files.filter(isVideo);
  const where = `episode '${request.episode_id}' of ${version.datasetId}@${version.version}`;
  if (request.streams) {
    const playable = new Set(videos.map((f) => f.stream));
    const refused = request.streams.filter((s) => !playable.has(s));
    if (refused.length) {
      throw new AppError(
        "invalid_body",
        `Not a video stream of ${where}: ${refused.join(", ")}. ${videos.length ? `Its video streams are: ${[...playable].join(", ")}.` : "It has no video streams."}`,
      );
    }
    return videos.filter((f) => request.streams!.includes(f.stream));
  }
  if (!videos.length)
    throw new AppError("invalid_body", `There is no video to preview in ${where}: it has no video streams.`);
  return videos;
}

/** What makes two previews the same: the recipient, the basis it was allowed on, the version and the scope. */
function sameRequest(basis: PreviewBasis, version: PreviewVersion, scope: RequestedScope): string {
  return sha256Hex(
    canonicalJson({ preview: { basis, version_id: version.versionId, licence_id: version.licenceId, scope } }),
  );
}

/** The newest preview of the same request whose URLs are valid for at least the margin, at the log's time. */
async function validPreview(
  ctx: Ctx,
  requestSha256: string,
): Promise<{ id: string; occurred_at: Date; expires_at: Date } | undefined> {
  const sql = sqlOf(ctx.db);
  const [row] = await sql<{ id: string; occurred_at: Date; expires_at: Date }[]>`
    select v.id, v.occurred_at, v.expires_at from disclosures v
    where ${reusableEntry(sql, { requestSha256, at: logClock(sql, ctx.clock), marginSeconds: PREVIEW_REUSE_MARGIN_SECONDS })}
    order by expires_at desc limit 1`;
  return row;
}
