import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { createWriteStream } from "node:fs";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { StoreLocation } from "./presigner";

/** An S3 client for writing objects (seeding, tests); downloads only ever get presigned URLs. */
export function s3Client(location: StoreLocation): S3Client {
  const client = new S3Client({
    endpoint: location.endpoint,
    region: location.region,
    forcePathStyle: location.forcePathStyle,
    credentials: { accessKeyId: location.accessKeyId, secretAccessKey: location.secretAccessKey },
    // S3-compatible stores (s3rver, MinIO, R2) do not all speak the newer default checksums.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  // A bucket-level request in path style (listing) goes to `/<bucket>/`; s3rver, the local store,
  // signs `/<bucket>` and so refuses it. Both are the same request to S3 and to other stores.
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { path?: string };
      if (location.forcePathStyle && typeof request.path === "string" && /^\/[^/]+\/$/.test(request.path))
        request.path = request.path.slice(0, -1);
      return next(args);
    },
    { step: "build", name: "bucketPathWithoutTrailingSlash" },
  );
  // Outermost, so that it sees what is left after the SDK's retries.
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        throw storeError(error, location) ?? error;
      }
    },
    { step: "initialize", name: "storeErrorSaysWhatFailed" },
  );
  return client;
}

/**
 * A request to the object store that failed for a reason of the store's configuration or of the
 * store itself, worded for whoever runs the service: what failed, and what to check. It keeps the
 * SDK error's `$metadata` (callers tell a missing object by its status) and the error as its cause.
 */
export class StoreError extends Error {
  override name = "StoreError";
  readonly $metadata: unknown;
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.$metadata = (cause as { $metadata?: unknown }).$metadata;
  }
}

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * Why a store request failed, or null for what its caller decides on (a missing object, an
 * interrupted transfer). Without this the SDK reports a refused HEAD, which has no body to name
 * its cause, as "Unknown".
 */
export function storeError(error: unknown, location: StoreLocation): StoreError | null {
  if (error instanceof StoreError || !(error instanceof Error) || error.name === "AbortError") return null;
  const at = `The object store at ${location.endpoint}`;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const code = (error as { Code?: string; code?: string }).Code ?? (error as { code?: string }).code;
  const named = code && code !== "Unknown" ? `, ${code}` : error.name !== "Unknown" ? `, ${error.name}` : "";
  if (status === 401 || status === 403)
    return new StoreError(
      `${at} refused this installation's key (${status}${named}): check that S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are a key pair of that store, with the right to read and write bucket '${location.bucket}'.`,
      error,
    );
  if (error.name === "NoSuchBucket" || code === "NoSuchBucket")
    return new StoreError(`${at} has no bucket '${location.bucket}': check S3_BUCKET (and S3_REGION).`, error);
  if (status !== undefined && status >= 500)
    return new StoreError(
      `${at} failed the request (${status}${named}) after retrying: check that the store is healthy, then run the command again.`,
      error,
    );
  const network = code && UNREACHABLE.has(code) ? code : error.name === "TimeoutError" ? "timed out" : null;
  if (status === undefined && network)
    return new StoreError(
      `Cannot reach the object store at ${location.endpoint} (${network}): check that it is running and that S3_ENDPOINT is its address${
        process.env.S3_ENDPOINT ? "" : " (unset: AWS S3 in S3_REGION)"
      }.`,
      error,
    );
  return null;
}

export async function putObject(
  client: S3Client,
  bucket: string,
  key: string,
  body: Buffer,
  contentType?: string,
): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
}

/** Deletes an object; one that is not there is no error (S3 answers 204 either way). */
export async function deleteObject(client: S3Client, bucket: string, key: string): Promise<void> {
  await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}

export async function objectExists(client: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw error;
  }
}

/** Every key under `prefix`, in the store's order (UTF-8 byte order), a page of up to 1,000 at a time. */
export async function listObjectKeys(client: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

/** An object written to a local file (of any size: streamed, never held whole). */
export async function downloadObject(client: S3Client, bucket: string, key: string, file: string): Promise<void> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  await pipeline(answer.Body as Readable, createWriteStream(file));
}

/** A (small) object's bytes. */
export async function getObjectBytes(client: S3Client, bucket: string, key: string): Promise<Buffer> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await answer.Body!.transformToByteArray());
}
