import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { AppError } from "../errors";
import { byteOrder } from "../byte-order";
import { newLogId } from "../ids";
import { canonicalJson } from "../canonical-json";
import { refuseWithdrawnContent, withdrawnMeanwhile } from "../catalog/withdrawn";
import { appendToLog, logClock, notRecorded, type Refusal, type Refused } from "../disclosures/append";
import { equalEntryValid, reusableEntry } from "../disclosures/reuse";
import { episodesDigest, filesDigest, sha256Hex } from "../disclosures/chain";
import { presigner, URL_TTL_SECONDS } from "../storage/config";
import { lookUpPath, type HeldFile } from "../views/files";
import { isMetaPath, viewMeta, type VersionView } from "../views/view";
import { checkedPath } from "./entries";
import { hubError } from "./errors";

/**
 * `resolve`: one file of a revision. HEAD answers its metadata (the revision's sha, the file's
 * SHA-256 as its ETag, its size: of the caller's own copy on a fingerprinted version, whose
 * redirect is to that copy) and discloses nothing. GET answers a redirect to a signed URL of
 * the file in the object store, which the clients follow without the key (another host); the file
 * is first disclosed (channel `hub`, every episode it carries, as a download of it would: none for
 * a README or meta/), and the URL is signed only once that entry has committed. A GET of the same
 * file by the same key while the URL it was given is still valid (a resumed or retried download,
 * the byte ranges a reader asks for) gets that same URL and writes nothing (decision 0122).
 */

/** A URL with less than this left is not handed out again: a transfer would start on a dying URL. */
export const HUB_REUSE_MARGIN_SECONDS = 60;

/** The log's refusal of a GET while an equal one's URL is valid (the one this request reuses then). */
export const equalGetValid: Refusal = equalEntryValid("an equal Hub GET valid", HUB_REUSE_MARGIN_SECONDS);

export type ResolvedFile = { view: VersionView; file: HeldFile };

/** The file at `path` of the view, or the Hub's refusal: EntryNotFound, or 422 for a file shared with withdrawn episodes. */
export async function resolveFile(ctx: Ctx, view: VersionView, path: string): Promise<ResolvedFile> {
  const checked = checkedPath(path);
  const meta = isMetaPath(checked) ? await viewMeta(ctx, view) : null;
  const found = await lookUpPath(ctx, view, meta, checked);
  if ("file" in found) return { view, file: found.file };
  if (found.absent === "withdrawn" && !found.only)
    await refuseWithdrawnContent(sqlOf(ctx.db), view.version.versionId, [
      { path: checked, episode_ids: found.withdrawn },
    ]);
  throw hubError(
    "not_found",
    "EntryNotFound",
    `No file '${checked}' in revision ${view.sha} of das/${view.datasetId}${found.absent === "withdrawn" ? ": the episodes it held were withdrawn" : ""}.`,
  );
}

/** The headers every resolve answer carries, HEAD and GET alike, as the clients read them. */
export function fileHeaders({ view, file }: ResolvedFile): Record<string, string> {
  return {
    "X-Repo-Commit": view.sha,
    ETag: `"${file.sha256}"`,
    "X-Linked-Etag": `"${file.sha256}"`,
    "X-Linked-Size": String(file.size_bytes),
    "Accept-Ranges": "bytes",
  };
}

/**
 * The signed URL of a resolved file for the caller, disclosed first (or the one an earlier GET of
 * it was given while that is valid).
 */
export async function fileUrl(ctx: Ctx, resolved: ResolvedFile): Promise<string> {
  const { file } = resolved;
  for (let attempt = 1; ; attempt++) {
    try {
      const signedAt = await disclose(ctx, resolved);
      // Another GET of the same file committed first (its URL is the answer), or an episode of it
      // was withdrawn meanwhile (asked again, the file is then refused): the log refused the
      // entry. Once more, then 503.
      if ("refused" in signedAt) {
        if (attempt === 1) continue;
        throw notRecorded("The file", signedAt);
      }
      const [url] = await presigner().presignKeys([file.objectKey], {
        signingDate: signedAt,
        expiresIn: URL_TTL_SECONDS,
      });
      return url!;
    } catch (error) {
      throw notRecorded("The file", error);
    }
  }
}

/**
 * The entry the file's URL is signed under: an earlier valid one of the same request, or a new
 * one. Returns its signing time, or the log's refusal of the new one.
 */
async function disclose(ctx: Ctx, { view, file }: ResolvedFile): Promise<Date | Refused> {
  const principal = ctx.principal;
  if (principal.kind !== "api_key") throw new AppError("forbidden", "Files are fetched with an API key.");
  const { version } = view;
  // The bytes are part of the request: an earlier entry is reused only for the same bytes (a
  // licence's copy, or the original while the version was not fingerprinted), never across the two.
  const requestSha256 = sha256Hex(
    canonicalJson({
      hub: {
        api_key_id: principal.keyId,
        version_id: version.versionId,
        licence_id: version.licenceId,
        path: file.path,
        sha256: file.sha256,
      },
    }),
  );
  const earlier = await validEntry(ctx, requestSha256);
  if (earlier) return earlier;
  const episodeIds = [...new Set(file.episode_ids)].sort(byteOrder);
  // A fingerprinted view delivers the licence's own copy (or meta/ rendered for it): the entry
  // names its sha256, as a download of copies does (decision 0133).
  const copies = view.copiesOf ? [{ path: file.path, sha256: file.sha256 }] : undefined;
  const chained = await appendToLog(ctx, {
    entry: {
      id: newLogId("hb"),
      organizationId: principal.organizationId,
      apiKeyId: principal.keyId,
      userId: null,
      reviewerRole: null,
      channel: "hub",
      datasetId: view.datasetId,
      version: version.version,
      versionId: version.versionId,
      licenceId: version.licenceId,
      termsSha256: version.termsSha256,
      requestedScope: { paths: [file.path] },
      episodeCount: episodeIds.length,
      fileCount: 1,
      totalBytes: file.size_bytes,
      episodesSha256: episodesDigest(episodeIds),
      ...(copies ? { filesSha256: filesDigest(copies) } : {}),
      requestId: ctx.requestId,
      idempotencyScope: null,
      idempotencyKey: null,
      requestSha256,
    },
    episodeIds,
    ...(copies ? { files: copies } : {}),
    ttlSeconds: URL_TTL_SECONDS,
    refusals: [equalGetValid, withdrawnMeanwhile],
  });
  return "refused" in chained ? chained : chained.occurredAt;
}

/** When the newest entry of the same request whose URL stays valid past the margin was made (at the log's time), or undefined. */
async function validEntry(ctx: Ctx, requestSha256: string): Promise<Date | undefined> {
  const sql = sqlOf(ctx.db);
  const [row] = await sql<{ occurred_at: Date }[]>`
    select v.occurred_at from disclosures v
    where ${reusableEntry(sql, { requestSha256, at: logClock(sql, ctx.clock), marginSeconds: HUB_REUSE_MARGIN_SECONDS })}
    order by v.expires_at desc limit 1`;
  return row?.occurred_at;
}
