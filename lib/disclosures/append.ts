import type { PendingQuery, Row } from "postgres";
import type { LogClock } from "../context";
import { sqlOf, type Db, type Sql } from "../db/client";
import { executePrepared, preparedStatement } from "../db/prepared";
import { isTransaction } from "../db/tx";
import { AppError } from "../errors";
import {
  canonicalTemplate,
  entryHash,
  filesDigest,
  GENESIS_HASH,
  type ChainedEntry,
  type ChainPosition,
} from "./chain";

// Any constant; it only has to be the same for every process that appends to this database.
const CHAIN_LOCK = 7_203_115;

/**
 * An entry to append. `termsSha256` must be said, not left out: the licence's terms document (null
 * when it has none), resolved before the chain's lock like everything else the entry asserts, or
 * undefined for a reviewer's preview, which has no licence.
 */
export type NewEntry = Omit<ChainedEntry, keyof ChainPosition | "termsSha256"> & {
  termsSha256: string | null | undefined;
  versionId: number;
  idempotencyScope: string | null;
  idempotencyKey: string | null;
  requestSha256: string;
};

type Fragment = PendingQuery<Row[]>;

/**
 * A reason not to append an entry, handed over by the rule's owner (lib/catalog/withdrawn.ts,
 * lib/disclosures/reuse.ts): the append evaluates it under the chain's lock, where no other
 * append can change the answer, and reports it, knowing nothing of what it means. `when` is a
 * condition, true when the entry must not be appended, on
 * - `i`, the entry: a row of its fields (`i.ord`, `i.request_sha256`, `i.version_id`, ...),
 * - `disclosed d`, the episodes of every entry of the batch (`d.ord`, `d.version_id`,
 *   `d.episode_id`; the entry's own where `d.ord = i.ord`),
 * - `clock.at`, the time the batch is appended at.
 * `readsTheLog`: the condition reads earlier entries of the same request (`requestSha256`), which
 * one statement cannot see in its own batch; two such entries then never share a batch.
 */
export type Refusal = {
  readonly name: string;
  readonly when: (sql: Sql) => Fragment;
  readonly readsTheLog?: boolean;
};

/** An entry a refusal kept out of the log: nothing of it was written. */
export type Refused = { refused: Refusal };

/** An entry for the log with the episodes it discloses, as a download or a preview hands it over. */
export type LogAppend = {
  entry: NewEntry;
  /** Every episode the entry discloses (its `disclosure_episodes` rows), each once. */
  episodeIds: readonly string[];
  /**
   * The per-licence copies the entry delivers (a fingerprinted version), with the sha256 of each:
   * its `disclosure_files` rows; `entry.filesSha256` must be their `filesDigest`. Left out for
   * every other entry, which names no files.
   */
  files?: readonly { path: string; sha256: string }[];
  ttlSeconds: number;
  /**
   * What keeps the entry out of the log, the first that holds reported; said by every caller, even
   * when there is none (a download hands over the withdrawals since its scope was resolved).
   */
  refusals: readonly Refusal[];
};

/**
 * Appends entries to the log through this process's group commit: the entries of concurrent
 * requests wait while the batch before them is written, then go together in one transaction under
 * one hold of the chain's lock (`appendBatch`). The hold of the chain's lock bounds the log's
 * rate, so one hold, one statement and one commit for many entries is what lets the log keep up
 * with its clients; an entry that arrives alone is written at once, alone. An entry a refusal
 * keeps out leaves the rest of its batch as it is. A batch that fails before its commit (a
 * duplicate Idempotency-Key) is written again entry by entry, so that each request gets its own
 * answer; one that fails at the commit fails for all of its entries, which then may or may not be
 * in the log, and none of their URLs leave.
 *
 * `ctx.clock` is the log's time (tests move it; absent, the database's): entries of different
 * clocks go through different committers, so that a batch has one time.
 *
 * Resolves to the chained entry, or to the refusal that kept it out.
 */
