import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { s3Client } from "../storage/client";
import { objectKey, storeLocation } from "../storage/config";
import { requireLicensedVersion } from "./access";

/**
 * A version's own documents, read by the service from the store: its README (LeRobot datasets ship
 * one; Hugging Face shows it as the dataset card) and LeRobot's meta/info.json (which names each
 * dimension of the robot's data). They describe the dataset rather than hold any episode, so they
 * are shown like the catalog's metadata, to whoever may read the version, without a disclosure.
 * Episode files never pass through here: they leave only through signed URLs.
 */

/** A document longer than this is cut: a dataset card is a few KB; a huge one would only slow the page. */
export const DOCUMENT_MAX_BYTES = 256 * 1024;

export type VersionDocument = { path: string; text: string; truncated: boolean };

const globalForDocuments = globalThis as unknown as { dasDocumentClient?: S3Client };
const documentClient = () => (globalForDocuments.dasDocumentClient ??= s3Client(storeLocation()));

/**
 * A file of a version as text, up to DOCUMENT_MAX_BYTES (a range request, so a huge file costs no
 * more), or null when the version holds no file at that path. The caller has checked access.
 */
export async function readVersionDocument(
  ctx: Ctx,
  version: { datasetId: string; version: string; versionId: number },
  path: string,
): Promise<VersionDocument | null> {
  const sql = sqlOf(ctx.db);
  const [file] = await sql<{ size_bytes: number }[]>`
    select size_bytes::float8 as size_bytes from files where version_id = ${version.versionId} and path = ${path}`;
  if (!file) return null;
  const answer = await documentClient().send(
    new GetObjectCommand({
      Bucket: storeLocation().bucket,
      Key: objectKey(version.datasetId, version.version, path),
      Range: `bytes=0-${DOCUMENT_MAX_BYTES - 1}`,
    }),
  );
  const bytes = await answer.Body!.transformToByteArray();
  // A cut in the middle of a character would end in U+FFFD; the reader is told it was cut anyway.
  return { path, text: new TextDecoder().decode(bytes), truncated: file.size_bytes > bytes.length };
}

/** README.md at the root of a version the caller holds a licence for: the dataset card, or null when it has none. */
export async function versionReadme(
  ctx: Ctx,
  input: { datasetId: string; version: string },
): Promise<VersionDocument | null> {
  const licensed = await requireLicensedVersion(ctx, input.datasetId, input.version);
  return readVersionDocument(ctx, { ...input, versionId: licensed.versionId }, "README.md");
}
