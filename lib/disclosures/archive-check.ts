import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import type { KeyObject } from "node:crypto";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import type { Sql } from "../db/client";
import { DISCLOSURE_LOG_TABLES } from "../db/schema";
import { getObjectBytes } from "../storage/client";
import { readMonthDigest, sha256Hex, type ArchiveStore } from "./archive-store";
import { checkRange, DEFAULT_BATCH } from "./verify-range";
import { createHash } from "node:crypto";
import { Transform } from "node:stream";

/*
 * An archived month checked on its own, from the store: its manifest, its signed digest, every
 * table's object (SHA-256, rows, the rows' content), and the chain through it, from the hash before
 * its first entry to the hash of its last, with the same range check a full walk makes
 * (lib/disclosures/verify-range.ts), on the archive loaded into a schema of its own.
 */

export const ARCHIVE_FORMAT = "das-disclosure-archive/1";

export type ArchivedTable = {
  table: (typeof DISCLOSURE_LOG_TABLES)[number];
  key: string;
  columns: string[];
  rows: number;
  /** The sum of a 64-bit hash of each row's text (PostgreSQL's hashtextextended), as text: the rows' content. */
  row_hash_sum: string;
  bytes: number;
  /** SHA-256 of the object's bytes (gzipped CSV). */
  sha256: string;
};

export type ArchiveManifest = {
  format: typeof ARCHIVE_FORMAT;
  month: string;
  entries: number;
  first_seq: number;
  last_seq: number;
  prev_hash: string;
  last_hash: string;
  checkpoint: { id: number; seq: number; hash: string };
  month_digest: { key: string; sha256: string };
  tables: ArchivedTable[];
  created_at: string;
};

/** What a month closed with (disclosure_months): what its archive must hold. */
export type MonthRecord = {
  month: string;
  entries: number;
  firstSeq: number;
  lastSeq: number;
  prevHash: string;
  lastHash: string;
  checkpointId: number;
  digestKey: string | null;
};

export type ArchiveCheck = {
  findings: string[];
  manifest: ArchiveManifest | null;
  /** The schema the archive was loaded into, when the caller asked to keep it (a restore). */
  schema: string | null;
};

/** The count and content hash of a table's rows, as the manifest records them. */
export async function rowsOf(sql: Sql, table: string): Promise<{ rows: number; row_hash_sum: string }> {
  const [row] = await sql.unsafe<{ rows: string; sum: string | null }[]>(
    `select count(*) as rows, sum(hashtextextended(t::text, 0)::numeric)::text as sum from ${table} t`,
  );
  return { rows: Number(row!.rows), row_hash_sum: row!.sum ?? "0" };
}

/**
 * Checks the archive of `record`'s month whose manifest is `manifestKey` (with `manifestSha256`,
 * when the database recorded it). Every problem is a sentence in `findings`; none means the archive
 * holds exactly the month that closed. With `keep`, the loaded schema is left for the caller.
 */
export async function checkArchive(
  sql: Sql,
  record: MonthRecord,
  options: { store: ArchiveStore; publicKey: KeyObject; manifestKey: string; manifestSha256?: string; keep?: boolean },
): Promise<ArchiveCheck> {
  const findings: string[] = [];
  const manifest = await readManifest(options, findings);
  if (!manifest) return { findings, manifest, schema: null };
  findings.push(...againstRecord(manifest, record));
  const digest = await readMonthDigest(options.store, manifest.month_digest.key, options.publicKey);
  if ("problem" in digest) findings.push(digest.problem);
  else {
    if (sha256Hex(digest.bytes) !== manifest.month_digest.sha256)
      findings.push("the month's digest is not the one the manifest names");
    findings.push(...againstRecord({ ...digest.digest }, record).map((f) => `the signed digest: ${f}`));
  }
  const schema = `das_archive_check_${randomBytes(6).toString("hex")}`;
  await sql.unsafe(`create schema ${schema}`);
  try {
    for (const table of manifest.tables) findings.push(...(await loadTable(sql, schema, table, options.store)));
    if (!findings.length) findings.push(...(await checkLoadedChain(sql, schema, record)));
  } catch (error) {
    findings.push(`the archive could not be loaded: ${(error as Error).message}`);
  }
  if (options.keep && !findings.length) return { findings, manifest, schema };
  await sql.unsafe(`drop schema ${schema} cascade`);
  return { findings, manifest, schema: null };
}