export async function appendToLog(
  ctx: { db: Db; clock?: LogClock },
  append: LogAppend,
): Promise<ChainedEntry | Refused> {
  // Inside a caller's transaction (a test's that rolls back, a verb composed into another), the
  // entry is the caller's to commit: appended there, alone.
  if (isTransaction(ctx.db)) return (await appendBatch(sqlOf(ctx.db), [append], ctx.clock))[0]!;
  const root = sqlOf(ctx.db);
  const clock = ctx.clock ?? databaseClock;
  let byClock = committers.get(root);
  if (!byClock) committers.set(root, (byClock = new WeakMap()));
  let committer = byClock.get(clock);
  if (!committer) byClock.set(clock, (committer = new GroupCommitter(root, clock)));
  return committer.append(append);
}

/**
 * No entry, no URL: what a verb that appends answers when its entry could not be recorded (or its
 * commit was not confirmed), `subject` naming what was asked for ("The download"). A disclosure
 * that never reached its recipient is acceptable, a URL without one never is. An AppError raised
 * on the way (a refusal the verb meant) passes as it is.
 */
export function notRecorded(subject: string, cause: unknown): AppError {
  if (cause instanceof AppError) return cause;
  return new AppError("unavailable", `${subject} could not be recorded, so no URL was issued. Retry shortly.`, {
    headers: { "Retry-After": "2" },
    cause,
  });
}

/** A bound on a batch's statement and on what one failed entry makes the others wait for. */
const MAX_BATCH = 64;
/**
 * Two batches in flight: the next counts its contributors while the one before it holds the
 * chain's lock.
 */
const WRITERS = 2;

const committers = new WeakMap<Sql, WeakMap<LogClock, GroupCommitter>>();

type Waiting = {
  append: LogAppend;
  resolve: (outcome: ChainedEntry | Refused) => void;
  reject: (error: unknown) => void;
};

class GroupCommitter {
  private waiting: Waiting[] = [];
  private writers = 0;

  constructor(
    private readonly root: Sql,
    private readonly clock: LogClock,
  ) {}

  append(append: LogAppend): Promise<ChainedEntry | Refused> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ append, resolve, reject });
      if (this.writers < WRITERS) void this.writeAll();
    });
  }

  private async writeAll(): Promise<void> {
    this.writers++;
    try {
      while (this.waiting.length) await this.write(this.nextBatch());
    } finally {
      this.writers--;
    }
  }

  /**
   * The waiting entries in order, up to MAX_BATCH, but never two of the same request that a refusal
   * decides by the log's earlier entries (two equal previews): the second is decided by whether the
   * first was appended, so it waits for the next batch.
   */
  private nextBatch(): Waiting[] {
    const batch: Waiting[] = [];
    const readingTheLog = new Set<string>();
    const left: Waiting[] = [];
    for (const w of this.waiting) {
      const request = w.append.refusals.some((r) => r.readsTheLog) ? w.append.entry.requestSha256 : null;
      if (batch.length === MAX_BATCH || (request !== null && readingTheLog.has(request))) left.push(w);
      else {
        batch.push(w);
        if (request !== null) readingTheLog.add(request);
      }
    }
    this.waiting = left;
    return batch;
  }

  private async write(batch: Waiting[]): Promise<void> {
    let committing = false;
    try {
      const entries = await this.root.begin(async (tx) => {
        const written = await appendBatch(
          tx as unknown as Sql,
          batch.map((w) => w.append),
          this.clock,
        );
        committing = true;
        return written;
      });
      batch.forEach((w, i) => w.resolve(entries[i]!));
    } catch (error) {
      if (committing || batch.length === 1) {
        for (const w of batch) w.reject(error);
        return;
      }
      for (const w of batch) await this.write([w]);
    }
  }
}

/**
 * Appends `appends` in order at the end of the chain, inside the caller's transaction, with their
 * episodes and files, and returns each one's chained entry, or the first of its refusals that
 * held (nothing of that entry is written; the others are chained without it), at the log's time
 * (`clock`, the database's when absent).
 *
 * The advisory lock serialises appends across connections and app instances, so `seq` is gapless
 * and each entry links to the one before; it is held from here to the caller's commit. Everything
 * that does not need an entry's place in the chain is done before the lock, in one statement for
 * the whole batch: every entry's contributors are counted. Under the lock there is one statement for
 * the whole batch, sent in the same write as the lock itself (`chainStatement`), which writes the
 * entries with their episodes and files: the log is partitioned by month of `occurred_at` (migration
 * 0026), and an entry's episodes and files go to its month, which only the clock read under the lock
 * decides.
 */
