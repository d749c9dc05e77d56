import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type S3Client,
} from "@aws-sdk/client-s3";

/**
 * Objects made from other objects in the store: a copy of an original's first bytes followed by a
 * few bytes of its own, assembled by the store (S3's multipart UploadPartCopy), so that a video of
 * gigabytes is never streamed through the service to make one licence's copy of it.
 *
 * S3's rules decide the shape: every part but the last is at least 5 MiB and at most 5 GiB, at most
 * 10,000 parts. So the original's bytes are copied in parts of at most 5 GiB (each at least 5 MiB)
 * and the trailer is the last part, which may be small. An original shorter than 5 MiB cannot be a
 * part of its own: it is read (at most 5 MiB) and written with its trailer in one PUT.
 */

export const MIN_PART_BYTES = 5 * 1024 * 1024;
export const MAX_PART_BYTES = 5 * 1024 * 1024 * 1024;

/** The byte ranges (inclusive ends) of the copied parts of `keep` bytes: as few as S3 allows, of equal size. */
export function copyRanges(keep: number): { first: number; last: number }[] {
  if (keep < MIN_PART_BYTES) return [];
  const parts = Math.ceil(keep / MAX_PART_BYTES);
  const size = Math.ceil(keep / parts);
  return Array.from({ length: parts }, (_, i) => ({ first: i * size, last: Math.min(keep, (i + 1) * size) - 1 }));
}

/** Bytes `first`..`last` (inclusive) of an object. */
export async function getObjectRange(
  client: S3Client,
  bucket: string,
  key: string,
  first: number,
  last: number,
): Promise<Buffer> {
  if (last < first) return Buffer.alloc(0);
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${first}-${last}` }));
  const bytes = Buffer.from(await answer.Body!.transformToByteArray());
  if (bytes.length !== last - first + 1)
    throw new Error(`${key}: the store sent ${bytes.length} bytes of the ${last - first + 1} asked for`);
  return bytes;
}

/** An object's bytes as a stream of chunks (to hash a large original once, with bounded memory). */
export async function* objectChunks(client: S3Client, bucket: string, key: string): AsyncGenerator<Uint8Array> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  for await (const chunk of answer.Body as AsyncIterable<Uint8Array>) yield chunk;
}

/**
 * Writes `target` as the first `keep` bytes of `source` followed by `suffix`: by the store when
 * `keep` is at least 5 MiB, else by reading those bytes and one PUT.
 */
export async function putCopyWithSuffix(
  client: S3Client,
  bucket: string,
  source: string,
  target: string,
  keep: number,
  suffix: Uint8Array,
  contentType?: string,
): Promise<{ assembledByStore: boolean }> {
  const ranges = copyRanges(keep);
  if (!ranges.length) {
    const head = await getObjectRange(client, bucket, source, 0, keep - 1);
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: target,
        Body: Buffer.concat([head, suffix]),
        ContentType: contentType,
      }),
    );
    return { assembledByStore: false };
  }
  const { UploadId } = await client.send(
    new CreateMultipartUploadCommand({ Bucket: bucket, Key: target, ContentType: contentType }),
  );
  try {
    const parts: { ETag: string; PartNumber: number }[] = [];
    for (const [i, range] of ranges.entries()) {
      const copied = await client.send(
        new UploadPartCopyCommand({
          Bucket: bucket,
          Key: target,
          UploadId,
          PartNumber: i + 1,
          CopySource: `${bucket}/${source.split("/").map(encodeURIComponent).join("/")}`,
          CopySourceRange: `bytes=${range.first}-${range.last}`,
        }),
      );
      parts.push({ ETag: copied.CopyPartResult!.ETag!, PartNumber: i + 1 });
    }
    const last = await client.send(
      new UploadPartCommand({ Bucket: bucket, Key: target, UploadId, PartNumber: ranges.length + 1, Body: suffix }),
    );
    parts.push({ ETag: last.ETag!, PartNumber: ranges.length + 1 });
    await client.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: target, UploadId, MultipartUpload: { Parts: parts } }),
    );
    return { assembledByStore: true };
  } catch (error) {
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: target, UploadId }))
      .catch(() => undefined);
    throw error;
  }
}
