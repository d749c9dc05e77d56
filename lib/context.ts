import type { PendingQuery, Row } from "postgres";
import type { Db, Sql } from "./db/client";
import type { Principal } from "./auth/principal";
import type { ReadCache } from "./cache/read-cache";

/** What every domain verb receives: where to read and write, who is asking, and the request's id. */
export type Ctx<P extends Principal = Principal> = {
  db: Db;
  principal: P;
  requestId: string;
  /**
   * The instance's in-memory cache, for the API's reads (keys, licences, catalog, bodies). Absent for
   * the portal, the command line and tests that call verbs directly: they read the database.
   */
  cache?: ReadCache;
  /**
   * A streaming read replica (DATABASE_REPLICA_URL), for the reviewer's reads of the log: searches,
   * entries, the contributor report, exports and the chain's walks. It is a little behind the
   * primary, so only reads that say as of when (`replicaReads`) go there; whatever writes, and
   * everything a licensee does, uses `db`. Absent: those reads use `db` too.
   */
  replica?: Db;
  /**
   * The disclosure log's clock (lib/disclosures/append.ts's `logClock`). Absent everywhere in the
   * service: the log's time is the database's. Tests set one (lib/testing's `clockAhead`,
   * `clockAt`) to make entries in later seconds, other days or past months without waiting.
   */
  clock?: LogClock;
};

/** A SQL expression of the time (a timestamptz), read where the log stamps its entries. */
export type LogClock = (sql: Sql) => PendingQuery<Row[]>;

/** Where a reviewer's read of the log goes: the replica when the context has one, else the primary. */
export function readsOf(ctx: Ctx): Db {
  return ctx.replica ?? ctx.db;
}
