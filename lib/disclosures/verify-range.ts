import type { Sql } from "../db/client";
import { entryHash, entryOfRow, sha256Hex, type DisclosureRow } from "./chain";

/*
 * One range of the log, checked on its own: the building block of a walk (verify.ts), in this
 * process or in a thread of a parallel walk (verify-worker.ts). Not a verb: it takes a connection,
 * and whoever walks has had their role checked by `verifyChain` (or is the operator running
 * das-admin with the database's own URL).
 */

type Row = DisclosureRow & {
  seq: string;
  hash: string;
  actual_episode_count: number;
  actual_episodes_sha256: string;
  version_consistent: boolean;
};

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
 * Checks afterSeq < seq <= upTo in reads of bounded size (see `RangeCheck`). With `upTo` null:
 * the next batch of entries after afterSeq, whatever their seqs, so that a gap cannot end a walk
 * early.
 */
export async function checkRange(sql: Sql, size: BatchSize, afterSeq: number, upTo: number | null): Promise<RangeCheck> {
  const result: RangeCheck = { first: null, last: null, checked: 0, failure: null };
  let from = afterSeq;
  for (;;) {
    const { rows, cut } = await readBatch(sql, size, from, upTo);
    for (const row of rows) {
      const seq = Number(row.seq);
      const { last } = result;
      if (!last) result.first ??= { seq, prevHash: row.prev_hash };
      const failure = !last
        ? entryProblem(row)
        : seq !== last.seq + 1
          ? { seq: last.seq + 1, reason: `seq ${last.seq + 1} is missing` }
          : row.prev_hash !== last.hash
            ? { seq, reason: "prev_hash does not match the previous entry's hash" }
            : entryProblem(row);
      if (failure) return { ...result, failure };
      result.last = { seq, hash: row.hash };
      result.checked++;
    }
    if (!cut || upTo === null) return result;
    from = Number(rows.at(-1)!.seq);
  }
}

/** What is wrong with one entry on its own, or null. */
function entryProblem(row: Row): { seq: number; reason: string } | null {
  const seq = Number(row.seq);
  if (row.actual_episode_count !== row.episode_count || row.actual_episodes_sha256 !== row.episodes_sha256) {
    return { seq, reason: "the resolved episodes differ from those recorded" };
  }
  if (entryHash(entryOfRow(row)) !== row.hash) return { seq, reason: "the entry does not hash to its recorded hash (altered)" };
  // version_id is not in the hash, but the contributor query and replays rely on it: it must be the
  // hashed dataset_id@version, for the entry and for each of its resolved episodes.
  if (!row.version_consistent) return { seq, reason: "the entry's or its resolved episodes' version_id is not its dataset version" };
  return null;
}

/** A batch's rows in seq order; `cut` when it stopped early at MAX_EPISODES_PER_BATCH, with more of its range to read. */
type Batch = { rows: Row[]; cut: boolean };

/**
 * Entries with afterSeq < seq <= upTo (or the next BATCH after afterSeq when upTo is null), with
 * their resolved episodes' count, digest and versions; cut short once the entries hold
 * MAX_EPISODES_PER_BATCH episodes (always at least one entry), so that a run of downloads of
 * thousands of listed episodes each still reads as a batch of bounded size.
 */
async function readBatch(sql: Sql, size: BatchSize, afterSeq: number, upTo: number | null): Promise<Batch> {
  // The episodes' digest is SHA-256 over the ids in byte order (the column's collation is "C"),
  // one per line, as episodesDigest computes it; an entry without episodes digests the empty text.
  const range = upTo === null ? sql`seq > ${afterSeq} order by seq limit ${size.entries}` : sql`seq > ${afterSeq} and seq <= ${upTo} order by seq`;
  const rows = await sql<(Row & { episodes_so_far: string })[]>`
    with batch as materialized (
      select * from (
        select id, seq, occurred_at, organization_id, api_key_id, user_id, reviewer_role, channel, dataset_id, version, version_id,
          licence_id, requested_scope, episode_count, file_count, total_bytes, episodes_sha256, expires_at, request_id, prev_hash, hash,
          sum(episode_count) over (order by seq) as episodes_so_far
        from disclosures where ${range}
      ) ranged
      where episodes_so_far - episode_count < ${size.episodes}
    ), resolved as (
      select de.disclosure_id, count(*)::int as n,
        encode(sha256(convert_to(string_agg(de.episode_id, E'\\n' order by de.episode_id), 'UTF8')), 'hex') as digest,
        min(de.version_id) as lowest_version_id, max(de.version_id) as highest_version_id
      from disclosure_episodes de
      where de.disclosure_id = any (array(select id from batch))
      group by de.disclosure_id
    )
    select b.*, coalesce(r.n, 0) as actual_episode_count, coalesce(r.digest, ${EMPTY_DIGEST}) as actual_episodes_sha256,
      (v.id is not null and (r.n is null or (r.lowest_version_id = b.version_id and r.highest_version_id = b.version_id))) as version_consistent
    from batch b
    left join resolved r on r.disclosure_id = b.id
    left join dataset_versions v on v.id = b.version_id and v.dataset_id = b.dataset_id and v.version = b.version`;
  // Put in seq order here: sorting a batch of wide rows in the database spills to disk past work_mem.
  rows.sort((a, b) => Number(a.seq) - Number(b.seq));
  const last = rows.at(-1);
  const cut = last !== undefined && Number(last.episodes_so_far) >= size.episodes && (upTo === null || Number(last.seq) < upTo);
  return { rows, cut };
}

