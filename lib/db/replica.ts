import { sqlOf, type Db } from "./client";

/** How current a streaming replica's answers are. */
export type ReplicaLag = {
  /**
   * The primary's state the replica's answers reflect: now when it has replayed all it was sent;
   * null when it cannot tell (not receiving, and no transaction replayed since it started).
   */
  asOf: Date | null;
  /** Milliseconds between `asOf` and the replica's clock; null with `asOf`. */
  behindMs: number | null;
  /** Whether the replica is receiving from its primary now (false: the primary is down or unreachable, and `asOf` stays put). */
  receiving: boolean;
};

/**
 * How far `replica` is behind its primary, from the replica alone and with no privilege beyond
 * logging in. Receiving (a WAL receiver runs, which an unprivileged role sees by its pid) and
 * every byte received replayed: its answers are the primary's as of now. Otherwise as of the last
 * transaction it replayed, a lower bound when the primary has been quiet. Null when `replica` is
 * not a replica (a primary in recovery no longer: its answers are current).
 */
export async function replicaLag(replica: Db): Promise<ReplicaLag | null> {
  const [row] = await sqlOf(replica)<
    { standby: boolean; receiving: boolean; replayed_all: boolean | null; last_replayed: Date | null; now: Date }[]
  >`
    select pg_is_in_recovery() as standby,
      exists (select from pg_stat_wal_receiver where pid is not null) as receiving,
      pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() as replayed_all,
      pg_last_xact_replay_timestamp() as last_replayed,
      clock_timestamp() as now`;
  if (!row!.standby) return null;
  const { receiving, now } = row!;
  const asOf = receiving && row!.replayed_all === true ? now : row!.last_replayed;
  return { asOf, behindMs: asOf && Math.max(0, now.getTime() - asOf.getTime()), receiving };
}