async function readManifest(
  options: { store: ArchiveStore; manifestKey: string; manifestSha256?: string },
  findings: string[],
): Promise<ArchiveManifest | null> {
  let bytes: Buffer;
  try {
    bytes = await getObjectBytes(options.store.client, options.store.bucket, options.manifestKey);
  } catch {
    findings.push(`the manifest ${options.manifestKey} cannot be read from the store`);
    return null;
  }
  if (options.manifestSha256 && sha256Hex(bytes) !== options.manifestSha256)
    findings.push(`the manifest ${options.manifestKey} is not the one recorded when the month was archived`);
  try {
    const manifest = JSON.parse(bytes.toString("utf8")) as ArchiveManifest;
    if (manifest.format !== ARCHIVE_FORMAT) throw new Error();
    const names = manifest.tables.map((t) => t.table).sort();
    if (names.join() !== [...DISCLOSURE_LOG_TABLES].sort().join()) throw new Error();
    return manifest;
  } catch {
    findings.push(
      `the manifest ${options.manifestKey} is not a manifest of format ${ARCHIVE_FORMAT} for the log's five tables`,
    );
    return null;
  }
}

/** What differs between a manifest (or digest) and the month's record. */
function againstRecord(
  m: { month: string; entries: number; first_seq: number; last_seq: number; prev_hash: string; last_hash: string },
  r: MonthRecord,
): string[] {
  const pairs: [string, unknown, unknown][] = [
    ["month", m.month, r.month],
    ["entries", m.entries, r.entries],
    ["first seq", m.first_seq, r.firstSeq],
    ["last seq", m.last_seq, r.lastSeq],
    ["hash before its first entry", m.prev_hash, r.prevHash],
    ["hash of its last entry", m.last_hash, r.lastHash],
  ];
  return pairs.filter(([, a, b]) => a !== b).map(([what, a, b]) => `${what} is ${a}, the month closed with ${b}`);
}

/** One table's object: its bytes hashed as they stream, gunzipped into a table of `schema`, then its rows counted and hashed. */
async function loadTable(sql: Sql, schema: string, t: ArchivedTable, store: ArchiveStore): Promise<string[]> {
  const findings: string[] = [];
  const target = `${schema}.${t.table}`;
  await sql.unsafe(`create table ${target} (like public.${t.table} including defaults including constraints)`);
  const answer = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: t.key }));
  const hash = createHash("sha256");
  let bytes = 0;
  const counting = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const columns = t.columns.map((c) => `"${c.replace(/"/g, '""')}"`).join(", ");
  const copy = await sql.unsafe(`copy ${target} (${columns}) from stdin with (format csv, header true)`).writable();
  await pipeline(answer.Body as Readable, counting, createGunzip(), copy);
  if (hash.digest("hex") !== t.sha256 || bytes !== t.bytes)
    findings.push(`${t.key} is not the object the manifest names (its SHA-256 or size differs)`);
  const loaded = await rowsOf(sql, target);
  if (loaded.rows !== t.rows || loaded.row_hash_sum !== t.row_hash_sum)
    findings.push(
      `${t.table}: the archive holds ${loaded.rows} rows or other content than the ${t.rows} rows archived`,
    );
  return findings;
}

/**
 * The loaded month's chain, checked by the full walk's own range check, reading the loaded tables
 * (the schema first on the search path; the catalog's versions from the database): the first entry
 * links to the hash before the month, the last has the month's last hash, every one between
 * verifies; and the summaries hold one row per disclosed episode and contributor's episode.
 */
async function checkLoadedChain(sql: Sql, schema: string, r: MonthRecord): Promise<string[]> {
  await sql.unsafe(`create index on ${schema}.disclosures (seq)`);
  await sql.unsafe(`create index on ${schema}.disclosure_episodes (disclosure_id, episode_id)`);
  await sql.unsafe(`create index on ${schema}.disclosure_files (disclosure_id, path)`);
  const reserved = await sql.reserve();
  let range: Awaited<ReturnType<typeof checkRange>>;
  try {
    await reserved.unsafe(`set search_path to ${schema}, public`);
    range = await checkRange(reserved as unknown as Sql, DEFAULT_BATCH, r.firstSeq - 1, r.lastSeq);
    await reserved.unsafe("reset search_path");
  } finally {
    reserved.release();
  }
  const findings: string[] = [];
  if (range.failure)
    findings.push(`the chain breaks in the archive at seq ${range.failure.seq}: ${range.failure.reason}`);
  else if (range.first?.seq !== r.firstSeq || range.first.prevHash !== r.prevHash)
    findings.push(`the archive's first entry does not link to the hash before the month (seq ${r.firstSeq - 1})`);
  else if (range.last?.seq !== r.lastSeq || range.last.hash !== r.lastHash || range.checked !== r.entries)
    findings.push(`the archive does not end at the month's last entry (seq ${r.lastSeq}, its recorded hash)`);
  const [sums] = await sql.unsafe<{ episodes: string; entries: string; counted: string | null }[]>(
    `select (select count(*) from ${schema}.disclosure_episodes) as episodes,
       (select count(*) from ${schema}.disclosure_episode_entries) as entries,
       (select sum(episode_count) from ${schema}.disclosure_contributors) as counted`,
  );
  if (sums!.episodes !== sums!.entries || sums!.episodes !== (sums!.counted ?? "0"))
    findings.push("the archive's summaries do not hold one row per disclosed episode");
  return findings;
}
