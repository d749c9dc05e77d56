import { createHash, type KeyObject } from "node:crypto";
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { DISCLOSURE_LOG_TABLES } from "../db/schema";
import { AppError } from "../errors";
import { requireAdmin } from "../auth/authorize";
import { monthFolder, sha256Hex, type ArchiveStore } from "./archive-store";
import { putObject } from "../storage/client";
import {
  ARCHIVE_FORMAT,
  checkArchive,
  rowsOf,
  type ArchivedTable,
  type ArchiveManifest,
  type MonthRecord,
} from "./archive-check";
import { parseMonth } from "./filter";

/*
 * `das-admin disclosures archive --month` and `restore --month` (issue 36; decision 0138): a closed
 * month of the log leaves the database for the object store, and comes back. Run as the tables'
 * owner (DATABASE_OWNER_URL): the service's role may not detach or attach a partition. Never the
 * month holding the chain's head, never a month without its checkpoint and signed digest, and
 * nothing dropped before the archive in the store was read back and checked.
 */

type Table = (typeof DISCLOSURE_LOG_TABLES)[number];
/** Rows in the order a reader expects them: the log's own. */
const ORDER: Record<Table, string> = {
  disclosures: "seq",
  disclosure_episodes: "disclosure_id, episode_id",
  disclosure_contributors: "seq, contributor",
  disclosure_episode_entries: "seq, episode_id",
  disclosure_files: "disclosure_id, path",
};

export const partitionName = (table: string, month: string) => `${table}_y${month.slice(0, 4)}m${month.slice(5, 7)}`;

export type ArchiveOptions = { store: ArchiveStore; publicKey: KeyObject; onStep?: (step: string) => void };
export type ArchiveResult = { month: string; entries: number; manifestKey: string; tables: ArchivedTable[] };

/**
 * Archives month "YYYY-MM": each of its five partitions exported with COPY (gzipped CSV, in the log's
 * order) into the month's folder with a manifest beside the month's digest; the archive read back
 * from the store and checked (lib/disclosures/archive-check.ts); the partitions detached (each
 * CONCURRENTLY: appends and reads go on), compared once more with what was exported, then
 * recorded as archived and dropped. A month that changed meanwhile is attached again.
 */
export async function archiveMonth(ctx: Ctx, month: string, options: ArchiveOptions): Promise<ArchiveResult> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  const record = await archivableMonth(sql, month);
  const step = options.onStep ?? (() => {});
  const tables: ArchivedTable[] = [];
  for (const table of DISCLOSURE_LOG_TABLES) {
    step(`exporting ${partitionName(table, month)}`);
    tables.push(await exportTable(sql, options.store, table, month));
  }
  const manifest: ArchiveManifest = {
    format: ARCHIVE_FORMAT,
    month,
    entries: record.entries,
    first_seq: record.firstSeq,
    last_seq: record.lastSeq,
    prev_hash: record.prevHash,
    last_hash: record.lastHash,
    checkpoint: { id: record.checkpointId, seq: record.lastSeq, hash: record.lastHash },
    month_digest: { key: record.digestKey!, sha256: await digestSha256(sql, options.store, record.digestKey!) },
    tables,
    created_at: new Date().toISOString(),
  };
  const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  const manifestKey = `${monthFolder(options.store, month)}manifest.json`;
  await putObject(options.store.client, options.store.bucket, manifestKey, manifestBytes, "application/json");
  step("reading the archive back from the store and checking it");
  const check = await checkArchive(sql, record, { ...options, manifestKey, manifestSha256: sha256Hex(manifestBytes) });
  if (check.findings.length)
    throw new AppError(
      "unavailable",
      `The archive of ${month} does not check; nothing was detached: ${check.findings.join("; ")}.`,
    );
  step("detaching the partitions");
  await detachAndCompare(sql, month, tables);
  await sql`insert into disclosure_archives (month, action, bucket, manifest_key, manifest_sha256)
    values (${`${month}-01`}, 'archived', ${options.store.bucket}, ${manifestKey}, ${sha256Hex(manifestBytes)})`;
  for (const table of DISCLOSURE_LOG_TABLES) await sql.unsafe(`drop table ${partitionName(table, month)}`);
  return { month, entries: record.entries, manifestKey, tables };
}

