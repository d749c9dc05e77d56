import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { getDb } from "../db/client";
import type { RequestedScope } from "../db/schema";
import type { EpisodeLine, FileLine } from "../catalog/import/records";
import { objectKey, storeLocation, URL_TTL_SECONDS } from "../storage/config";
import { POST } from "@/app/api/[[...path]]/route";
import { byteOrder } from "./fixtures";
import { call, type CallResult } from "./http";

/**
 * What download tests share: the request, an oracle that resolves a scope from the fixture data
 * (independently of the SQL that resolves it in the service), the disclosure-log rows of a
 * download, and the checks every signed URL must pass.
 */

export type DownloadRequest = { dataset_id: string; version: string } & RequestedScope;

/**
 * Returns once the database clock, which times and signs every download, has moved past the
 * second of `instant`: what a request then signs differs from what was signed at `instant`. For
 * requests handled on the suite's shared pool, whose clock a test cannot move ahead the way an
 * isolated database's can (lib/testing/disclosure-fixtures.ts), it asks that clock rather than
 * sleeping a guessed while.
 */
export async function untilDatabaseClockPasses(instant: Date): Promise<void> {
  for (;;) {
    const [row] = await getDb().$client<{ now: Date }[]>`select date_trunc('second', clock_timestamp()) as now`;
    if (row!.now.getTime() > instant.getTime()) return;
    await sleep(1000 - (Date.now() % 1000) + 5);
  }
}

export function postDownload(key: string, body: unknown, headers: Record<string, string> = {}): Promise<CallResult> {
  return call(POST, "/api/v1/downloads", { method: "POST", key, body, headers });
}

export type ExpectedFile = {
  path: string;
  episode_id: string | null;
  episode_ids: string[];
  stream: string | null;
  size_bytes: number;
  sha256: string;
};
export type Expected = { files: ExpectedFile[]; episodeIds: string[]; coDelivered: string[]; totalBytes: number };

/** The episodes a files.jsonl line says the file holds, in byte order. */
export const episodesOfFile = (f: FileLine): string[] =>
  (f.episode_id ? [f.episode_id] : (f.episode_ids ?? f.episodes?.map((e) => e.episode_id) ?? []))
    .slice()
    .sort(byteOrder);

/**
 * The files and episodes a scope covers in a version, computed from the lines the version was
 * imported from: every file holding an episode of the scope, all of that file's episodes
 * delivered, and the version-level files when the whole version or `include_version_files` asks.
 */
export function expectedScope(
  episodes: readonly EpisodeLine[],
  files: readonly FileLine[],
  scope: RequestedScope,
): Expected {
  let episodeSet: Set<string> | null = null;
  if (scope.episode_ids) episodeSet = new Set(scope.episode_ids);
  if (scope.filter) {
    const f = scope.filter;
    episodeSet = new Set(
      episodes
        .filter(
          (e) =>
            (f.outcome === undefined || e.outcome === f.outcome) &&
            (f.environment === undefined || e.environment === f.environment) &&
            (f.task === undefined || e.task === f.task) &&
            (f.contributor === undefined || e.contributor === f.contributor) &&
            (f.has_recovery === undefined || e.has_recovery === f.has_recovery) &&
            (f.min_duration_s === undefined || e.duration_s >= f.min_duration_s) &&
            (f.max_duration_s === undefined || e.duration_s <= f.max_duration_s),
        )
        .map((e) => e.episode_id),
    );
  }
  const inStreams = (f: FileLine) => (scope.streams ? f.stream != null && scope.streams.includes(f.stream) : true);
  const chosen = files
    .filter((f) => {
      const held = episodesOfFile(f);
      if (!held.length && scope.include_version_files) return true;
      return (episodeSet ? held.some((id) => episodeSet.has(id)) : true) && inStreams(f);
    })
    .map((f) => {
      const held = episodesOfFile(f);
      return {
        path: f.path,
        episode_id: held.length === 1 ? held[0]! : null,
        episode_ids: held,
        stream: f.stream ?? null,
        size_bytes: f.size_bytes,
        sha256: f.sha256,
      };
    })
    .sort((a, b) => byteOrder(a.path, b.path));
  const episodeIds = [...new Set(chosen.flatMap((f) => f.episode_ids))].sort(byteOrder);
  const coDelivered = episodeSet ? episodeIds.filter((id) => !episodeSet.has(id)) : [];
  return { files: chosen, episodeIds, coDelivered, totalBytes: chosen.reduce((sum, f) => sum + f.size_bytes, 0) };
}

export type DisclosureRow = {
  id: string;
  seq: string;
  occurred_at: Date;
  organization_id: string;
  api_key_id: string | null;
  user_id: string | null;
  channel: string;
  dataset_id: string;
  version: string;
  version_id: number;
  licence_id: string;
  requested_scope: RequestedScope;
  episode_count: number;
  file_count: number;
  total_bytes: string;
  expires_at: Date;
  request_id: string;
  idempotency_key: string | null;
};

