import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import type { RequestedScope } from "../db/schema";
import { fileColumns, type FileRecord } from "../catalog/get-manifest";
import { AppError, NOT_VISIBLE } from "../errors";
import { presigner, URL_TTL_SECONDS } from "../storage/config";
import { deliveredFiles, licenceCopiesOf, type DeliveredFile } from "../fingerprints/delivered";
import { coDeliveredEpisodes, filesInScope } from "./resolve-scope";
import { refuseWithdrawnContent } from "../catalog/withdrawn";
import { byteOrder } from "../byte-order";

export type DownloadFile = Omit<FileRecord, "media_type"> & { url: string };

export type Download = {
  download_id: string;
  dataset_id: string;
  version: string;
  expires_at: string;
  file_count: number;
  total_bytes: number;
  files: DownloadFile[];
  /** Delivered episodes beyond those asked for: a delivered file also holds them. */
  co_delivered_episode_ids: string[];
};

type Issued = { id: string; datasetId: string; version: string; issuedAt: Date; expiresAt: Date };

/**
 * The download document, every URL signed at the issue time, so that signing again yields the same
 * URLs. The files are as delivered (lib/fingerprints/delivered.ts): the originals, or the caller's
 * licence's copies, with their own sha256 and size.
 */
export async function signDownload(
  issued: Issued,
  files: readonly DeliveredFile<FileRecord>[],
  coDelivered: readonly string[],
): Promise<Download> {
  const urls = await presigner().presignKeys(
    files.map((f) => f.objectKey),
    { signingDate: issued.issuedAt, expiresIn: URL_TTL_SECONDS },
  );
  return {
    download_id: issued.id,
    dataset_id: issued.datasetId,
    version: issued.version,
    expires_at: issued.expiresAt.toISOString(),
    file_count: files.length,
    total_bytes: files.reduce((sum, f) => sum + f.size_bytes, 0),
    files: files.map((f, i) => ({
      path: f.path,
      episode_id: f.episode_id,
      episode_ids: f.episode_ids,
      stream: f.stream,
      size_bytes: f.size_bytes,
      sha256: f.sha256,
      url: urls[i]!,
    })),
    co_delivered_episode_ids: [...coDelivered],
  };
}

/**
 * A download already recorded in the disclosure log, rebuilt for its recipient's organisation:
 * the same files (released versions never change) and the same URLs with the same expiry.
 * Nothing new is disclosed, so nothing new is logged. Once a file of it holds a withdrawn
 * episode it is refused (422), as a new download of it would be.
 */
export async function recordedDownload(ctx: Ctx, downloadId: string): Promise<Download> {
  const sql = sqlOf(ctx.db);
  const [entry] = /^dl_[0-9A-Za-z]{1,40}$/.test(downloadId)
    ? await sql<
        {
          id: string;
          dataset_id: string;
          version: string;
          version_id: number;
          occurred_at: Date;
          expires_at: Date;
          requested_scope: RequestedScope;
          organization_id: string;
          licence_id: string;
          files_sha256: string | null;
        }[]
      >`
        select id, dataset_id, version, version_id, occurred_at, expires_at, requested_scope, organization_id,
               licence_id, files_sha256
        from disclosures where id = ${downloadId}`
    : [];
  if (!entry || entry.organization_id !== ctx.principal.organizationId)
    throw new AppError("not_found", NOT_VISIBLE.download);
  const files = await sql<FileRecord[]>`
    select ${fileColumns(sql)}
    from files f where ${filesInScope(sql, entry.version_id, entry.requested_scope)} order by f.path`;
  await refuseWithdrawnContent(sql, entry.version_id, files);
  const delivered = [...new Set(files.flatMap((f) => f.episode_ids))].sort(byteOrder);
  const coDelivered = await coDeliveredEpisodes(sql, entry.version_id, entry.requested_scope, delivered);
  // The same bytes as recorded: the licence's copies if it delivered them, whatever the version's flag is now.
  const version = { versionId: entry.version_id, datasetId: entry.dataset_id, version: entry.version };
  const signed =
    entry.files_sha256 !== null
      ? await licenceCopiesOf(sql, entry.licence_id, files)
      : await deliveredFiles(sql, { ...version, fingerprinted: false }, null, files);
  return signDownload(
    {
      id: entry.id,
      datasetId: entry.dataset_id,
      version: entry.version,
      issuedAt: entry.occurred_at,
      expiresAt: entry.expires_at,
    },
    signed,
    coDelivered,
  );
}
