import type { Sql } from "../db/client";
import { hashOfRow, sha256Hex, type DisclosureRow } from "./chain";

/*
 * One range of the log, checked on its own: the building block of a walk (verify.ts), in this
 * process or in a thread of a parallel walk (verify-worker.ts). Not a verb: it takes a connection,
 * and whoever walks has had their role checked by `verifyChain` (or is the operator running
 * das-admin with the database's own URL).
 */

/** An entry as the walk reads it: instants as the database's text, and what its episodes resolve to. */
type Row = Omit<DisclosureRow<string>, "seq" | "total_bytes"> & {
  seq: number;
  total_bytes: number;
  version_id: number;
  hash: string;
  version_known: boolean;
  /** Null for an entry without resolved episodes. */
  resolved: Resolved | null;
  /** The digest of its `disclosure_files` rows, for an entry that names delivered copies; else null. */
  files_digest: string | null;
};

type Resolved = { n: number; digest: string; lowest_version_id: number; highest_version_id: number };

/**
 * Entries per read. Large enough that a round trip and the batch's grouped episode query are cheap
 * per entry; small enough that a batch of whole-version downloads (tens of thousands of episode ids
 * in their requested scopes) stays a few MiB.
 */
const BATCH = 5000;
/**
 * At most this many resolved episodes per batch (a whole version's download counts its episodes;
 * one of listed ids holds them in its requested scope too): memory stays bounded whatever the mix.
 */
const MAX_EPISODES_PER_BATCH = 400_000;

const EMPTY_DIGEST = sha256Hex("");

/**
 * What one range of seq holds, checked on its own: every entry hashes to its recorded hash, still
 * holds the episodes it recorded in its dataset version, and links to the entry before it inside
 * the range. Whether the range's first entry follows the range before it is its caller's to check,
 * which lets ranges be checked in any order, at once, by different threads.
 */
export type RangeCheck = {
  /** The range's first entry: its seq and the hash it links to. Null for a range without entries. */
  first: { seq: number; prevHash: string } | null;
  /** The last entry that verified, before any failure. */
  last: { seq: number; hash: string } | null;
  /** Entries that verified, before any failure. */
  checked: number;
  /** The first entry of the range that does not verify, or the seq missing inside it. */
  failure: { seq: number; reason: string } | null;
};

/** Batch sizes (entries, resolved episodes) of one read. */
export type BatchSize = { entries: number; episodes: number };

export const DEFAULT_BATCH: BatchSize = { entries: BATCH, episodes: MAX_EPISODES_PER_BATCH };

/**
 * The session of a connection that does nothing but walk (a thread of a parallel walk): instants
 * written in UTC, which `isoOfTimestamp` turns into ISO text without a Date, and no bitmap scans,
 * so that a batch's episodes are read in the primary key's order and digested as they come
 * instead of sorted first (a third of the database's work per entry). Answers do not depend on
 * either: any other session checks the same, more slowly.
 */
export const WALK_SESSION: Record<string, string> = { TimeZone: "UTC", enable_bitmapscan: "off" };

/**
 * Checks afterSeq < seq <= upTo in reads of bounded size (see `RangeCheck`). With `upTo` null:
 * the next batch of entries after afterSeq, whatever their seqs, so that a gap cannot end a walk
 * early.
 */
export async function checkRange(
  sql: Sql,
  size: BatchSize,
  afterSeq: number,
  upTo: number | null,
): Promise<RangeCheck> {
  const result: RangeCheck = { first: null, last: null, checked: 0, failure: null };
  /** Checks the next entry in seq order; false once the range has failed. */
  const check = (row: Row): boolean => {
    const { seq } = row;
    const { last } = result;
    if (!last) result.first ??= { seq, prevHash: row.prev_hash };
    const failure = !last
      ? entryProblem(row)
      : seq !== last.seq + 1
        ? { seq: last.seq + 1, reason: `seq ${last.seq + 1} is missing` }
        : row.prev_hash !== last.hash
          ? { seq, reason: "prev_hash does not match the previous entry's hash" }
          : entryProblem(row);
    if (failure) {
      result.failure = failure;
      return false;
    }
    result.last = { seq, hash: row.hash };
    result.checked++;
    return true;
  };
  let from = afterSeq;
  for (;;) {
    const batch = await readBatch(sql, size, from, upTo, check);
    if (result.failure || !batch.more) return result;
    from = batch.lastSeq;
  }
}

