import { Worker } from "node:worker_threads";
import postgres from "postgres";
import { canonicalJson } from "@/lib/canonical-json";
import type { Sql } from "@/lib/db/client";
import type { DisclosureChannel, RequestedScope, ReviewerRole } from "@/lib/db/schema";
import { canonicalEntry } from "@/lib/disclosures/chain";

// The limits bench:review measures the log's export and its full walk against, on the same machine
// in the same run: what PostgreSQL does when asked for the same rows with nothing in between, and
// what SHA-256 alone does over the bytes a walk hashes.

/**
 * Seconds for `COPY (select ...) TO STDOUT` of the CSV export's first `rows` rows (the whole log,
 * oldest first, with the same columns, joins and text formats as lib/disclosures/export.ts), read
 * to the end by this process: the export's rows as the database writes them alone. On a connection
 * of its own, closed after it: postgres.js 3.4.9 answers no further query on a connection after a
 * COPY ... TO STDOUT of some megabytes.
 */
export async function copyRows(databaseUrl: string, rows: number): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const started = process.hrtime.bigint();
  const stream = await sql
    .unsafe(`copy (
      select d.seq, d.id, ${iso("d.occurred_at")}, o.slug, o.name, k.prefix, u.email, d.reviewer_role, d.channel,
             d.dataset_id, d.version, d.licence_id, d.terms_sha256, d.episode_count, d.file_count, d.total_bytes,
             ${iso("d.expires_at")}, d.request_id, d.requested_scope::text, d.hash
      from (select * from disclosures order by seq limit ${Math.floor(rows)}) d
        left join organizations o on o.id = d.organization_id
        left join api_keys k on k.id = d.api_key_id
        left join users u on u.id = d.user_id
      order by d.seq) to stdout with (format csv, header)`)
    .readable();
  let lines = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>)
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await sql.end({ timeout: 1 });
  if (lines - 1 !== Math.floor(rows)) throw new Error(`COPY sent ${lines - 1} rows, not ${rows}`);
  return seconds;
}

/**
 * Seconds for `COPY (select ...) TO STDOUT` of every entry's columns as a full walk reads them
 * (lib/disclosures/verify-range.ts), in seq order, read to the end by this process on one
 * connection: what reading the log alone costs, which bounds any walk that checks it.
 */
export async function copyWalkRows(databaseUrl: string): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, connection: { TimeZone: "UTC" } });
  const started = process.hrtime.bigint();
  const stream = await sql
    .unsafe(`copy (
      select id, seq, occurred_at::text, organization_id, api_key_id, user_id, reviewer_role, channel, dataset_id,
        version, version_id, licence_id, names_terms, terms_sha256, requested_scope, episode_count, file_count,
        total_bytes::float8, episodes_sha256, expires_at::text, request_id, prev_hash, hash
      from disclosures order by seq) to stdout`)
    .readable();
  for await (const _ of stream as AsyncIterable<Buffer>);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await sql.end({ timeout: 1 });
  return seconds;
}

type SampledRow = {
  id: string;
  seq: string;
  occurred_at: Date;
  organization_id: string | null;
  api_key_id: string | null;
  user_id: string | null;
  reviewer_role: ReviewerRole | null;
  channel: DisclosureChannel;
  dataset_id: string;
  version: string;
  licence_id: string | null;
  names_terms: boolean;
  terms_sha256: string | null;
  requested_scope: RequestedScope;
  episode_count: number;
  file_count: number;
  total_bytes: number;
  episodes_sha256: string;
  expires_at: Date;
  request_id: string;
  prev_hash: string;
  episodes: string | null;
};

const SAMPLE = 2000;

/**
 * Seconds for `threads` threads to hash, with node:crypto's SHA-256 and nothing else, what a full
 * walk of `entries` entries hashes: per entry its canonical text and its requested scope's
 * canonical JSON (in the walk's threads) and its episode ids one per line (in the database, for the
 * episodes' digest). The texts are those of a sample of the log's own entries, hashed in turn.
 */
export async function rawSha256Seconds(sql: Sql, entries: number, threads: number): Promise<number> {
  const [{ n }] = (await sql`select count(*)::float8 as n from disclosures`) as unknown as [{ n: number }];
  const percent = Math.min(100, Math.max(0.01, (100 * SAMPLE * 4) / n));
  const rows = await sql<SampledRow[]>`
    select d.*, (select string_agg(episode_id, E'\n' order by episode_id) from disclosure_episodes e where e.disclosure_id = d.id) as episodes
    from disclosures d tablesample system (${percent}) limit ${SAMPLE}`;
  const texts = rows.flatMap((r) => [
    canonicalJson(r.requested_scope),
    canonicalEntry({
      id: r.id,
      seq: Number(r.seq),
      occurredAt: r.occurred_at,
      organizationId: r.organization_id,
      apiKeyId: r.api_key_id,
      userId: r.user_id,
      reviewerRole: r.reviewer_role,
      channel: r.channel,
      datasetId: r.dataset_id,
      version: r.version,
      licenceId: r.licence_id,
      termsSha256: r.names_terms ? r.terms_sha256 : undefined,
      requestedScope: r.requested_scope,
      episodeCount: r.episode_count,
      fileCount: r.file_count,
      totalBytes: Number(r.total_bytes),
      episodesSha256: r.episodes_sha256,
      expiresAt: r.expires_at,
      requestId: r.request_id,
      prevHash: r.prev_hash,
    }),
    r.episodes ?? "",
  ]);
  // Each thread hashes its share of the entries, cycling through the sample (three texts an entry).
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    const { hash } = require("node:crypto");
    const { texts, entries } = workerData;
    parentPort.once("message", () => {
      let t = 0;
      for (let i = 0; i < entries; i++) {
        for (let j = 0; j < 3; j++) hash("sha256", texts[t + j], "hex");
        t = t + 3 === texts.length ? 0 : t + 3;
      }
      parentPort.postMessage("done");
    });
    parentPort.postMessage("ready");`;
  const workers = Array.from(
    { length: threads },
    (_, i) =>
      new Worker(source, {
        eval: true,
        workerData: { texts, entries: Math.floor(entries / threads) + (i < entries % threads ? 1 : 0) },
      }),
  );
  const message = (w: Worker) =>
    new Promise<void>((resolve, reject) => {
      w.once("message", () => resolve());
      w.once("error", reject);
    });
  await Promise.all(workers.map(message));
  const started = process.hrtime.bigint();
  const done = workers.map(message);
  for (const w of workers) w.postMessage("go");
  await Promise.all(done);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(workers.map((w) => w.terminate()));
  return seconds;
}
