import type { PendingQuery, Row } from "postgres";
import type { Sql } from "../db/client";
import { canonicalTemplate, entryHash, GENESIS_HASH, type ChainedEntry, type ChainPosition } from "./chain";

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

/**
 * Appends one entry at the end of the chain, inside the caller's transaction. The advisory lock
 * serialises appends across connections and app instances, so `seq` is gapless and each entry
 * links to the one before; it is held only from here to the caller's commit. The time comes from
 * the database clock, read under the lock, so `occurred_at` never runs backwards along `seq`;
 * it is whole seconds because it is also the signing time of the download's URLs.
 *
 * Tests move that clock ahead with the session setting `das.clock_offset` (an interval) on their
 * own connection instead of sleeping through seconds; nothing in the service sets it, so here the
 * time is the database clock's. (Whoever can set it on a connection of ours could as well write
 * to the database directly: it gives no one anything new.)
 */
export async function appendDisclosure(tx: Sql, entry: NewEntry, ttlSeconds: number): Promise<ChainedEntry> {
  return (await appendDisclosureUnless(tx, entry, ttlSeconds, null))!;
}

/**
 * `appendDisclosure`, unless `condition` (SQL, evaluated under the chain's lock) holds, in which
 * case nothing is appended and the result is undefined: a verb that must decide from the log
 * whether to append at all (a repeated preview) decides there, so that two requests at once
 * cannot both append.
 *
 * Every append waits for the one before it to commit, so the time between taking the lock and
 * committing bounds the log's rate. Everything that does not need the entry's place in the chain
 * is done before the lock: the entry's episodes (written by the caller), its contributors
 * (counted here), its canonical text (`canonicalTemplate`). Under the lock there is one
 * statement, sent in the same round trip as the lock itself: it reads the previous entry and the
 * clock, fills the entry's place into its canonical text and hashes it, and inserts the entry with
 * its summaries (the contributor and episode rows, keyed by seq; the daily ones by the log's
 * trigger), so that a reviewer never sees an entry without them. The hash is checked here
 * against `entryHash` before the caller commits: the chain is exactly what lib/disclosures/chain.ts
 * says it is, whoever computed it.
 */
