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

/**
 * A signed download: its document as JSON bytes (what the API answers) and, built only when
 * something reads it (the portal, a test), as an object. The two are the same document.
 */
export type IssuedDownload = { readonly json: Uint8Array<ArrayBuffer>; readonly download: Download };

type Issued = { id: string; datasetId: string; version: string; issuedAt: Date; expiresAt: Date };

/** A download's files signed at one time: their URLs, and the JSON of its `files` array in chunks. */
export type SignedFiles = {
  readonly signedAt: Date;
  readonly files: readonly DeliveredFile<FileRecord>[];
  readonly urls: readonly string[];
  readonly json: readonly Buffer[];
};

/** Files written to JSON between two turns of the event loop. */
const SLICE = 1024;

/**
 * `files` signed at `signedAt`, and the JSON of the download's `files` array written from them a
 * slice at a time. A 10,000-file document is about 6 MB: JSON.stringify of the object form after
 * the entry had committed was a sixth of the download's time. Written here, it is done while the
 * entry is appended (lib/downloads/create-download.ts), and what every file has before its size
 * is written once per resolved scope (`leadingMembers`). `records` are the files as resolved,
 * in the same order as `files` (which may be the licence's copies of them).
 */
export async function signFiles(
  signedAt: Date,
  files: readonly DeliveredFile<FileRecord>[],
  records: readonly FileRecord[] = files,
): Promise<SignedFiles> {
  const urls = await presigner().presignKeys(
    files.map((f) => f.objectKey),
    { signingDate: signedAt, expiresIn: URL_TTL_SECONDS },
  );
  const leading = leadingMembers(records);
  const json: Buffer[] = [];
  for (let start = 0; start < files.length; start += SLICE) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    let text = start === 0 ? "[" : "";
    const end = Math.min(start + SLICE, files.length);
    for (let i = start; i < end; i++) {
      const f = files[i]!;
      // A hex digest and a presigned URL (every byte of its key and query percent-encoded, its
      // host and path from a parsed URL) hold nothing JSON escapes: written as they are. The
      // tests compare these bytes with JSON.stringify of the object form, odd paths included.
      text += `${i > 0 ? "," : ""}${leading[i]}${f.size_bytes},"sha256":"${f.sha256}","url":"${urls[i]}"}`;
    }
    json.push(Buffer.from(end === files.length ? `${text}]` : text));
  }
  if (!files.length) json.push(Buffer.from("[]"));
  return { signedAt, files, urls, json };
}

/**
 * Each file's members before its size, as JSON (`{"path":...,"stream":...,"size_bytes":`): the
 * same for every download of a resolved scope, so written once per array of records (those the
 * instance's cache keeps are written once while it keeps them).
 */
const leadingByRecords = new WeakMap<readonly FileRecord[], readonly string[]>();
function leadingMembers(records: readonly FileRecord[]): readonly string[] {
  let leading = leadingByRecords.get(records);
  if (!leading) {
    leading = records.map(
      (r) =>
        `${JSON.stringify({ path: r.path, episode_id: r.episode_id, episode_ids: r.episode_ids, stream: r.stream }).slice(0, -1)},"size_bytes":`,
    );
    leadingByRecords.set(records, leading);
  }
  return leading;
}

/** The download document of files signed at its issue time, as bytes and (when read) as an object. */
export function issuedDownload(issued: Issued, signed: SignedFiles, coDelivered: readonly string[]): IssuedDownload {
  // Every URL answered is signed at its entry's time, so that a replay answers the same URLs.
  if (signed.signedAt.getTime() !== issued.issuedAt.getTime())
    throw new Error(
      `URLs signed at ${signed.signedAt.toISOString()} for a download issued at ${issued.issuedAt.toISOString()}`,
    );
  const totalBytes = signed.files.reduce((sum, f) => sum + f.size_bytes, 0);
  const head = {
    download_id: issued.id,
    dataset_id: issued.datasetId,
    version: issued.version,
    expires_at: issued.expiresAt.toISOString(),
    file_count: signed.files.length,
    total_bytes: totalBytes,
  };
  const json = Buffer.concat([
    Buffer.from(`${JSON.stringify(head).slice(0, -1)},"files":`),
    ...signed.json,
    Buffer.from(`,"co_delivered_episode_ids":${JSON.stringify(coDelivered)}}`),
  ]);
  let download: Download | undefined;
  return {
    json,
    get download() {
      download ??= {
        ...head,
        files: signed.files.map((f, i) => ({
          path: f.path,
          episode_id: f.episode_id,
          episode_ids: f.episode_ids,
          stream: f.stream,
          size_bytes: f.size_bytes,
          sha256: f.sha256,
          url: signed.urls[i]!,
        })),
        co_delivered_episode_ids: [...coDelivered],
      };
      return download;
    },
  };
}

/**
 * The download document, every URL signed at the issue time, so that signing again yields the same
 * URLs. The files are as delivered (lib/fingerprints/delivered.ts): the originals, or the caller's
 * licence's copies, with their own sha256 and size.
 */
export async function signDownload(
  issued: Issued,
  files: readonly DeliveredFile<FileRecord>[],
  coDelivered: readonly string[],
  records: readonly FileRecord[] = files,
): Promise<IssuedDownload> {
  return issuedDownload(issued, await signFiles(issued.issuedAt, files, records), coDelivered);
}

/**
 * A download already recorded in the disclosure log, rebuilt for its recipient's organisation:
 * the same files (released versions never change) and the same URLs with the same expiry.
 * Nothing new is disclosed, so nothing new is logged. Once a file of it holds a withdrawn
 * episode it is refused (422), as a new download of it would be.
 */
export async function recordedDownload(ctx: Ctx, downloadId: string): Promise<Download> {
  return (await reissuedDownload(ctx, downloadId)).download;
}

/** `recordedDownload` as the API answers it, its JSON written from the signed URLs. */
export async function reissuedDownload(ctx: Ctx, downloadId: string): Promise<IssuedDownload> {
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
