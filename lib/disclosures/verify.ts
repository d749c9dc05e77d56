import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import type { VerificationMode } from "../db/schema";
import { requireReviewer } from "../auth/authorize";
import { entryHash, entryOfRow, GENESIS_HASH, sha256Hex, type DisclosureRow } from "./chain";

export type ChainReport =
  | { intact: true; count: number; headHash: string }
  | { intact: false; count: number; firstBadSeq: number; reason: string };

/** A head of the log that a walk reached intact (table disclosure_checkpoints). */
export type Checkpoint = { seq: number; hash: string; verifiedAt: Date; mode: VerificationMode; entriesChecked: number };

export type VerifyProgress = { entriesDone: number; entriesPerSecond: number; seq: number };

export type VerifyOptions = {
  /**
   * `incremental` checks that the newest checkpoint's entry still holds its hash, then walks only
   * the entries after it; `full` walks every entry from the genesis and then compares the log with
   * every checkpoint. Default `full`.
   */
  mode?: VerificationMode;
  /** Called after each batch: entries walked so far and the rate, for a long full walk. */
  onProgress?: (progress: VerifyProgress) => void;
  /** False: record no checkpoint even when intact (the caller found something the walk cannot see). Default true. */
  writeCheckpoint?: boolean;
  /** Batch sizes (entries, resolved episodes); the defaults suit any log, tests make them small to cross many batches. */
  batch?: { entries: number; episodes: number };
};

export type Verification = {
  report: ChainReport;
  mode: VerificationMode;
  /** Entries this walk hashed and compared. */
  entriesChecked: number;
  /** The checkpoint an incremental walk started from (null: from the genesis). */
  from: Checkpoint | null;
  /** The checkpoint this walk appended, or null (broken, or nothing new). */
  checkpoint: Checkpoint | null;
  durationMs: number;
};

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
/** Batches being read while one is checked: the database's work on them overlaps this process's hashing. */
const READS_IN_FLIGHT = 3;
const EMPTY_DIGEST = sha256Hex("");

/**
 * Verifies the disclosure log: every seq follows the one before, links to its hash, and hashes to
 * what it says; the resolved episodes still digest to what the entry recorded and point at the
 * entry's dataset version. See `VerifyOptions.mode` for what each mode covers. A successful walk
 * appends a checkpoint at the head it reached (a full one always, an incremental one when it
 * checked anything new); a broken log gets none, so every later run reports the break again.
 */
export async function verifyChain(ctx: Ctx, options: VerifyOptions = {}): Promise<ChainReport> {
  return (await verifyChainDetailed(ctx, options)).report;
}

/** `verifyChain` with what the walk did: the checkpoint it started from, the one it wrote, how many entries it checked. */
export async function verifyChainDetailed(ctx: Ctx, options: VerifyOptions = {}): Promise<Verification> {
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  const mode = options.mode ?? "full";
  const started = performance.now();
  const finish = async (report: ChainReport, entriesChecked: number, from: Checkpoint | null, write: boolean): Promise<Verification> => {
    const durationMs = Math.round(performance.now() - started);
    let checkpoint: Checkpoint | null = null;
    if (report.intact && write && options.writeCheckpoint !== false && report.count > 0) checkpoint = await appendCheckpoint(sql, { seq: report.count, hash: report.headHash, mode, entriesChecked, durationMs });
    return { report, mode, entriesChecked, from, checkpoint, durationMs };
  };

  if (mode === "full") {
    const walked = await walkChain(sql, { seq: 0, hash: GENESIS_HASH }, options);
    if (!walked.intact) return finish(walked.report, walked.checked, null, false);
    // An intact chain can still be shorter than, or differ from, what was verified before.
    const contradiction = await contradictedCheckpoint(sql, walked.report.count);
    if (contradiction) return finish(contradiction, walked.checked, null, false);
    return finish(walked.report, walked.checked, null, true);
  }

  const from = await latestCheckpoint(sql);
  if (from) {
    const contradiction = await checkpointStillHolds(sql, from);
    if (contradiction) return finish(contradiction, 0, from, false);
  }
  const walked = await walkChain(sql, from ?? { seq: 0, hash: GENESIS_HASH }, options);
  return finish(walked.report, walked.checked, from, walked.checked > 0);
}

type Walked = { intact: true; report: ChainReport & { intact: true }; checked: number } | { intact: false; report: ChainReport; checked: number };

/**
 * Walks the chain in `seq` order from `start` (an entry already trusted, or the genesis), a batch
 * at a time: memory stays flat however long the log is. Each batch is one query: the entries, and
 * one grouped read of their resolved episodes over the primary key (count, digest recomputed by the
 * database, the versions they point at). Up to the head seen at the start, batches are seq ranges
 * and several are read at once (each on a connection of its own when the pool has them), so the
 * database works on the next while this process hashes one; entries appended meanwhile are read
 * after it. A range that comes back short is a missing seq, found like any other.
 */
