import { createHash } from "node:crypto";
import type { S3Client } from "@aws-sdk/client-s3";
import { sqlOf, type Db, type Sql } from "../db/client";
import type { CopyMethod } from "../db/schema";
import { requireEnv } from "../env";
import { log } from "../log";
import { getObjectBytes, putObject, s3Client } from "../storage/client";
import { getObjectRange, objectChunks, putCopyWithSuffix } from "../storage/copy";
import { objectKey, storeLocation } from "../storage/config";
import { copyToken, markKey } from "../marks/key";
import { markParquet } from "../marks/parquet-mark";
import { ResumableSha256, sha256After, type Sha256State } from "../marks/sha256";
import { trailerKind, trailerOf } from "../marks/trailer";

/**
 * Makes one licence's copy of one file of a fingerprinted version and records it (licence_copies):
 * what the copy job runs (lib/fingerprints/jobs.ts). Deterministic, so a retried job writes the same
 * bytes under the same key, and idempotent: a copy already recorded is left as it is.
 *
 * - A parquet file is read whole, marked (lib/marks/parquet-mark.ts) and written back: a frame
 *   table gets the float mark and the token, any other parquet file the token alone.
 * - Any other file (videos, JSON, Markdown) is the original followed by a trailer of the licence's
 *   own (lib/marks/trailer.ts), assembled by the store from the original and one small part; its
 *   sha256 comes from the original's SHA-256 state, kept once per file (original_file_states).
 */

/** Where a licence's copy lives: beside nothing of a version's own (a version is semver, never a licence id). */
export const copyKey = (licenceId: string, datasetId: string, version: string, path: string) =>
  `copies/${licenceId}/${objectKey(datasetId, version, path)}`;

/** The largest parquet file marked in memory (a LeRobot v3.0 data file is about 100 MB). */
export const MAX_MARKED_BYTES = 1024 * 1024 * 1024;

export type CopyJob = { licenceId: string; path: string };

export type CopyOutcome =
  | { made: true; method: CopyMethod; sha256: string; sizeBytes: number }
  | { made: false; why: string };

type Subject = {
  licence_id: string;
  revoked: boolean;
  version_id: number;
  dataset_id: string;
  version: string;
  fingerprinted: boolean;
  path: string;
  size_bytes: number;
  sha256: string;
  media_type: string;
  copied: boolean;
};

const globalForCopies = globalThis as unknown as { dasCopyClient?: S3Client };
const storeClient = () => (globalForCopies.dasCopyClient ??= s3Client(storeLocation()));

export async function makeCopy(db: Db, job: CopyJob): Promise<CopyOutcome> {
  const sql = sqlOf(db);
  const [subject] = await sql<Subject[]>`
    select l.id as licence_id, l.revoked_at is not null as revoked, v.id as version_id, v.dataset_id, v.version,
           v.fingerprinted, f.path, f.size_bytes::float8 as size_bytes, f.sha256, f.media_type,
           exists (select 1 from licence_copies c where c.licence_id = l.id and c.path = f.path) as copied
    from licences l join dataset_versions v on v.id = l.version_id
    join files f on f.version_id = v.id and f.path = ${job.path}
    where l.id = ${job.licenceId}`;
  if (!subject) return { made: false, why: "no such licence or file" };
  if (subject.copied) return { made: false, why: "already made" };
  if (subject.revoked) return { made: false, why: "the licence is revoked" };
  if (!subject.fingerprinted) return { made: false, why: "the version is not fingerprinted any more" };
  const key = markKey(requireEnv("APP_SECRET"), subject.licence_id);
  const token = copyToken(key, subject.path);
  const target = copyKey(subject.licence_id, subject.dataset_id, subject.version, subject.path);
  const made = subject.path.endsWith(".parquet")
    ? await markedCopy(subject, key, token, target)
    : await trailedCopy(sql, subject, token, target);
  await sql`
    insert into licence_copies (licence_id, version_id, path, object_key, sha256, size_bytes, token, method, marked_cells)
    values (${subject.licence_id}, ${subject.version_id}, ${subject.path}, ${target}, ${made.sha256}, ${made.sizeBytes},
            ${token.toString("hex")}, ${made.method}, ${made.markedCells})
    on conflict do nothing`;
  return { made: true, method: made.method, sha256: made.sha256, sizeBytes: made.sizeBytes };
}

/**
 * A licence's copy of a file held in memory, made by the same rules as its stored copies: a
 * parquet file marked (a frame table) or given its token, any other file its trailer. What a
 * fingerprinted view's rendered meta/ is written as (lib/views/render.ts): those files are made for
 * the view on first use, small, and carry no frame, so the rendering makes each licence's own.
 */
