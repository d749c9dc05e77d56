import { createHash, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import type { S3Client } from "@aws-sdk/client-s3";
import { canonicalJson } from "../canonical-json";
import { env } from "../env";
import { getObjectBytes, putObject, s3Client } from "../storage/client";
import { storeLocation } from "../storage/config";
import { digestPublicKeyFromEnv, loadSigningKey, publicKeySha256 } from "./digest";

/*
 * Where a month of the log goes when it leaves the database, and the signed statement of what the
 * month held: the object store (DISCLOSURE_ARCHIVE_BUCKET, default S3_BUCKET, under
 * DISCLOSURE_ARCHIVE_PREFIX), one folder a month, `YYYY-MM/`, holding the month's digest (written
 * when it closed), its tables as gzipped CSV and the manifest that names them. A bucket with object
 * lock in compliance mode keeps them for the retention it sets (docs/scaling.md).
 */

export type ArchiveStore = { client: S3Client; bucket: string; prefix: string };

export function archiveStoreFromEnv(): ArchiveStore {
  const e = env();
  const location = storeLocation();
  return {
    client: s3Client(location),
    bucket: e.DISCLOSURE_ARCHIVE_BUCKET ?? location.bucket,
    prefix: e.DISCLOSURE_ARCHIVE_PREFIX,
  };
}

/** The folder of a month ("2026-11") in the store. */
export const monthFolder = (store: ArchiveStore, month: string) => `${store.prefix}${month}/`;

export const MONTH_DIGEST_FORMAT = "das-disclosure-month/1";

/**
 * What a month of the log held when it closed, signed with the head digests' key (DIGEST_SIGNING_KEY):
 * whoever holds the public key can check an archived month against it without the database.
 */
export type MonthDigest = {
  format: typeof MONTH_DIGEST_FORMAT;
  month: string;
  entries: number;
  first_seq: number;
  last_seq: number;
  /** The hash the month's first entry links to: the last hash of the month before. */
  prev_hash: string;
  last_hash: string;
  /** When the month closed (the database's clock). */
  time: string;
  public_key_sha256: string;
};

type Signed<T> = T & { signature: string };

export const sha256Hex = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

/** Signs `digest` and puts it in the month's folder; returns its key. */
export async function putMonthDigest(
  store: ArchiveStore,
  signingKey: KeyObject,
  digest: Omit<MonthDigest, "format" | "public_key_sha256">,
): Promise<string> {
  const unsigned: MonthDigest = {
    format: MONTH_DIGEST_FORMAT,
    ...digest,
    public_key_sha256: publicKeySha256(createPublicKey(signingKey)),
  };
  const signed: Signed<MonthDigest> = {
    ...unsigned,
    signature: sign(null, Buffer.from(canonicalJson(unsigned)), signingKey).toString("base64"),
  };
  const key = `${monthFolder(store, digest.month)}month-digest.json`;
  await putObject(store.client, store.bucket, key, Buffer.from(canonicalJson(signed)), "application/json");
  return key;
}

/** The month's digest from the store, its signature checked with `publicKey`; a sentence saying what is wrong otherwise. */
export async function readMonthDigest(
  store: ArchiveStore,
  key: string,
  publicKey: KeyObject,
): Promise<{ digest: MonthDigest; bytes: Buffer } | { problem: string }> {
  let bytes: Buffer;
  try {
    bytes = await getObjectBytes(store.client, store.bucket, key);
  } catch {
    return { problem: `the month's digest ${key} cannot be read from the store` };
  }
  let parsed: Signed<MonthDigest>;
  try {
    parsed = JSON.parse(bytes.toString("utf8")) as Signed<MonthDigest>;
  } catch {
    return { problem: `the month's digest ${key} is not JSON` };
  }
  const { signature, ...digest } = parsed;
  if (digest.format !== MONTH_DIGEST_FORMAT || typeof signature !== "string")
    return { problem: `the month's digest ${key} is not a digest of format ${MONTH_DIGEST_FORMAT}` };
  if (digest.public_key_sha256 !== publicKeySha256(publicKey))
    return { problem: `the month's digest ${key} names another signing key (${digest.public_key_sha256})` };
  if (!verify(null, Buffer.from(canonicalJson(digest)), publicKey, Buffer.from(signature, "base64")))
    return { problem: `the month's digest ${key} is forged or altered: its signature does not verify` };
  return { digest, bytes };
}

/** The key that signs month digests, when the environment has one (the service's schedule). */
export function monthSigningKeyFromEnv(): KeyObject | undefined {
  const value = env().DIGEST_SIGNING_KEY;
  return value ? loadSigningKey("DIGEST_SIGNING_KEY", value) : undefined;
}

/** The key month digests are checked with (DIGEST_PUBLIC_KEY, or DIGEST_SIGNING_KEY's public half). */
export const monthPublicKeyFromEnv = digestPublicKeyFromEnv;