/** What is wrong with one entry on its own, or null. */
function entryProblem(row: Row): { seq: number; reason: string } | null {
  const { seq, resolved } = row;
  if ((resolved?.n ?? 0) !== row.episode_count || (resolved?.digest ?? EMPTY_DIGEST) !== row.episodes_sha256) {
    return { seq, reason: "the resolved episodes differ from those recorded" };
  }
  if (row.files_sha256 !== null && row.files_digest !== row.files_sha256)
    return { seq, reason: "the delivered files differ from those recorded" };
  if (hashOfRow(row, isoOfTimestamp) !== row.hash)
    return { seq, reason: "the entry does not hash to its recorded hash (altered)" };
  // version_id is not in the hash, but the contributor query and replays rely on it: it must be the
  // hashed dataset_id@version, for the entry and for each of its resolved episodes.
  if (
    !row.version_known ||
    (resolved && (resolved.lowest_version_id !== row.version_id || resolved.highest_version_id !== row.version_id))
  ) {
    return { seq, reason: "the entry's or its resolved episodes' version_id is not its dataset version" };
  }
  return null;
}

/**
 * A timestamptz as the database writes it, as `toISOString` writes the same instant. A session in
 * UTC (the walk's threads set it) writes "2026-11-23 00:24:21+00" or "…21.123+00", which become
 * "2026-11-23T00:24:21.000Z" and "…21.123Z" by moving characters; every other form (another time
 * zone, a fraction of other than three digits, years past 9999 or BC) goes through a Date, exactly as
 * the driver parses instants everywhere else. The walk reads two per entry: a Date for each cost it
 * a tenth of its time.
 */
export function isoOfTimestamp(text: string): string {
  if (WHOLE_SECONDS_UTC.test(text)) return `${text.slice(0, 10)}T${text.slice(11, 19)}.000Z`;
  if (MILLISECONDS_UTC.test(text)) return `${text.slice(0, 10)}T${text.slice(11, 23)}Z`;
  // An instant no Date can hold (BC, say) is none the service wrote: it cannot hash to the recorded hash.
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? `unreadable: ${text}` : date.toISOString();
}
const WHOLE_SECONDS_UTC = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00$/;
const MILLISECONDS_UTC = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/;

/** How a read ended: the last seq it covered, and whether its range goes on after it. */
type Batch = { lastSeq: number; more: boolean };

/**
 * Hands `check` the entries with afterSeq < seq <= upTo (or the next BATCH after afterSeq when
 * upTo is null) in seq order, each with its resolved episodes' count, digest and versions, until
 * `check` answers false; stops short once the entries hold MAX_EPISODES_PER_BATCH episodes
 * (always at least one entry), so that a run of downloads of thousands of listed episodes each
 * still reads as a batch of bounded size.
 *
 * Three queries: where the batch ends; its entries' episodes, grouped per entry; then its entries,
 * each checked as it is parsed and then dropped. Held as a batch, thousands of wide rows outlived
 * the young generation's collections and were copied and collected again, which cost the walk a
 * third of its time; the episodes' summaries are what stays, five small fields an entry.
 */