/** The month's record when it may be archived; a refusal that says why otherwise. */
async function archivableMonth(sql: Sql, month: string): Promise<MonthRecord> {
  const record = await monthRecord(sql, month);
  if (!record)
    throw new AppError(
      "not_found",
      `${month} has not closed (a month closes once it has ended and its chain verified): nothing to archive.`,
    );
  const state = await archiveState(sql, month);
  if (state?.action === "archived")
    throw new AppError("invalid_parameter", `${month} is archived already (${state.manifest_key}).`);
  const [head] = await sql<{ seq: string | null }[]>`select max(seq) as seq from disclosures`;
  if (head!.seq !== null && Number(head!.seq) <= record.lastSeq)
    throw new AppError(
      "invalid_parameter",
      `${month} holds the chain's newest entry, which never leaves the database.`,
    );
  if (!record.digestKey)
    throw new AppError(
      "invalid_parameter",
      `${month} closed without a signed digest (no DIGEST_SIGNING_KEY then): it cannot be archived.`,
    );
  return record;
}

export async function monthRecord(sql: Sql, month: string): Promise<MonthRecord | null> {
  if (!parseMonth(month))
    throw new AppError("invalid_parameter", `--month must be a month like 2026-11, not ${month}.`);
  const [row] = await sql<
    {
      entries: string;
      first_seq: string;
      last_seq: string;
      prev_hash: string;
      last_hash: string;
      checkpoint_id: string;
      digest_key: string | null;
    }[]
  >`select entries, first_seq, last_seq, prev_hash, last_hash, checkpoint_id, digest_key from disclosure_months where month = ${`${month}-01`}`;
  if (!row) return null;
  return {
    month,
    entries: Number(row.entries),
    firstSeq: Number(row.first_seq),
    lastSeq: Number(row.last_seq),
    prevHash: row.prev_hash,
    lastHash: row.last_hash,
    checkpointId: Number(row.checkpoint_id),
    digestKey: row.digest_key,
  };
}

async function archiveState(sql: Sql, month: string) {
  const [row] = await sql<{ action: string; manifest_key: string; manifest_sha256: string; bucket: string }[]>`
    select action, manifest_key, manifest_sha256, bucket from disclosure_archives where month = ${`${month}-01`} order by id desc limit 1`;
  return row ?? null;
}

async function digestSha256(_sql: Sql, store: ArchiveStore, key: string): Promise<string> {
  const { getObjectBytes } = await import("../storage/client");
  return sha256Hex(await getObjectBytes(store.client, store.bucket, key));
}

/**
 * One partition as gzipped CSV in the store, through a file of this machine's temporary directory
 * (an object's size must be known to put it): hashed as it is written, put with its MD5 (a bucket
 * with object lock asks for one).
 */
async function exportTable(sql: Sql, store: ArchiveStore, table: Table, month: string): Promise<ArchivedTable> {
  const partition = partitionName(table, month);
  const columns = (
    await sql<{ name: string }[]>`
      select attname as name from pg_attribute where attrelid = ${partition}::regclass and attnum > 0 and not attisdropped order by attnum`
  ).map((c) => c.name);
  const dir = mkdtempSync(path.join(os.tmpdir(), "das-archive-"));
  const file = path.join(dir, `${table}.csv.gz`);
  try {
    const sha = createHash("sha256");
    const md5 = createHash("md5");
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        sha.update(chunk);
        md5.update(chunk);
        done(null, chunk);
      },
    });
    const copy = await sql
      .unsafe(
        `copy (select ${columns.map((c) => `"${c}"`).join(", ")} from ${partition} order by ${ORDER[table]}) to stdout with (format csv, header true)`,
      )
      .readable();
    await pipeline(copy as Readable, createGzip(), hashing, createWriteStream(file));
    const bytes = statSync(file).size;
    const key = `${monthFolder(store, month)}${table}.csv.gz`;
    await store.client.send(
      new PutObjectCommand({
        Bucket: store.bucket,
        Key: key,
        Body: createReadStream(file),
        ContentLength: bytes,
        ContentType: "application/gzip",
        ContentMD5: md5.digest("base64"),
      }),
    );
    return { table, key, columns, ...(await rowsOf(sql, partition)), bytes, sha256: sha.digest("hex") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Detaches the month's partitions (CONCURRENTLY, one statement each, outside a transaction; one
 * left pending by an interrupted detach is finalised), then compares each detached table with what
 * was exported. A difference attaches them all again and refuses.
 */