async function walkChain(sql: Sql, start: { seq: number; hash: string }, options: VerifyOptions): Promise<Walked> {
  const { onProgress } = options;
  const size = options.batch ?? { entries: BATCH, episodes: MAX_EPISODES_PER_BATCH };
  let previous = start;
  let checked = 0;
  const began = performance.now();
  const [top] = await sql<{ seq: string | null }[]>`select max(seq) as seq from disclosures`;
  const head = top!.seq === null ? 0 : Number(top!.seq);

  const inFlight: { read: Promise<Batch>; upTo: number }[] = [];
  let nextFrom = start.seq;
  const issue = (afterSeq: number, upTo: number) => {
    const read = readBatch(sql, size, afterSeq, upTo);
    // A break makes later reads unneeded: their failure must not go unhandled.
    read.catch(() => undefined);
    return { read, upTo };
  };
  const readAhead = () => {
    while (inFlight.length < READS_IN_FLIGHT && nextFrom < head) {
      inFlight.push(issue(nextFrom, Math.min(nextFrom + size.entries, head)));
      nextFrom += size.entries;
    }
  };

  /** Checks one batch; a report when it breaks the chain. */
  const check = (rows: Row[]): Walked | null => {
    for (const row of rows) {
      const seq = Number(row.seq);
      const fail = (reason: string, at = seq): Walked => ({ intact: false, report: { intact: false, count: previous.seq, firstBadSeq: at, reason }, checked });
      if (seq !== previous.seq + 1) return fail(`seq ${previous.seq + 1} is missing`, previous.seq + 1);
      if (row.prev_hash !== previous.hash) return fail("prev_hash does not match the previous entry's hash");
      if (row.actual_episode_count !== row.episode_count || row.actual_episodes_sha256 !== row.episodes_sha256) {
        return fail("the resolved episodes differ from those recorded");
      }
      const recomputed = entryHash(entryOfRow(row));
      if (recomputed !== row.hash) return fail("the entry does not hash to its recorded hash (altered)");
      // version_id is not in the hash, but the contributor query and replays rely on it: it must
      // be the hashed dataset_id@version, for the entry and for each of its resolved episodes.
      if (!row.version_consistent) return fail("the entry's or its resolved episodes' version_id is not its dataset version");
      previous = { seq, hash: row.hash };
      checked++;
    }
    if (onProgress && rows.length > 0) {
      const seconds = (performance.now() - began) / 1000;
      onProgress({ entriesDone: checked, entriesPerSecond: seconds > 0 ? Math.round(checked / seconds) : checked, seq: previous.seq });
    }
    return null;
  };

  readAhead();
  while (inFlight.length > 0) {
    const { read, upTo } = inFlight.shift()!;
    const { rows, cut } = await read;
    // A range cut short by its episodes is read on from where it stopped, before the ranges after it.
    if (cut) inFlight.unshift(issue(Number(rows.at(-1)!.seq), upTo));
    readAhead();
    const broken = check(rows);
    if (broken) return broken;
  }
  // Entries appended since the walk began (and, in a log cut short in the meantime, the gap).
  for (;;) {
    const { rows, cut } = await readBatch(sql, size, previous.seq, null);
    const broken = check(rows);
    if (broken) return broken;
    if (previous.seq < head) return { intact: false, report: { intact: false, count: previous.seq, firstBadSeq: previous.seq + 1, reason: `seq ${previous.seq + 1} is missing` }, checked };
    if (rows.length < size.entries && !cut) return { intact: true, report: { intact: true, count: previous.seq, headHash: previous.hash }, checked };
  }
}

/** A batch's rows in seq order; `cut` when it stopped early at MAX_EPISODES_PER_BATCH, with more of its range to read. */
type Batch = { rows: Row[]; cut: boolean };

/**
 * Entries with afterSeq < seq <= upTo (or the next BATCH after afterSeq when upTo is null), with
 * their resolved episodes' count, digest and versions; cut short once the entries hold
 * MAX_EPISODES_PER_BATCH episodes (always at least one entry), so that a run of downloads of
 * thousands of listed episodes each still reads as a batch of bounded size.
 */