export async function appendBatch(
  tx: Sql,
  appends: readonly LogAppend[],
  clock: LogClock = databaseClock,
): Promise<(ChainedEntry | Refused)[]> {
  if (!appends.length) return [];
  const templates = appends.map(({ entry }) => {
    // Every entry under a licence names its terms since migration 0017; one that did not would hash
    // as an older entry does (version 1) and say nothing about them.
    if (entry.reviewerRole === null && entry.termsSha256 === undefined)
      throw new Error(`Entry ${entry.id} is made under a licence and names no terms; nothing was appended.`);
    const { versionId, idempotencyScope, idempotencyKey, requestSha256, ...asserted } = entry;
    return canonicalTemplate(asserted);
  });
  appends.forEach(({ entry, episodeIds, files }) => {
    if (entry.episodeCount !== episodeIds.length)
      throw new Error(
        `Entry ${entry.id} records ${entry.episodeCount} episodes and names ${episodeIds.length}; nothing was appended.`,
      );
    if (
      (files === undefined) !== (entry.filesSha256 === undefined) ||
      (files && filesDigest(files) !== entry.filesSha256)
    )
      throw new Error(`Entry ${entry.id} names files its digest does not cover; nothing was appended.`);
  });
  // The entry's fields are text pieces between its position's slots, and the slots come in the
  // same order in every entry (the canonical text's key order): one statement fills them all.
  const slots = templates[0]!.slots;
  if (templates.some((t) => t.slots.join() !== slots.join() || t.text.length !== slots.length + 1))
    throw new Error("Entries of one batch place their positions differently; nothing was appended.");

  const episodes = {
    ord: appends.flatMap((a, i) => a.episodeIds.map(() => i + 1)),
    versionId: appends.flatMap((a) => a.episodeIds.map(() => a.entry.versionId)),
    episodeId: appends.flatMap((a) => a.episodeIds as string[]),
  };
  const files = {
    ord: appends.flatMap((a, i) => (a.files ?? []).map(() => i + 1)),
    path: appends.flatMap((a) => (a.files ?? []).map((f) => f.path)),
    sha256: appends.flatMap((a) => (a.files ?? []).map((f) => f.sha256)),
  };
  // Prepared like the chain statement (lib/db/prepared.ts): through a transaction-mode pooler the
  // driver would otherwise describe it before binding it, a round trip more before the lock.
  const contributions = await executePrepared(
    tx,
    tx<{ ord: number; contributor: string; episode_count: number }[]>`
    with wanted as (
      select * from unnest(${episodes.ord}::int[], ${episodes.versionId}::int[], ${episodes.episodeId}::text[])
        as w(ord, version_id, episode_id))
    select w.ord, e.contributor, count(*)::int as episode_count
    from wanted w join episodes e on e.version_id = w.version_id and e.episode_id = w.episode_id
    group by w.ord, e.contributor`,
  );
  // Each refusal once for the batch, in the order the entries name them; an entry's own are bits of a mask.
  const refusals = [...new Set(appends.flatMap((a) => a.refusals))];
  // The chain statement prepared when the server session lacks it, the lock, and the statement
  // executed, in one write, in that order: what runs under the lock is executing the statement,
  // neither planning it (once per server session, decision 0146) nor looking for it.
  const chain = preparedStatement(
    tx,
    chainStatement(tx, appends, templates, slots, episodes, contributions, files, refusals, clock),
  );
  const [, , rows] = await Promise.all([chain.prepare.execute(), lockChain(tx).execute(), chain.execute.execute()]);
  return appends.map((append, i) => checked(append, rows[i]!, refusals));
}

/**
 * Appends one entry: what a bulk loader or a test does inside a transaction of its own. Requests
 * append through `appendToLog`. A refused entry throws, so that the transaction rolls back.
 */
