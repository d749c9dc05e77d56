import { readsOf, type Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import type { VerificationMode } from "../db/schema";
import { requireReviewer } from "../auth/authorize";
import { GENESIS_HASH } from "./chain";
import { checkRange, DEFAULT_BATCH, type BatchSize, type RangeCheck } from "./verify-range";
import { archivedMonths, archivedMonthsSql, type ArchivedMonth } from "./archived-months";

export type ChainReport =
  | { intact: true; count: number; headHash: string }
  | { intact: false; count: number; firstBadSeq: number; reason: string };

/** A head of the log that a walk reached intact (table disclosure_checkpoints). */
export type Checkpoint = {
  seq: number;
  hash: string;
  verifiedAt: Date;
  mode: VerificationMode;
  entriesChecked: number;
};

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
  batch?: BatchSize;
  /**
   * Who checks the ranges up to the head seen at the start; default this process. A long full walk
   * passes `parallelRangeChecker` (verify-parallel.ts), which spreads them over threads.
   */
  ranges?: RangeChecker;
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

/** Batches being read while one is checked: the database's work on them overlaps this process's hashing. */
const READS_IN_FLIGHT = 3;

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
  // The walk reads where the context's reviewer reads go (a replica when there is one); the
  // checkpoint it reached is written on the primary, which holds every entry the replica has.
  const sql = sqlOf(readsOf(ctx));
  const mode = options.mode ?? "full";
  const started = performance.now();
  const finish = async (
    report: ChainReport,
    entriesChecked: number,
    from: Checkpoint | null,
    write: boolean,
  ): Promise<Verification> => {
    const durationMs = Math.round(performance.now() - started);
    let checkpoint: Checkpoint | null = null;
    if (report.intact && write && options.writeCheckpoint !== false && report.count > 0)
      checkpoint = await appendCheckpoint(sqlOf(ctx.db), {
        seq: report.count,
        hash: report.headHash,
        mode,
        entriesChecked,
        durationMs,
      });
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

type Walked =
  | { intact: true; report: ChainReport & { intact: true }; checked: number }
  | { intact: false; report: ChainReport; checked: number };

/**
 * Checks ranges of the log for a walk: in this process (the default), or spread over threads by
 * `verify-parallel.ts` for a long full walk. `rangeEntries` is how many seqs each range spans,
 * `inFlight` how many ranges are checked at once.
 */
export type RangeChecker = {
  rangeEntries: number;
  inFlight: number;
  /** Checks afterSeq < seq <= upTo. */
  check(afterSeq: number, upTo: number): Promise<RangeCheck>;
};

/** Ranges of one batch each, three at a time in this process: the database reads the next while this process hashes one. */
const inProcess = (sql: Sql, size: BatchSize): RangeChecker => ({
  rangeEntries: size.entries,
  inFlight: READS_IN_FLIGHT,
  check: (afterSeq, upTo) => checkRange(sql, size, afterSeq, upTo),
});

/**
 * Walks the chain in `seq` order from `start` (an entry already trusted, or the genesis): memory
 * stays flat however long the log is. Up to the head seen at the start, the log is cut into ranges
 * checked several at a time by the range checker (each batch is where it ends, one grouped read of
 * its resolved episodes over the primary key, and its entries); each result is then linked to the
 * range before it, in order, so the first break is the one reported. Entries appended meanwhile are
 * read after it. A range that comes back short is a missing seq, found like any other.
 *
 * An archived month is not in the database: it is joined at its checkpoints instead, as a range
 * whose first entry links to the hash recorded before it and whose last has the hash recorded at
 * its end (checked against the archive itself when it was made, and by `verifyArchive`), so the
 * online entries after it must link to exactly that hash.
 */
async function walkChain(sql: Sql, start: { seq: number; hash: string }, options: VerifyOptions): Promise<Walked> {
  const { onProgress } = options;
  const size = options.batch ?? DEFAULT_BATCH;
  let previous = start;
  let checked = 0;
  const began = performance.now();
  const head = await headSeq(sql);
  const archived = (await archivedMonths(sql)).filter((m) => m.lastSeq > start.seq);
  // Threads pay for themselves only over several of their ranges; a short walk stays here.
  const checker =
    options.ranges && head - start.seq > 2 * options.ranges.rangeEntries ? options.ranges : inProcess(sql, size);

  const fail = (at: number, reason: string): Walked => ({
    intact: false,
    report: { intact: false, count: at - 1, firstBadSeq: at, reason },
    checked,
  });
  /** Links a range's result to the walk so far; a report when it breaks the chain. */
  const link = (range: RangeCheck): Walked | null => {
    if (range.first) {
      if (range.first.seq !== previous.seq + 1) return fail(previous.seq + 1, `seq ${previous.seq + 1} is missing`);
      if (range.first.prevHash !== previous.hash)
        return fail(range.first.seq, "prev_hash does not match the previous entry's hash");
    }
    checked += range.checked;
    if (range.last) previous = range.last;
    if (range.failure) return fail(range.failure.seq, range.failure.reason);
    if (onProgress && range.checked > 0) {
      const seconds = (performance.now() - began) / 1000;
      onProgress({
        entriesDone: checked,
        entriesPerSecond: seconds > 0 ? Math.round(checked / seconds) : checked,
        seq: previous.seq,
      });
    }
    return null;
  };

  const inFlight: Promise<RangeCheck>[] = [];
  let nextFrom = start.seq;
  const readAhead = () => {
    while (inFlight.length < checker.inFlight && nextFrom < head) {
      const month = archived.find((m) => m.lastSeq > nextFrom);
      if (month && month.firstSeq <= nextFrom + 1) {
        inFlight.push(Promise.resolve(archivedRange(month)));
        nextFrom = month.lastSeq;
        continue;
      }
      const upTo = Math.min(nextFrom + checker.rangeEntries, head, month ? month.firstSeq - 1 : head);
      const check = checker.check(nextFrom, upTo);
      // A break makes later ranges unneeded: their failure must not go unhandled.
      check.catch(() => undefined);
      inFlight.push(check);
      nextFrom = upTo;
    }
  };
  readAhead();
  while (inFlight.length > 0) {
    const range = await inFlight.shift()!;
    readAhead();
    const broken = link(range);
    if (broken) return broken;
  }
  // Entries appended since the walk began (and, in a log cut short in the meantime, the gap).
  for (;;) {
    const range = await checkRange(sql, size, previous.seq, null);
    const broken = link(range);
    if (broken) return broken;
    if (range.first === null) {
      if (previous.seq < head) return fail(previous.seq + 1, `seq ${previous.seq + 1} is missing`);
      return { intact: true, report: { intact: true, count: previous.seq, headHash: previous.hash }, checked };
    }
  }
}

/** An archived month as the walk links it: its ends, as recorded, and nothing checked here. */
const archivedRange = (m: ArchivedMonth): RangeCheck => ({
  first: { seq: m.firstSeq, prevHash: m.prevHash },
  last: { seq: m.lastSeq, hash: m.lastHash },
  checked: 0,
  failure: null,
});

type CheckpointRow = { seq: string; hash: string; verified_at: Date; mode: VerificationMode; entries_checked: string };

const checkpointOf = (r: CheckpointRow): Checkpoint => ({
  seq: Number(r.seq),
  hash: r.hash,
  verifiedAt: r.verified_at,
  mode: r.mode,
  entriesChecked: Number(r.entries_checked),
});

async function latestCheckpoint(sql: Sql): Promise<Checkpoint | null> {
  const [row] = await sql<CheckpointRow[]>`
    select seq, hash, verified_at, mode, entries_checked from disclosure_checkpoints order by seq desc, verified_at desc limit 1`;
  return row ? checkpointOf(row) : null;
}

async function appendCheckpoint(
  sql: Sql,
  c: { seq: number; hash: string; mode: VerificationMode; entriesChecked: number; durationMs: number },
): Promise<Checkpoint> {
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
    return {
      intact: false,
      count: c.seq - 1,
      firstBadSeq: c.seq,
      reason: `seq ${c.seq} is missing (it was verified at ${c.verifiedAt.toISOString()})`,
    };
  }
  if (entry.hash !== c.hash) return rewritten(sql, c);
  return null;
}

/**
 * After an intact full walk to `end`: the first checkpoint the log contradicts, as a report. The
 * log may have been cut (a checkpoint beyond its end) or rewritten consistently (a checkpoint whose
 * entry now has another hash): the walk alone cannot see either. A checkpoint inside an archived
 * month is the archive's to hold (the month's own, at its end, is what the walk joined).
 */
async function contradictedCheckpoint(sql: Sql, end: number): Promise<ChainReport | null> {
  const [first] = await sql<(CheckpointRow & { present: boolean })[]>`
    select c.seq, c.hash, c.verified_at, c.mode, c.entries_checked, d.seq is not null as present
    from disclosure_checkpoints c left join disclosures d on d.seq = c.seq
    where d.hash is distinct from c.hash
      and not exists (select from ${archivedMonthsSql(sql)} a where c.seq between a.first_seq and a.last_seq)
    order by c.seq, c.verified_at limit 1`;
  if (!first) return null;
  if (first.present) return rewritten(sql, checkpointOf(first));
  return truncated(end, (await latestCheckpoint(sql))!);
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

/** When the log was last verified in full, or null if never: for the reviewer's banner. */
export async function lastFullCheckpoint(ctx: Ctx): Promise<Checkpoint | null> {
  requireReviewer(ctx);
  const [row] = await sqlOf(readsOf(ctx))<CheckpointRow[]>`
    select seq, hash, verified_at, mode, entries_checked from disclosure_checkpoints where mode = 'full' order by verified_at desc limit 1`;
  return row ? checkpointOf(row) : null;
}
