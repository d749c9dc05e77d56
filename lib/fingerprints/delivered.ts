import type { Sql } from "../db/client";
import type { FileRecord } from "../catalog/get-manifest";
import { AppError } from "../errors";
import { objectKey } from "../storage/config";

/**
 * The one answer to "which object, with which sha256 and size, does this licence get for this
 * file?", asked by downloads, previews, manifests and the Hub view alike.
 *
 * A version without fingerprinting: the original, under its own key, with no query. A fingerprinted
 * version: the licence's own copy (lib/fingerprints/copies.ts), one query for all the files asked;
 * a file whose copy is not made yet is a 503 with Retry-After, never a wait (copies are made ahead
 * of use by a job, and a request must not hold a connection while a 100 MB file is marked) and
 * never the original (which would leave untraceable). A reviewer's preview (no licence) is of the
 * originals: nothing leaves to a licensee.
 */

export type DeliveredVersion = { versionId: number; datasetId: string; version: string; fingerprinted: boolean };

/** A file as it is delivered to a caller: its record with the sha256 and size of the bytes they get, and where those lie. */
export type DeliveredFile<F extends Pick<FileRecord, "path" | "sha256" | "size_bytes">> = F & { objectKey: string };

/** How long a caller is told to wait for copies still being made. */
export const COPIES_RETRY_AFTER_SECONDS = 30;

export async function deliveredFiles<F extends Pick<FileRecord, "path" | "sha256" | "size_bytes">>(
  sql: Sql,
  version: DeliveredVersion,
  licenceId: string | null,
  files: readonly F[],
): Promise<DeliveredFile<F>[]> {
  if (!version.fingerprinted || licenceId === null)
    return files.map((f) => withObjectKey(f, objectKey(version.datasetId, version.version, f.path)));
  return licenceCopiesOf(sql, licenceId, files);
}

/**
 * The licence's copies of `files`, whatever the version's flag says now: what a replay of a
 * download that delivered copies signs again.
 */
export async function licenceCopiesOf<F extends Pick<FileRecord, "path" | "sha256" | "size_bytes">>(
  sql: Sql,
  licenceId: string,
  files: readonly F[],
): Promise<DeliveredFile<F>[]> {
  if (!files.length) return [];
  const copies = await sql<{ path: string; object_key: string; sha256: string; size_bytes: number }[]>`
    select path, object_key, sha256, size_bytes::float8 as size_bytes from licence_copies
    where licence_id = ${licenceId} and path = any(${files.map((f) => f.path)}::text[])`;
  const byPath = new Map(copies.map((c) => [c.path, c]));
  const missing = files.filter((f) => !byPath.has(f.path)).length;
  if (missing) throw copiesNotReady(missing, files.length);
  return files.map((f) => {
    const copy = byPath.get(f.path)!;
    return Object.assign({}, f, { sha256: copy.sha256, size_bytes: copy.size_bytes, objectKey: copy.object_key });
  });
}

/**
 * `file` with its object key, made by Object.assign rather than a spread: on V8 a spread of a
 * database row makes an object that is slow to make and slow to read afterwards (10,000 rows on a
 * loaded machine: 26 ms to spread and 31 ms to read into a download's files, against 10 ms and
 * 1.4 ms with Object.assign; the 10,000-file download was 15-25% slower until this).
 */
const withObjectKey = <F extends object>(file: F, key: string): F & { objectKey: string } =>
  Object.assign({}, file, { objectKey: key });

export function copiesNotReady(missing: number, of: number): AppError {
  return new AppError(
    "unavailable",
    `This version is fingerprinted: your licence receives copies of its own, and ${missing} of the ${of} files asked for ${missing === 1 ? "is" : "are"} still being made. Retry in ${COPIES_RETRY_AFTER_SECONDS} seconds; nothing was recorded and no URL was issued.`,
    { headers: { "Retry-After": String(COPIES_RETRY_AFTER_SECONDS) } },
  );
}