export async function appendDisclosure(tx: Sql, append: LogAppend): Promise<ChainedEntry> {
  const [outcome] = await appendBatch(tx, [append]);
  if ("refused" in outcome!)
    throw new Error(`Entry ${append.entry.id} was refused (${outcome.refused.name}); nothing was appended.`);
  return outcome!;
}

/**
 * Takes the chain's lock until the end of the transaction: appends take it, and so does a
 * withdrawal before it computes its notices, so that every entry is either seen by the withdrawal
 * or sees it.
 */
export function lockChain(tx: Sql) {
  // The key written in the text, not bound: through a transaction-mode pooler nothing is prepared,
  // and the driver sends a statement with a parameter in two round trips, which would hold the
  // append's statements back until the lock is granted (lib/db/prepared.ts).
  return tx.unsafe(`select pg_advisory_xact_lock(${CHAIN_LOCK})`);
}

type ChainedRow = {
  ord: number;
  /** The batch's refusals that held for the entry, as bits (the batch's order): 0 when it was appended. */
  refused: number;
  seq: string | null;
  occurred_at: Date | null;
  expires_at: Date | null;
  prev_hash: string | null;
  hash: string | null;
};

/**
 * The one statement under the chain's lock, for a whole batch. It evaluates the refusals each
 * entry names (each a condition its owner handed over: a withdrawal computes its notices under
 * this lock, so an entry with an episode withdrawn since its request resolved it, which the
 * withdrawal did not see, must not leave); reads the previous entry and the clock once; chains the
 * entries not refused in order, each entry's place (seq, times, the previous hash) filled into its
 * canonical text and hashed (a recursive step per entry); and inserts them with their episodes,
 * their files (a fingerprinted version's per-licence copies), their Idempotency-Keys and their
 * summaries (the contributor and episode rows, keyed by seq; the daily ones by the log's trigger,
 * once for the batch), so that a reviewer never sees an entry without them, all in the entry's
 * month. Every entry of the batch has the same time, read under the lock, so `occurred_at` never
 * runs backwards along `seq`; it is whole seconds because it is also the signing time of the URLs.
 * The batch's refusals are part of the statement's text: a download's batch (one refusal) always
 * has the same text, which each server session prepares once (decision 0146): planning it for
 * every batch, with 40 months of the log online, took 10-14 ms, nearly as long as running it.
 */
