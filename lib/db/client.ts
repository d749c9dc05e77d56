import type postgres from "postgres";
import { drizzle, type PostgresJsDatabase, type PostgresJsQueryResultHKT } from "drizzle-orm/postgres-js";
import type { PgDatabase } from "drizzle-orm/pg-core";
import { env, requireEnv } from "../env";
import { instantsAsDates, postgresClient, type ConnectionLimits } from "./connection";
import * as schema from "./schema";

export type Schema = typeof schema;
/** The root database or a transaction: every lib verb accepts either. */
export type Db = PgDatabase<PostgresJsQueryResultHKT, Schema>;
export type RootDb = PostgresJsDatabase<Schema> & { $client: postgres.Sql };

/**
 * `settings`: session settings (time zone, planner switches) sent when each connection starts,
 * for a client with a single purpose. `statementTimeoutS`: the service's limits (see
 * DB_STATEMENT_TIMEOUT_S), for its own pool; other clients have none. `transactionPooler`: `url`
 * is a transaction-mode pooler (PgBouncer); by default DATABASE_URL is one when DB_POOL_MODE is
 * `transaction` (what that changes: `postgresClient` in lib/db/connection.ts).
 */
export function createDb(
  url: string,
  options: {
    max?: number;
    settings?: Record<string, string>;
    statementTimeoutS?: number;
    transactionPooler?: boolean;
  } = {},
): RootDb {
  const limits = connectionLimits();
  const transactionPooler = options.transactionPooler ?? isTransactionPooler(url);
  const client = postgresClient(url, { ...limits, ...options, max: options.max ?? limits.max, transactionPooler });
  const db = drizzle(client, { schema }) as RootDb;
  // drizzle switches timestamptz parsing and serialising off so that it can map strings itself;
  // it maps Date values just as well and sends ISO strings, which the default serializer takes
  // too, so raw queries get Dates back and may pass them. (JSON stays as drizzle set it: raw
  // queries pass JSON as text with a ::jsonb cast.)
  instantsAsDates(client);
  return db;
}

/** Whoever connects to DATABASE_URL meets what it is (DB_POOL_MODE), the service or das-admin alike. */
export function isTransactionPooler(url: string): boolean {
  const e = env();
  return url === e.DATABASE_URL && e.DB_POOL_MODE === "transaction";
}

/** The configured pool size and connection timeouts (DB_*), for `postgresClient`. */
export function connectionLimits(): ConnectionLimits {
  const e = env();
  return {
    max: e.DB_POOL_MAX,
    connectTimeoutS: e.DB_CONNECT_TIMEOUT_S,
    idleTimeoutS: e.DB_IDLE_TIMEOUT_S,
    maxLifetimeS: e.DB_MAX_LIFETIME_S,
  };
}

export type Sql = postgres.Sql;

/**
 * The postgres.js client under a drizzle database or transaction. Hot-path reads use it directly:
 * drizzle's query builder costs ~0.45 ms of CPU per query here, raw tagged templates ~0.08 ms
 * (docs/decisions/0003-hot-path-reads-as-postgres-templates.md). Inside a transaction this is the transaction's
 * own connection.
 */
export function sqlOf(db: Db): Sql {
  return (db as unknown as { session: { client: Sql } }).session.client;
}

// One pool per process, kept across hot reloads in development (create-t3-app's pattern).
const globalForDb = globalThis as unknown as { dasDb?: RootDb; dasReplicaDb?: RootDb | null };

export function getDb(): RootDb {
  const e = env();
  globalForDb.dasDb ??= createDb(requireEnv("DATABASE_URL"), {
    statementTimeoutS: e.DB_STATEMENT_TIMEOUT_S,
  });
  return globalForDb.dasDb;
}

/**
 * A pool on the streaming read replica (DATABASE_REPLICA_URL), or null when there is none. A
 * replica takes connections directly (a pooler sits in front of the primary only), with the
 * service's limits; a statement it cancels for a conflict with replay fails like any other (503).
 */
export function getReplicaDb(): RootDb | null {
  if (globalForDb.dasReplicaDb === undefined) {
    const e = env();
    globalForDb.dasReplicaDb = e.DATABASE_REPLICA_URL
      ? createDb(e.DATABASE_REPLICA_URL, { statementTimeoutS: e.DB_STATEMENT_TIMEOUT_S })
      : null;
  }
  return globalForDb.dasReplicaDb;
}