async function detachAndCompare(sql: Sql, month: string, exported: ArchivedTable[]): Promise<void> {
  for (const table of DISCLOSURE_LOG_TABLES) {
    const partition = partitionName(table, month);
    const [state] = await sql<{ pending: boolean }[]>`
      select inhdetachpending as pending from pg_inherits where inhrelid = ${partition}::regclass`;
    if (!state) continue;
    await sql.unsafe(
      `alter table ${table} detach partition ${partition} ${state.pending ? "finalize" : "concurrently"}`,
    );
  }
  for (const t of exported) {
    const now = await rowsOf(sql, partitionName(t.table, month));
    if (now.rows === t.rows && now.row_hash_sum === t.row_hash_sum) continue;
    await attachPartitions(sql, month);
    throw new AppError(
      "invalid_parameter",
      `${partitionName(t.table, month)} changed while it was archived; it is attached again and nothing was dropped.`,
    );
  }
}

/** Attaches the month's five tables (named as its partitions) to the log's tables, each with its TRUNCATE guard. */
export async function attachPartitions(sql: Sql, month: string): Promise<void> {
  const first = `${month}-01 00:00:00+00`;
  const [{ next }] = (await sql`select (${first}::timestamptz + interval '1 month')::text as next`) as unknown as [
    { next: string },
  ];
  for (const table of DISCLOSURE_LOG_TABLES) {
    const partition = partitionName(table, month);
    const [attached] = await sql`select 1 from pg_inherits where inhrelid = ${partition}::regclass`;
    if (attached) continue;
    await sql.unsafe(`alter table ${table} attach partition ${partition} for values from ('${first}') to ('${next}')`);
    const [guard] =
      await sql`select 1 from pg_trigger where tgrelid = ${partition}::regclass and tgname = ${`${partition}_no_truncate`}`;
    if (!guard)
      await sql.unsafe(
        `create trigger ${partition}_no_truncate before truncate on ${partition} for each statement execute function disclosure_log_append_only()`,
      );
  }
}

/**
 * Restores archived month "YYYY-MM": the archive checked as above and loaded into a schema of its
 * own, its tables moved in as the month's partitions and attached (each checked against its bounds
 * and given the log's indexes), and the month recorded as restored. The overview's summaries never
 * lost the month's counts, so nothing is counted again.
 */
export async function restoreMonth(
  ctx: Ctx,
  month: string,
  options: ArchiveOptions,
): Promise<{ month: string; entries: number }> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  const record = await monthRecord(sql, month);
  const state = await archiveState(sql, month);
  if (!record || state?.action !== "archived")
    throw new AppError("invalid_parameter", `${month} is not archived: nothing to restore.`);
  for (const table of DISCLOSURE_LOG_TABLES) {
    const [exists] = await sql`select to_regclass(${partitionName(table, month)}) is not null as present`;
    if ((exists as { present: boolean }).present)
      throw new AppError(
        "invalid_parameter",
        `${partitionName(table, month)} exists: drop it (it must be empty) before restoring ${month}.`,
      );
  }
  options.onStep?.("reading the archive from the store and checking it");
  const check = await checkArchive(sql, record, {
    ...options,
    manifestKey: state.manifest_key,
    manifestSha256: state.manifest_sha256,
    keep: true,
  });
  if (check.findings.length || !check.schema)
    throw new AppError(
      "unavailable",
      `The archive of ${month} does not check; nothing was restored: ${check.findings.join("; ")}.`,
    );
  options.onStep?.("attaching the partitions");
  await sql.unsafe(
    `drop index ${check.schema}.disclosures_seq_idx, ${check.schema}.disclosure_episodes_disclosure_id_episode_id_idx,
      ${check.schema}.disclosure_files_disclosure_id_path_idx`,
  );
  for (const table of DISCLOSURE_LOG_TABLES) {
    await sql.unsafe(`alter table ${check.schema}.${table} rename to ${partitionName(table, month)}`);
    await sql.unsafe(`alter table ${check.schema}.${partitionName(table, month)} set schema public`);
  }
  await sql.unsafe(`drop schema ${check.schema}`);
  await attachPartitions(sql, month);
  await sql`insert into disclosure_archives (month, action, bucket, manifest_key, manifest_sha256)
    values (${`${month}-01`}, 'restored', ${state.bucket}, ${state.manifest_key}, ${state.manifest_sha256})`;
  return { month, entries: record.entries };
}