const sql = () => getDb().$client;

export async function disclosureRows(where: {
  id?: string;
  organizationId?: string;
  datasetId?: string;
  requestId?: string;
}): Promise<DisclosureRow[]> {
  const s = sql();
  return s<DisclosureRow[]>`
    select id, seq, occurred_at, organization_id, api_key_id, user_id, channel, dataset_id, version, version_id, licence_id,
           requested_scope, episode_count, file_count, total_bytes, expires_at, request_id, idempotency_key
    from disclosures
    where ${where.id === undefined ? s`true` : s`id = ${where.id}`}
      and ${where.organizationId === undefined ? s`true` : s`organization_id = ${where.organizationId}`}
      and ${where.datasetId === undefined ? s`true` : s`dataset_id = ${where.datasetId}`}
      and ${where.requestId === undefined ? s`true` : s`request_id = ${where.requestId}`}
    order by seq`;
}

/** The resolved episodes recorded for a disclosure, in byte order. */
export async function disclosureEpisodes(disclosureId: string): Promise<string[]> {
  const rows = await sql()<{ episode_id: string }[]>`
    select episode_id from disclosure_episodes where disclosure_id = ${disclosureId} order by episode_id`;
  return rows.map((r) => r.episode_id);
}

/**
 * Runs `run` while every transaction that appends a disclosure of `datasetId` fails at its commit:
 * a deferred constraint trigger raises then, after the request has resolved its scope and
 * appended its entry, so a test sees what a client is answered when the last step fails. The
 * trigger touches only that dataset's appends (a dataset of the test's own keeps the suite's other
 * tests, which share the database, unaffected) and is dropped however `run` ends.
 */
export async function failAtCommit<T>(datasetId: string, run: () => Promise<T>): Promise<T> {
  const name = `das_test_fail_${datasetId.replace(/[^a-z0-9]/g, "_")}`;
  const literal = `'${datasetId.replaceAll("'", "''")}'`;
  try {
    await ddl(`
      create function ${name}() returns trigger language plpgsql as $$
      begin
        if new.dataset_id = ${literal} then raise exception 'injected failure at commit'; end if;
        return null;
      end $$`);
    await ddl(`create constraint trigger ${name} after insert on disclosures
      deferrable initially deferred for each row execute function ${name}()`);
    return await run();
  } finally {
    await ddl(`drop trigger if exists ${name} on disclosures`);
    await ddl(`drop function if exists ${name}()`);
  }
}

/**
 * A trigger made or dropped on the log locks the partitioned table and each of its months, and so
 * can deadlock with whatever else the shared database is doing to them at that moment (another
 * file's appends, the months' upkeep): PostgreSQL then aborts one side with 40P01 (seen once in
 * CI's second pass). The statement is sent again; nothing of it was done.
 */
async function ddl(statement: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sql().unsafe(statement);
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "40P01" || attempt === 5) throw error;
    }
  }
}

export async function versionIdOf(datasetId: string, version: string): Promise<number> {
  const [row] = await sql()<
    { id: number }[]
  >`select id from dataset_versions where dataset_id = ${datasetId} and version = ${version}`;
  return row!.id;
}

/** `2026-03-01T12:34:56.000Z` as SigV4 writes it: `20260301T123456Z`. */
export const amzDate = (date: Date) =>
  date
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");

/**
 * Every URL of a download: the store's origin, the object's key under the bucket (each path
 * segment percent-encoded), signed for `host` at `issuedAt` and valid exactly 900 s.
 */
export function expectSignedUrls(
  download: { dataset_id: string; version: string; files: { path: string; url: string }[] },
  issuedAt: Date,
): void {
  const location = storeLocation();
  const store = new URL(location.endpoint);
  const encode = (segment: string) =>
    encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  for (const file of download.files) {
    const url = new URL(file.url);
    expect(url.origin).toBe(store.origin);
    const key = objectKey(download.dataset_id, download.version, file.path);
    expect(url.pathname).toBe(`/${location.bucket}/${key.split("/").map(encode).join("/")}`);
    expect([...url.searchParams.keys()].sort()).toEqual([
      "X-Amz-Algorithm",
      "X-Amz-Credential",
      "X-Amz-Date",
      "X-Amz-Expires",
      "X-Amz-Signature",
      "X-Amz-SignedHeaders",
    ]);
    expect(url.searchParams.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256");
    expect(url.searchParams.get("X-Amz-Date")).toBe(amzDate(issuedAt));
    expect(url.searchParams.get("X-Amz-Expires")).toBe(String(URL_TTL_SECONDS));
    expect(URL_TTL_SECONDS).toBe(900);
    expect(url.searchParams.get("X-Amz-SignedHeaders")).toBe("host");
    expect(url.searchParams.get("X-Amz-Credential")).toBe(
      `${location.accessKeyId}/${amzDate(issuedAt).slice(0, 8)}/${location.region}/s3/aws4_request`,
    );
    expect(url.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
  }
}