function chainStatement(
  tx: Sql,
  appends: readonly LogAppend[],
  templates: { text: string[] }[],
  slots: (keyof ChainPosition)[],
  episodes: { ord: number[]; versionId: number[]; episodeId: string[] },
  contributions: { ord: number; contributor: string; episode_count: number }[],
  files: { ord: number[]; path: string[]; sha256: string[] },
  refusals: readonly Refusal[],
  clock: LogClock,
) {
  const column = <T>(pick: (a: LogAppend) => T) => appends.map(pick);
  const bit = (r: Refusal) => refusalBit(refusals, r);
  // Each refusal the batch names, where the entry names it: its bit when its condition holds.
  const refused = refusals.length
    ? refusals
        .map((r) => tx`case when (i.refusals & ${bit(r)}::int) <> 0 and (${r.when(tx)}) then ${bit(r)}::int else 0 end`)
        .reduce((sum, term) => tx`${sum} + ${term}`)
    : tx`0`;
  const entry = (pick: (e: NewEntry) => string | number | null) => appends.map((a) => pick(a.entry));
  // p.t1 || <slot 1> || p.t2 || ... : the canonical text with the position filled in.
  const canonical = slots.reduce(
    (text, slot, i) => tx`${text} || ${positionJson[slot](tx)} || p.t[${i + 2}]`,
    tx`p.t[1]`,
  );
  return tx<ChainedRow[]>`
    with recursive
    input as (
      select * from unnest(
        ${entry((e) => e.id)}::text[], ${entry((e) => e.organizationId)}::text[], ${entry((e) => e.apiKeyId)}::text[],
        ${entry((e) => e.userId)}::text[], ${entry((e) => e.reviewerRole)}::text[], ${entry((e) => e.channel)}::text[],
        ${entry((e) => e.datasetId)}::text[], ${entry((e) => e.version)}::text[], ${entry((e) => e.versionId)}::int[],
        ${entry((e) => e.licenceId)}::text[], ${entry((e) => (e.termsSha256 !== undefined ? "t" : "f"))}::text[],
        ${entry((e) => e.termsSha256 ?? null)}::text[], ${entry((e) => JSON.stringify(e.requestedScope))}::text[],
        ${entry((e) => e.episodeCount)}::int[], ${entry((e) => e.fileCount)}::int[], ${entry((e) => String(e.totalBytes))}::text[],
        ${entry((e) => e.episodesSha256)}::text[], ${entry((e) => e.filesSha256 ?? null)}::text[],
        ${entry((e) => e.requestId)}::text[], ${entry((e) => e.idempotencyScope)}::text[],
        ${entry((e) => e.idempotencyKey)}::text[], ${entry((e) => e.requestSha256)}::text[],
        ${column((a) => a.ttlSeconds)}::int[], ${column((a) => a.refusals.reduce((mask, r) => mask | bit(r), 0))}::int[],
        ${templates.map((t) => JSON.stringify(t.text))}::text[])
        with ordinality as i(id, organization_id, api_key_id, user_id, reviewer_role, channel, dataset_id, version, version_id,
          licence_id, names_terms, terms_sha256, requested_scope, episode_count, file_count, total_bytes, episodes_sha256,
          files_sha256, request_id, idempotency_scope, idempotency_key, request_sha256, ttl, refusals, pieces, ord)),
    disclosed as (
      select * from unnest(${episodes.ord}::int[], ${episodes.versionId}::int[], ${episodes.episodeId}::text[])
        as d(ord, version_id, episode_id)),
    clock as (select ${logClock(tx, clock)} as at),
    verdict as (select i.ord, ${refused} as refused from input i cross join clock),
    placed as (
      select i.*, array(select json_array_elements_text(i.pieces::json)) as t, row_number() over (order by i.ord) as rn
      from input i join verdict v on v.ord = i.ord where v.refused = 0),
    last as (select seq, hash from disclosures order by seq desc limit 1),
    chain (rn, seq, occurred_at, expires_at, prev_hash, hash) as (
      select 0::bigint, coalesce((select seq from last), 0), null::timestamptz, null::timestamptz, null::text,
        coalesce((select hash from last), ${GENESIS_HASH})
      union all
      select p.rn, c.seq + 1, clock.at, clock.at + make_interval(secs => p.ttl), c.hash,
        encode(sha256(convert_to(${canonical}, 'UTF8')), 'hex')
      from chain c join placed p on p.rn = c.rn + 1 cross join clock),
    entries as (
      insert into disclosures (id, seq, occurred_at, organization_id, api_key_id, user_id, reviewer_role, channel, dataset_id, version,
        version_id, licence_id, names_terms, terms_sha256, requested_scope, episode_count, file_count, total_bytes, episodes_sha256,
        files_sha256, expires_at, request_id, idempotency_scope, idempotency_key, request_sha256, prev_hash, hash)
      select p.id, c.seq, c.occurred_at, p.organization_id, p.api_key_id, p.user_id, p.reviewer_role, p.channel, p.dataset_id, p.version,
        p.version_id, p.licence_id, p.names_terms = 't', p.terms_sha256, p.requested_scope::jsonb, p.episode_count, p.file_count,
        p.total_bytes::bigint, p.episodes_sha256, p.files_sha256, c.expires_at, p.request_id, p.idempotency_scope, p.idempotency_key,
        p.request_sha256, c.prev_hash, c.hash
      from chain c join placed p on p.rn = c.rn
      order by c.seq
      returning id, seq, occurred_at, expires_at, prev_hash, hash),
    -- In the entry's month: every row derived from an entry carries its occurred_at (migration 0026).
    episodes_written as (
      insert into disclosure_episodes (disclosure_id, version_id, episode_id, occurred_at)
      select p.id, d.version_id, d.episode_id, e.occurred_at from disclosed d join placed p on p.ord = d.ord join entries e on e.id = p.id),
    -- The per-licence copies a fingerprinted version's entry delivered (none for any other).
    files_written as (
      insert into disclosure_files (disclosure_id, path, sha256, occurred_at)
      select p.id, f.path, f.sha256, e.occurred_at
      from unnest(${files.ord}::int[], ${files.path}::text[], ${files.sha256}::text[]) as f(ord, path, sha256)
      join placed p on p.ord = f.ord join entries e on e.id = p.id),
    -- The Idempotency-Key, unique for ever in a table of its own, whatever months are archived.
    idempotency_keys as (
      insert into disclosure_idempotency_keys (scope, key, disclosure_id, request_sha256)
      select p.idempotency_scope, p.idempotency_key, p.id, p.request_sha256 from placed p where p.idempotency_key is not null),
    contributors as (
      insert into disclosure_contributors (disclosure_id, seq, contributor, episode_count, organization_id, channel, occurred_at)
      select p.id, e.seq, k.contributor, k.episode_count, p.organization_id, p.channel, e.occurred_at
      from unnest(${contributions.map((c) => c.ord)}::int[], ${contributions.map((c) => c.contributor)}::text[],
        ${contributions.map((c) => c.episode_count)}::int[]) as k(ord, contributor, episode_count)
      join placed p on p.ord = k.ord join entries e on e.id = p.id),
    -- "Who received episode E" in the log's order (migration 0014): a row per episode.
    episode_entries as (
      insert into disclosure_episode_entries (episode_id, seq, organization_id, channel, occurred_at)
      select d.episode_id, e.seq, p.organization_id, p.channel, e.occurred_at
      from disclosed d join placed p on p.ord = d.ord join entries e on e.id = p.id)
    select v.ord::int, v.refused, e.seq, e.occurred_at, e.expires_at, e.prev_hash, e.hash
    from verdict v join input i on i.ord = v.ord left join entries e on e.id = i.id
    order by v.ord`;
}