async function readBatch(sql: Sql, size: { entries: number; episodes: number }, afterSeq: number, upTo: number | null): Promise<Batch> {
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

type CheckpointRow = { seq: string; hash: string; verified_at: Date; mode: VerificationMode; entries_checked: string };

const checkpointOf = (r: CheckpointRow): Checkpoint => ({ seq: Number(r.seq), hash: r.hash, verifiedAt: r.verified_at, mode: r.mode, entriesChecked: Number(r.entries_checked) });

async function latestCheckpoint(sql: Sql): Promise<Checkpoint | null> {
  const [row] = await sql<CheckpointRow[]>`
    select seq, hash, verified_at, mode, entries_checked from disclosure_checkpoints order by seq desc, verified_at desc limit 1`;
  return row ? checkpointOf(row) : null;
}

async function appendCheckpoint(sql: Sql, c: { seq: number; hash: string; mode: VerificationMode; entriesChecked: number; durationMs: number }): Promise<Checkpoint> {
  const [row] = await sql<CheckpointRow[]>`
    insert into disclosure_checkpoints (seq, hash, mode, entries_checked, duration_ms)
    values (${c.seq}, ${c.hash}, ${c.mode}, ${c.entriesChecked}, ${c.durationMs})
    returning seq, hash, verified_at, mode, entries_checked`;
  return checkpointOf(row!);
}

const headSeq = async (sql: Sql): Promise<number> => {
  const [head] = await sql<{ seq: string | null }[]>`select max(seq) as seq from disclosures`;
  return head!.seq === null ? 0 : Number(head!.seq);
};

/** Where the log no longer holds a checkpoint's entry: cut off below it, or rewritten. Null when it does. */
async function checkpointStillHolds(sql: Sql, c: Checkpoint): Promise<ChainReport | null> {
  const [entry] = await sql<{ hash: string }[]>`select hash from disclosures where seq = ${c.seq}`;
  if (!entry) {
    const end = await headSeq(sql);
    if (end < c.seq) return truncated(end, c);
    return { intact: false, count: c.seq - 1, firstBadSeq: c.seq, reason: `seq ${c.seq} is missing (it was verified at ${c.verifiedAt.toISOString()})` };
  }
  if (entry.hash !== c.hash) return rewritten(sql, c);
  return null;
}

/**
 * After an intact full walk to `end`: the first checkpoint the log contradicts, as a report. The
 * log may have been cut (a checkpoint beyond its end) or rewritten consistently (a checkpoint whose
 * entry now has another hash): the walk alone cannot see either.
 */
async function contradictedCheckpoint(sql: Sql, end: number): Promise<ChainReport | null> {
  const [first] = await sql<(CheckpointRow & { present: boolean })[]>`
    select c.seq, c.hash, c.verified_at, c.mode, c.entries_checked, d.seq is not null as present
    from disclosure_checkpoints c left join disclosures d on d.seq = c.seq
    where d.hash is distinct from c.hash
    order by c.seq, c.verified_at limit 1`;
  if (!first) return null;
  if (first.present) return rewritten(sql, checkpointOf(first));
  const [furthest] = await sql<CheckpointRow[]>`
    select seq, hash, verified_at, mode, entries_checked from disclosure_checkpoints order by seq desc, verified_at desc limit 1`;
  return truncated(end, checkpointOf(furthest!));
}

function truncated(end: number, c: Checkpoint): ChainReport {
  return {
    intact: false,
    count: end,
    firstBadSeq: end + 1,
    reason: `entries after seq ${end} were removed: the log ends at seq ${end} but seq ${c.seq} was verified at ${c.verifiedAt.toISOString()}`,
  };
}

/** The rewrite lies between the last checkpoint that still matches and `c`. */
async function rewritten(sql: Sql, c: Checkpoint): Promise<ChainReport> {
  const [matching] = await sql<{ seq: string | null }[]>`
    select max(c.seq) as seq from disclosure_checkpoints c join disclosures d on d.seq = c.seq and d.hash = c.hash where c.seq < ${c.seq}`;
  const good = matching!.seq === null ? 0 : Number(matching!.seq);
  const since = good > 0 ? `; the checkpoint at seq ${good} still matches` : "";
  return {
    intact: false,
    count: good,
    firstBadSeq: good + 1,
    reason: `history rewritten at or before seq ${c.seq}: its hash is not the one verified at ${c.verifiedAt.toISOString()}${since}`,
  };
}

/** The newest checkpoint, and when the log was last verified in full: for the reviewer's banner. */
export async function checkpointSummary(ctx: Ctx): Promise<{ latest: Checkpoint | null; lastFull: Checkpoint | null }> {
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  const [latest, full] = await Promise.all([
    latestCheckpoint(sql),
    sql<CheckpointRow[]>`
      select seq, hash, verified_at, mode, entries_checked from disclosure_checkpoints where mode = 'full' order by verified_at desc limit 1`,
  ]);
  return { latest, lastFull: full[0] ? checkpointOf(full[0]) : null };
}
