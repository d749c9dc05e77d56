import type { Sql } from "../db/client";
import { entryHash, GENESIS_HASH, type ChainedEntry } from "./chain";

// Any constant; it only has to be the same for every process that appends to this database.
const CHAIN_LOCK = 7_203_115;

export type NewEntry = Omit<ChainedEntry, "seq" | "occurredAt" | "expiresAt" | "prevHash"> & {
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
  const contributions = await contributionsOf(tx, entry.id);
  await lockChain(tx);
  const [head] = await tx<{ seq: string | null; hash: string | null; now: Date }[]>`
    select (select seq from disclosures order by seq desc limit 1) as seq,
           (select hash from disclosures order by seq desc limit 1) as hash,
           ${logClock(tx)} as now`;
  const occurredAt = head!.now;
  const { versionId, idempotencyScope, idempotencyKey, requestSha256, ...asserted } = entry;
  const chained: ChainedEntry = {
    ...asserted,
    seq: head!.seq === null ? 1 : Number(head!.seq) + 1,
    occurredAt,
    expiresAt: new Date(occurredAt.getTime() + ttlSeconds * 1000),
    prevHash: head!.hash ?? GENESIS_HASH,
  };
  await tx`
    insert into disclosures (id, seq, occurred_at, organization_id, api_key_id, user_id, reviewer_role, channel, dataset_id, version,
      version_id, licence_id, requested_scope, episode_count, file_count, total_bytes, episodes_sha256, expires_at,
      request_id, idempotency_scope, idempotency_key, request_sha256, prev_hash, hash)
    values (${chained.id}, ${chained.seq}, ${occurredAt}, ${chained.organizationId}, ${chained.apiKeyId}, ${chained.userId},
      ${chained.reviewerRole}, ${chained.channel}, ${chained.datasetId}, ${chained.version}, ${versionId}, ${chained.licenceId},
      ${JSON.stringify(chained.requestedScope)}::jsonb, ${chained.episodeCount}, ${chained.fileCount}, ${chained.totalBytes},
      ${chained.episodesSha256}, ${chained.expiresAt}, ${chained.requestId}, ${idempotencyScope}, ${idempotencyKey},
      ${requestSha256}, ${chained.prevHash}, ${entryHash(chained)})`;
  if (contributions.length) {
    await tx`
      insert into disclosure_contributors (disclosure_id, seq, contributor, episode_count, organization_id, channel)
      select ${chained.id}, ${chained.seq}, c.contributor, c.episode_count, ${chained.organizationId}, ${chained.channel}
      from unnest(${contributions.map((c) => c.contributor)}::text[], ${contributions.map((c) => c.episode_count)}::int[]) as c(contributor, episode_count)`;
  }
  // "Who received episode E" in the log's order (migration 0014). A row per episode, written under
  // the lock because it needs the seq; the episodes themselves were written before it was taken.
  await tx`
    insert into disclosure_episode_entries (episode_id, seq, organization_id, channel)
    select episode_id, ${chained.seq}, ${chained.organizationId}, ${chained.channel} from disclosure_episodes where disclosure_id = ${chained.id}`;
  return chained;
}

/**
 * Whose episodes an entry holds, and how many of each contributor's, for `disclosure_contributors`
 * (migrations 0009 and 0011): the reviewer's "who received contributor C's episodes" reads that instead of
 * joining every disclosed episode with the catalog. Counted from the entry's `disclosure_episodes`,
 * which its caller has written already, before the chain's lock is taken, so that the serialised
 * section only adds one insert of as many rows as the entry has contributors.
 */
async function contributionsOf(tx: Sql, disclosureId: string) {
  return tx<{ contributor: string; episode_count: number }[]>`
    select e.contributor, count(*)::int as episode_count
    from disclosure_episodes de
    join episodes e on e.version_id = de.version_id and e.episode_id = de.episode_id
    where de.disclosure_id = ${disclosureId}
    group by e.contributor`;
}

/**
 * Takes the chain's lock for the rest of the caller's transaction (again, if it holds it already):
 * whoever must decide from the log whether to append at all (a repeated preview) decides under
 * it, so two requests at once cannot both append.
 */
export async function lockChain(tx: Sql): Promise<void> {
  await tx`select pg_advisory_xact_lock(${CHAIN_LOCK})`;
}

/** The log's clock, to whole seconds: the database's, moved by `das.clock_offset` in tests (see above). */
export function logClock(sql: Sql) {
  return sql`date_trunc('second', clock_timestamp() + coalesce(nullif(current_setting('das.clock_offset', true), ''), '0 s')::interval)`;
}