/** A refusal's bit in the batch's mask: its place among the batch's refusals. */
const refusalBit = (refusals: readonly Refusal[], refusal: Refusal) => 2 ** refusals.indexOf(refusal);

/**
 * The entry as appended, after the check nothing else makes before the commit: the database hashed
 * it exactly as lib/disclosures/chain.ts says, whoever computed it; or the first refusal the entry
 * names that held.
 */
function checked(append: LogAppend, row: ChainedRow, refusals: readonly Refusal[]): ChainedEntry | Refused {
  const refusedBy = append.refusals.find((r) => row.refused & refusalBit(refusals, r));
  if (refusedBy) return { refused: refusedBy };
  const { entry } = append;
  const { versionId, idempotencyScope, idempotencyKey, requestSha256, ...asserted } = entry;
  const chained: ChainedEntry = {
    ...asserted,
    seq: Number(row.seq),
    occurredAt: row.occurred_at!,
    expiresAt: row.expires_at!,
    prevHash: row.prev_hash!,
  };
  if (entryHash(chained) !== row.hash)
    throw new Error(
      `The database hashed entry ${chained.id} differently from lib/disclosures/chain.ts; nothing was appended.`,
    );
  return chained;
}

/**
 * How the database writes each field of an entry's place in its canonical text, as JSON.stringify
 * would, in the chain's recursive step: `c` is the entry before, `p` the entry placed.
 */
const positionJson: Record<keyof ChainPosition, (sql: Sql) => PendingQuery<Row[]>> = {
  seq: (sql) => sql`(c.seq + 1)::text`,
  prevHash: (sql) => sql`'"' || c.hash || '"'`,
  // toISOString's form: milliseconds and Z.
  occurredAt: (sql) => sql`'"' || to_char(clock.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'`,
  expiresAt: (sql) =>
    sql`'"' || to_char((clock.at + make_interval(secs => p.ttl)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'`,
};

/** The database's clock: the log's time wherever no test moved it. */
const databaseClock: LogClock = (sql) => sql`clock_timestamp()`;

/**
 * The log's time, to whole seconds: `clock`'s (a test's, `Ctx.clock`) or the database's. The
 * append reads it once per batch under the chain's lock; a request that looks for an entry to
 * reuse before the lock reads the same.
 */
export function logClock(sql: Sql, clock: LogClock = databaseClock): Fragment {
  return sql`date_trunc('second', ${clock(sql)})`;
}
