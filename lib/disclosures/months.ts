import type { KeyObject } from "node:crypto";
import type { Ctx } from "../context";
import { sqlOf, type Db, type Sql } from "../db/client";
import { requireAdmin } from "../auth/authorize";
import { AppError } from "../errors";
import { putMonthDigest, type ArchiveStore } from "./archive-store";
import { parseMonth } from "./filter";
import { verifyChainDetailed } from "./verify";

/*
 * The log's months (migrations 0026 and 0027): each a partition of its five tables, made ahead of
 * time, and closed once it has ended: the chain walked through its last entry, a checkpoint there,
 * and a signed digest of what it held in the store. A closed month can be archived
 * (lib/disclosures/archive.ts).
 */

/** Months made ahead of the current one, so that appends never meet a month without its partition. */
export const MONTHS_AHEAD = 3;

/** "2026-11" for the first day of that month (UTC). */
export const monthName = (first: Date) => first.toISOString().slice(0, 7);

const nextMonth = (first: Date) => new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 1));

/**
 * Makes the current month's partitions and MONTHS_AHEAD more where they are missing, through the
 * owner's function (the service's role owns nothing); returns how many tables it made.
 */
export async function ensureMonthsAhead(sql: Sql): Promise<number> {
  const [row] = await sql<{ made: number }[]>`
    select das_create_disclosure_months(
      (now() at time zone 'UTC')::date,
      ((now() at time zone 'UTC') + make_interval(months => ${MONTHS_AHEAD}))::date) as made`;
  return row!.made;
}

/** How many months are made ahead of the current one: what an operator is warned about when it runs low. */
export async function monthsAhead(sql: Sql): Promise<number> {
  const [row] = await sql<{ ahead: number }[]>`
    select count(*)::int as ahead from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'disclosures'::regclass
      and c.relname > 'disclosures' || to_char(now() at time zone 'UTC', '"_y"YYYY"m"MM')`;
  return row!.ahead;
}

export type ClosedMonth = {
  month: string;
  entries: number;
  firstSeq: number;
  lastSeq: number;
  prevHash: string;
  lastHash: string;
  digestKey: string | null;
};

/**
 * Closes every month that has ended, holds entries and is not closed yet, oldest first: walks the
 * chain from the newest checkpoint (which reaches past the month's end, as the months behind the
 * head have ended), then records a checkpoint at the month's last entry with what the month holds
 * and, when `signingKey` is given, its signed digest in `store`. A month whose chain does not
 * verify is not closed (and so cannot be archived); the walk's report says why.
 */
export async function closeEndedMonths(
  ctx: Ctx,
  options: { store?: ArchiveStore; signingKey?: KeyObject } = {},
): Promise<ClosedMonth[]> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  const open = await endedOpenMonths(sql);
  if (!open.length) return [];
  const walk = await verifyChainDetailed(ctx, { mode: "incremental" });
  if (!walk.report.intact)
    throw new AppError(
      "unavailable",
      `The chain does not verify (broken at seq ${walk.report.firstBadSeq}: ${walk.report.reason}); no month was closed.`,
    );
  const closed: ClosedMonth[] = [];
  for (const first of open) {
    const month = await monthBounds(sql, first);
    if (!month || month.lastSeq > walk.report.count) continue;
    const digestKey =
      options.store && options.signingKey
        ? await putMonthDigest(options.store, options.signingKey, {
            month: month.month,
            entries: month.entries,
            first_seq: month.firstSeq,
            last_seq: month.lastSeq,
            prev_hash: month.prevHash,
            last_hash: month.lastHash,
            time: new Date().toISOString(),
          })
        : null;
    if (await recordClosed(ctx.db, { ...month, digestKey }, first)) closed.push({ ...month, digestKey });
  }
  return closed;
}

/** The first days of months before the current one that hold entries and are not closed, oldest first. */
async function endedOpenMonths(sql: Sql): Promise<Date[]> {
  const partitions = await sql<{ month: string }[]>`
    select to_char(to_timestamp(substring(c.relname from '_y(\\d{4}m\\d{2})$'), 'YYYY"m"MM'), 'YYYY-MM') as month
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'disclosures'::regclass and c.relname ~ '_y\\d{4}m\\d{2}$'
    order by 1`;
  const current = monthName(new Date());
  const closed = new Set(
    (await sql<{ month: string }[]>`select to_char(month, 'YYYY-MM') as month from disclosure_months`).map(
      (r) => r.month,
    ),
  );
  return partitions.filter((p) => p.month < current && !closed.has(p.month)).map((p) => parseMonth(p.month)!);
}