export async function copyOfBytes(licenceId: string, path: string, bytes: Uint8Array): Promise<Uint8Array> {
  const key = markKey(requireEnv("APP_SECRET"), licenceId);
  const token = copyToken(key, path);
  if (path.endsWith(".parquet")) return (await markParquet(bytes, key, token.toString("hex"))).bytes;
  const { keep, suffix } = trailerOf(
    trailerKind(path, "application/octet-stream"),
    token,
    bytes.length,
    bytes.length ? bytes[bytes.length - 1]! : null,
  );
  return Buffer.concat([bytes.subarray(0, keep), suffix]);
}

type Made = { method: CopyMethod; sha256: string; sizeBytes: number; markedCells: number | null };

async function markedCopy(
  subject: Subject,
  key: ReturnType<typeof markKey>,
  token: Buffer,
  target: string,
): Promise<Made> {
  if (subject.size_bytes > MAX_MARKED_BYTES)
    throw new Error(
      `${subject.path}: ${subject.size_bytes} bytes, more than the ${MAX_MARKED_BYTES} a copy is marked in`,
    );
  const { bucket } = storeLocation();
  const original = await getObjectBytes(
    storeClient(),
    bucket,
    objectKey(subject.dataset_id, subject.version, subject.path),
  );
  if (createHash("sha256").update(original).digest("hex") !== subject.sha256)
    throw new Error(`${subject.path}: the stored original is not the one imported (its sha256 differs)`);
  const { bytes, report } = await markParquet(new Uint8Array(original), key, token.toString("hex"));
  await putObject(
    storeClient(),
    bucket,
    target,
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
    subject.media_type,
  );
  return {
    method: report.changed > 0 ? "mark" : "token",
    sha256: createHash("sha256").update(bytes).digest("hex"),
    sizeBytes: bytes.length,
    markedCells: report.changed,
  };
}

async function trailedCopy(sql: Sql, subject: Subject, token: Buffer, target: string): Promise<Made> {
  const kind = trailerKind(subject.path, subject.media_type);
  const state = await originalState(sql, subject);
  const { keep, suffix } = trailerOf(kind, token, subject.size_bytes, state.lastByte);
  if (keep !== state.keep) throw new Error(`${subject.path}: the kept state is of ${state.keep} bytes, not ${keep}`);
  const { bucket } = storeLocation();
  const source = objectKey(subject.dataset_id, subject.version, subject.path);
  await putCopyWithSuffix(storeClient(), bucket, source, target, keep, suffix, subject.media_type);
  return {
    method: kind,
    sha256: sha256After(state.sha256, suffix),
    sizeBytes: keep + suffix.length,
    markedCells: null,
  };
}

/**
 * The original's SHA-256 state up to where its copies depart from it, hashed once per file (the
 * first copy of it made) and kept. The whole original's hash is checked against the import's on the way.
 */
async function originalState(
  sql: Sql,
  subject: Subject,
): Promise<{ keep: number; lastByte: number | null; sha256: Sha256State }> {
  const [kept] = await sql<
    { keep_bytes: number; last_byte: number | null; state_words: string; state_length: number; state_tail: string }[]
  >`
    select keep_bytes::float8 as keep_bytes, last_byte, state_words, state_length::float8 as state_length, state_tail
    from original_file_states where version_id = ${subject.version_id} and path = ${subject.path}`;
  if (kept)
    return {
      keep: kept.keep_bytes,
      lastByte: kept.last_byte,
      sha256: { words: kept.state_words, length: kept.state_length, tail: kept.state_tail },
    };
  const { bucket } = storeLocation();
  const source = objectKey(subject.dataset_id, subject.version, subject.path);
  const size = subject.size_bytes;
  const lastByte = size > 0 ? (await getObjectRange(storeClient(), bucket, source, size - 1, size - 1))[0]! : null;
  const { keep } = trailerOf(trailerKind(subject.path, subject.media_type), Buffer.alloc(16), size, lastByte);
  const hash = new ResumableSha256();
  let read = 0;
  let state: Sha256State | null = null;
  for await (const chunk of objectChunks(storeClient(), bucket, source)) {
    // The state is taken where the copies depart: before the last byte of a text file that ends a line.
    if (state === null && read + chunk.length >= keep) {
      hash.update(chunk.subarray(0, keep - read));
      state = hash.state();
      hash.update(chunk.subarray(keep - read));
    } else hash.update(chunk);
    read += chunk.length;
  }
  state ??= hash.state();
  if (read !== size || hash.digest() !== subject.sha256)
    throw new Error(`${subject.path}: the stored original is not the one imported (its size or sha256 differs)`);
  await sql`
    insert into original_file_states (version_id, path, keep_bytes, last_byte, state_words, state_length, state_tail)
    values (${subject.version_id}, ${subject.path}, ${keep}, ${lastByte}, ${state.words}, ${state.length}, ${state.tail})
    on conflict do nothing`;
  log.info("original hashed for its copies", { path: subject.path, bytes: size });
  return { keep, lastByte, sha256: state };
}
