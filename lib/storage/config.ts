import { env } from "../env";
import { AppError } from "../errors";
import { BatchPresigner, presignedOrigin, type StoreLocation } from "./presigner";

/** Where files live, from the S3_* variables (the launcher sets them for the local store). */
export function storeLocation(): StoreLocation {
  const e = env();
  if (!e.S3_BUCKET || !e.S3_ACCESS_KEY_ID || !e.S3_SECRET_ACCESS_KEY) {
    throw new AppError(
      "unavailable",
      "The object store is not configured (S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY).",
      {
        headers: { "Retry-After": "60" },
      },
    );
  }
  return {
    endpoint: e.S3_ENDPOINT ?? `https://s3.${e.S3_REGION}.amazonaws.com`,
    region: e.S3_REGION,
    bucket: e.S3_BUCKET,
    forcePathStyle: e.S3_FORCE_PATH_STYLE,
    accessKeyId: e.S3_ACCESS_KEY_ID,
    secretAccessKey: e.S3_SECRET_ACCESS_KEY,
  };
}

/**
 * The store as clients reach it: its signed URLs are fetched by browsers and `das` on other
 * machines, for whom the service's own address of the store (127.0.0.1 for the embedded one) is
 * not it. A URL is signed for the host it names, so the same key signs for either address.
 */
export function publicStoreLocation(): StoreLocation {
  const location = storeLocation();
  const publicEndpoint = env().S3_PUBLIC_ENDPOINT;
  return publicEndpoint ? { ...location, endpoint: publicEndpoint.replace(/\/+$/, "") } : location;
}

/** Where the browser fetches signed URLs from (the portal's player plays video from there), or null while no store is configured. */
export function storeOrigin(): string | null {
  try {
    return presignedOrigin(publicStoreLocation());
  } catch (error) {
    if (error instanceof AppError) return null;
    throw error;
  }
}

const globalForStore = globalThis as unknown as { dasPresigner?: BatchPresigner };

/** One presigner per process: its signing key is derived once a day and reused for every URL. */
export function presigner(): BatchPresigner {
  globalForStore.dasPresigner ??= new BatchPresigner(publicStoreLocation());
  return globalForStore.dasPresigner;
}

/** A file's object key: the dataset, the version, then the path from the manifest. */
export function objectKey(datasetId: string, version: string, path: string): string {
  return `${datasetId}/${version}/${path}`;
}

/**
 * A rendered file's object key (lib/views/render.ts): its SHA-256, under a prefix no dataset id
 * can begin with (they start with a letter or a digit), so the same bytes are stored once.
 */
export function renderedObjectKey(sha256: string): string {
  return `_rendered/${sha256}`;
}

export const URL_TTL_SECONDS = 900;