/** What a month holds: its first and last entry (one partition's index, each end), or null when it holds none. */
async function monthBounds(sql: Sql, first: Date): Promise<Omit<ClosedMonth, "digestKey"> | null> {
  const end = nextMonth(first);
  const [row] = await sql<{ first_seq: string; prev_hash: string; last_seq: string; last_hash: string }[]>`
    select f.seq as first_seq, f.prev_hash, l.seq as last_seq, l.hash as last_hash
    from (select seq, prev_hash from disclosures where occurred_at >= ${first} and occurred_at < ${end} order by seq limit 1) f,
      (select seq, hash from disclosures where occurred_at >= ${first} and occurred_at < ${end} order by seq desc limit 1) l`;
  if (!row) return null;
  const firstSeq = Number(row.first_seq);
  const lastSeq = Number(row.last_seq);
  return {
    month: monthName(first),
    entries: lastSeq - firstSeq + 1,
    firstSeq,
    lastSeq,
    prevHash: row.prev_hash,
    lastHash: row.last_hash,
  };
}

/** The month's checkpoint and its record, once: false when another closer was first. */
async function recordClosed(db: Db, m: ClosedMonth, first: Date): Promise<boolean> {
  return db.transaction(async (transaction) => {
    const tx = sqlOf(transaction as unknown as Db);
    await tx`select pg_advisory_xact_lock(${MONTHS_LOCK})`;
    const [already] = await tx`select 1 from disclosure_months where month = ${first}`;
    if (already) return false;
    const [checkpoint] = await tx<{ id: string }[]>`
      insert into disclosure_checkpoints (seq, hash, mode, entries_checked, duration_ms)
      values (${m.lastSeq}, ${m.lastHash}, 'month', ${m.entries}, 0) returning id`;
    await tx`
      insert into disclosure_months (month, entries, first_seq, last_seq, prev_hash, last_hash, checkpoint_id, digest_key)
      values (${first}, ${m.entries}, ${m.firstSeq}, ${m.lastSeq}, ${m.prevHash}, ${m.lastHash}, ${checkpoint!.id}, ${m.digestKey})`;
    return true;
  });
}

// Any constant: the same for every process that closes months of this database.
const MONTHS_LOCK = 7_203_118;

export type MonthState = {
  month: string;
  /** Whether its partitions are in the database. */
  online: boolean;
  closed: { entries: number; firstSeq: number; lastSeq: number; digestKey: string | null } | null;
  /** Its latest archive action, if any. */
  archive: "archived" | "restored" | null;
};

/** Every month the log has a partition or a record of, oldest first: for `das-admin disclosures months`. */
export async function listMonths(ctx: Ctx): Promise<MonthState[]> {
  requireAdmin(ctx);
  const rows = await sqlOf(ctx.db)<
    {
      month: string;
      online: boolean;
      entries: string | null;
      first_seq: string | null;
      last_seq: string | null;
      digest_key: string | null;
      archive: "archived" | "restored" | null;
    }[]
  >`
    with online as (
      select to_char(to_timestamp(substring(c.relname from '_y(\\d{4}m\\d{2})$'), 'YYYY"m"MM'), 'YYYY-MM') as month
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'disclosures'::regclass and c.relname ~ '_y\\d{4}m\\d{2}$'),
    recorded as (select to_char(month, 'YYYY-MM') as name, entries, first_seq, last_seq, digest_key from disclosure_months)
    select coalesce(o.month, r.name) as month, o.month is not null as online, r.entries, r.first_seq, r.last_seq, r.digest_key,
      (select a.action from disclosure_archives a where to_char(a.month, 'YYYY-MM') = coalesce(o.month, r.name) order by a.id desc limit 1) as archive
    from online o full join recorded r on r.name = o.month
    order by 1`;
  return rows.map((r) => ({
    month: r.month,
    online: r.online,
    closed:
      r.entries === null
        ? null
        : {
            entries: Number(r.entries),
            firstSeq: Number(r.first_seq),
            lastSeq: Number(r.last_seq),
            digestKey: r.digest_key,
          },
    archive: r.archive,
  }));
}