export async function appendDisclosureUnless(
  tx: Sql,
  entry: NewEntry,
  ttlSeconds: number,
  condition: PendingQuery<Row[]> | null,
): Promise<ChainedEntry | undefined> {
  // Every entry under a licence names its terms since migration 0017; one that did not would hash
  // as an older entry does (version 1) and say nothing about them.
  if (entry.reviewerRole === null && entry.termsSha256 === undefined)
    throw new Error(`Entry ${entry.id} is made under a licence and names no terms; nothing was appended.`);
  const contributions = await contributionsOf(tx, entry.id);
  const { versionId, idempotencyScope, idempotencyKey, requestSha256, ...asserted } = entry;
  const template = canonicalTemplate(asserted);
  const canonical = template.slots.reduce(
    (text, slot, i) => tx`${text} || ${positionJson[slot](tx)} || ${template.text[i + 1]!}::text`,
    tx`${template.text[0]!}::text`,
  );
  const locked = tx`select pg_advisory_xact_lock(${CHAIN_LOCK})`;
  // Sent without waiting for the lock (postgres.js pipelines a transaction's statements): it runs
  // once the lock is held, in a snapshot of its own that sees the previous append committed.
  const appended = tx<
    { seq: string; occurred_at: Date; expires_at: Date; prev_hash: string; hash: string; episodes: number }[]
  >`
    with last as (select seq, hash from disclosures order by seq desc limit 1),
    placed as (
      select coalesce((select seq from last), 0) + 1 as seq, coalesce((select hash from last), ${GENESIS_HASH}) as prev_hash,
        ${logClock(tx)} as occurred_at
      where ${condition === null ? tx`true` : tx`not (${condition})`}),
    positioned as (select *, occurred_at + make_interval(secs => ${ttlSeconds}) as expires_at from placed),
    hashed as (select *, encode(sha256(convert_to(${canonical}, 'UTF8')), 'hex') as hash from positioned),
    entry as (
      insert into disclosures (id, seq, occurred_at, organization_id, api_key_id, user_id, reviewer_role, channel, dataset_id, version,
        version_id, licence_id, names_terms, terms_sha256, requested_scope, episode_count, file_count, total_bytes, episodes_sha256, expires_at,
        request_id, idempotency_scope, idempotency_key, request_sha256, prev_hash, hash)
      select ${asserted.id}, seq, occurred_at, ${asserted.organizationId}, ${asserted.apiKeyId}, ${asserted.userId},
        ${asserted.reviewerRole}, ${asserted.channel}, ${asserted.datasetId}, ${asserted.version}, ${versionId}, ${asserted.licenceId},
        ${asserted.termsSha256 !== undefined}, ${asserted.termsSha256 ?? null},
        ${JSON.stringify(asserted.requestedScope)}::jsonb, ${asserted.episodeCount}, ${asserted.fileCount}, ${asserted.totalBytes},
        ${asserted.episodesSha256}, expires_at, ${asserted.requestId}, ${idempotencyScope}, ${idempotencyKey},
        ${requestSha256}, prev_hash, hash
      from hashed
      returning seq, occurred_at, expires_at, prev_hash, hash),
    contributors as (
      insert into disclosure_contributors (disclosure_id, seq, contributor, episode_count, organization_id, channel)
      select ${asserted.id}, entry.seq, c.contributor, c.episode_count, ${asserted.organizationId}, ${asserted.channel}
      from entry, unnest(${contributions.map((c) => c.contributor)}::text[], ${contributions.map((c) => c.episode_count)}::int[]) as c(contributor, episode_count)),
    -- "Who received episode E" in the log's order (migration 0014): a row per episode.
    episodes as (
      insert into disclosure_episode_entries (episode_id, seq, organization_id, channel)
      select de.episode_id, entry.seq, ${asserted.organizationId}, ${asserted.channel}
      from entry, disclosure_episodes de where de.disclosure_id = ${asserted.id}
      returning 1)
    select seq, occurred_at, expires_at, prev_hash, hash, (select count(*)::int from episodes) as episodes from entry`;
  const [, [row]] = await Promise.all([locked, appended]);
  if (!row) return undefined;
  const chained: ChainedEntry = {
    ...asserted,
    seq: Number(row.seq),
    occurredAt: row.occurred_at,
    expiresAt: row.expires_at,
    prevHash: row.prev_hash,
  };
  // The entry's episodes, written by the caller in this transaction, must all be there: nothing
  // else checks that before commit (migration 0015).
  if (row.episodes !== chained.episodeCount)
    throw new Error(
      `Entry ${chained.id} records ${chained.episodeCount} episodes and ${row.episodes} were written; nothing was appended.`,
    );
  if (entryHash(chained) !== row.hash)
    throw new Error(
      `The database hashed entry ${chained.id} differently from lib/disclosures/chain.ts; nothing was appended.`,
    );
  return chained;
}

/** How the database writes each field of an entry's place in its canonical text: as JSON.stringify would. */
const positionJson: Record<keyof ChainPosition, (sql: Sql) => PendingQuery<Row[]>> = {
  seq: (sql) => sql`seq::text`,
  prevHash: (sql) => sql`'"' || prev_hash || '"'`,
  // toISOString's form: milliseconds and Z.
  occurredAt: (sql) => sql`'"' || to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'`,
  expiresAt: (sql) => sql`'"' || to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'`,
};

/**
 * Whose episodes an entry holds, and how many of each contributor's, for `disclosure_contributors`
 * (migrations 0009 and 0011): the reviewer's "who received contributor C's episodes" reads that instead of
 * joining every disclosed episode with the catalog. Counted from the entry's `disclosure_episodes`,
 * which its caller has written already, before the chain's lock is taken, so that the serialised
 * statement only inserts as many rows as the entry has contributors.
 */
async function contributionsOf(tx: Sql, disclosureId: string) {
  return tx<{ contributor: string; episode_count: number }[]>`
    select e.contributor, count(*)::int as episode_count
    from disclosure_episodes de
    join episodes e on e.version_id = de.version_id and e.episode_id = de.episode_id
    where de.disclosure_id = ${disclosureId}
    group by e.contributor`;
}

/** The log's clock, to whole seconds: the database's, moved by `das.clock_offset` in tests (see above). */
export function logClock(sql: Sql) {
  return sql`date_trunc('second', clock_timestamp() + coalesce(nullif(current_setting('das.clock_offset', true), ''), '0 s')::interval)`;
}