async function readBatch(
  sql: Sql,
  size: BatchSize,
  afterSeq: number,
  upTo: number | null,
  check: (row: Row) => boolean,
): Promise<Batch> {
  const range = upTo === null ? sql`seq > ${afterSeq}` : sql`seq > ${afterSeq} and seq <= ${upTo}`;
  const [end] = await sql<{ last_seq: string | null; entries: number; episodes: number }[]>`
    select max(seq) as last_seq, count(*)::int as entries, coalesce(max(so_far), 0)::float8 as episodes
    from (
      select seq, episode_count, sum(episode_count) over (order by seq) as so_far
      from (select seq, episode_count from disclosures where ${range} order by seq limit ${size.entries}) d
    ) counted
    where so_far - episode_count < ${size.episodes}`;
  if (end!.last_seq === null) return { lastSeq: afterSeq, more: false };
  const lastSeq = Number(end!.last_seq);
  // Entries up to lastSeq are committed for good: seqs are handed out under the chain's lock and
  // become visible in order, each with its episodes. So both reads below see the same entries.
  //
  // The episodes' digest is SHA-256 over the ids in byte order (the column's collation is "C"),
  // one per line, as episodesDigest computes it. Read in the primary key's order, the ids of an
  // entry arrive sorted; the walk's threads turn bitmap scans off so that the planner does not
  // trade that order for a sort of every episode of the batch.
  //
  // The episodes are partitioned by their entry's month (migration 0026): the whole months the
  // batch's entries are in keep the read to their partitions (whole months, so that an entry whose
  // time was altered inside its month still meets its episodes, and is found altered by its hash).
  const resolved = await sql<(Resolved & { disclosure_id: string })[]>`
    with batch as (select id, occurred_at from disclosures where seq > ${afterSeq} and seq <= ${lastSeq}),
    months as (
      select date_trunc('month', min(occurred_at) at time zone 'UTC') at time zone 'UTC' as first,
        (date_trunc('month', max(occurred_at) at time zone 'UTC') + interval '1 month') at time zone 'UTC' as after
      from batch)
    select disclosure_id, count(*)::int as n,
      encode(sha256(convert_to(string_agg(episode_id, E'\\n' order by episode_id), 'UTF8')), 'hex') as digest,
      min(version_id) as lowest_version_id, max(version_id) as highest_version_id
    from disclosure_episodes
    where disclosure_id = any (array(select id from batch))
      and occurred_at >= (select first from months) and occurred_at < (select after from months)
    group by disclosure_id`;
  const byId = new Map(resolved.map((r) => [r.disclosure_id, r]));
  // The files of entries that delivered per-licence copies, digested as filesDigest does ("C" order
  // is byte order); partitioned by their entry's month as the episodes are, and read the same way.
  const files = await sql<{ disclosure_id: string; digest: string }[]>`
    with batch as (
      select id, occurred_at from disclosures where seq > ${afterSeq} and seq <= ${lastSeq} and files_sha256 is not null),
    months as (
      select date_trunc('month', min(occurred_at) at time zone 'UTC') at time zone 'UTC' as first,
        (date_trunc('month', max(occurred_at) at time zone 'UTC') + interval '1 month') at time zone 'UTC' as after
      from batch)
    select disclosure_id,
      encode(sha256(convert_to(string_agg(path || E'\t' || sha256, E'\n' order by path), 'UTF8')), 'hex') as digest
    from disclosure_files
    where disclosure_id = any (array(select id from batch))
      and occurred_at >= (select first from months) and occurred_at < (select after from months)
    group by disclosure_id`;
  const filesOf = new Map(files.map((f) => [f.disclosure_id, f.digest]));
  // Instants as text (see isoOfTimestamp); whether (version_id, dataset_id, version) names a
  // version of the catalog, from one hashed read of the catalog's versions.
  let checking = true;
  let thrown: unknown = null;
  await sql<(Omit<Row, "seq" | "resolved" | "files_digest"> & { seq: string })[]>`
    select id, seq, occurred_at::text as occurred_at, organization_id, api_key_id, user_id, reviewer_role, channel, dataset_id,
      version, version_id, licence_id, names_terms, terms_sha256, requested_scope, episode_count, file_count, total_bytes::float8 as total_bytes, episodes_sha256,
      files_sha256, expires_at::text as expires_at, request_id, prev_hash, hash,
      exists (select from dataset_versions v where v.id = d.version_id and v.dataset_id = d.dataset_id and v.version = d.version) as version_known
    from disclosures d where seq > ${afterSeq} and seq <= ${lastSeq}
    order by seq`.forEach((read) => {
    // After a failure the rest of the batch still arrives; it is not looked at. An exception must
    // not escape into the driver's reading of the connection: it is thrown once the query is done.
    if (!checking) return;
    try {
      checking = check(
        Object.assign(read, {
          seq: Number(read.seq),
          resolved: byId.get(read.id) ?? null,
          files_digest: filesOf.get(read.id) ?? null,
        }),
      );
    } catch (error) {
      thrown = error;
      checking = false;
    }
  });
  if (thrown !== null) throw thrown;
  return {
    lastSeq,
    more: upTo !== null && lastSeq < upTo && (end!.entries === size.entries || end!.episodes >= size.episodes),
  };
}
