import net from "node:net";
import postgres from "postgres";
import { drizzle, type PostgresJsDatabase, type PostgresJsQueryResultHKT } from "drizzle-orm/postgres-js";
import type { PgDatabase } from "drizzle-orm/pg-core";
import { env, requireEnv } from "../env";
import * as schema from "./schema";

export type Schema = typeof schema;
/** The root database or a transaction: every lib verb accepts either. */
export type Db = PgDatabase<PostgresJsQueryResultHKT, Schema>;
export type RootDb = PostgresJsDatabase<Schema> & { $client: postgres.Sql };

/**
 * `settings`: session settings (time zone, planner switches) sent when each connection starts,
 * for a client with a single purpose such as a thread of the full walk; the service's own pool
 * takes the server's defaults.
 */
export function createDb(url: string, options: { max?: number; settings?: Record<string, string> } = {}): RootDb {
  const e = env();
  const client = postgres(url, {
    max: options.max ?? e.DB_POOL_MAX,
    // A lost server must cost a request seconds, not the driver's default 30 s per connection attempt.
    connect_timeout: e.DB_CONNECT_TIMEOUT_S,
    idle_timeout: e.DB_IDLE_TIMEOUT_S,
    // Spread, so connections opened together are not all replaced together: the driver takes a
    // function here (its own default is one) although its type definitions say number.
    max_lifetime: (() => e.DB_MAX_LIFETIME_S * (1 + Math.random())) as unknown as number,
    backoff: reconnectDelaySeconds,
    onnotice: () => {},
    connection: { application_name: "dataset-access-service", ...options.settings },
    // A documented option that the package's type definitions omit.
    ...({ socket: connectWithoutDelay } as object),
  });
  const db = drizzle(client, { schema }) as RootDb;
  // drizzle switches timestamptz parsing and serialising off so that it can map strings itself;
  // it maps Date values just as well and sends ISO strings, which the default serializer takes
  // too, so raw queries get Dates back and may pass them. (JSON stays as drizzle set it: raw
  // queries pass JSON as text with a ::jsonb cast.)
  const codec = client.options as unknown as { parsers: Record<number, (v: string) => unknown>; serializers: Record<number, (v: unknown) => string> };
  codec.parsers[TIMESTAMPTZ_OID] = (value) => new Date(value);
  codec.serializers[TIMESTAMPTZ_OID] = (value) => (value instanceof Date ? value : new Date(value as string)).toISOString();
  return db;
}

/**
 * postgres.js leaves Nagle's algorithm on; with delayed ACKs that stalls pipelined queries and
 * COPY by tens of milliseconds. So the client gets its sockets from here, with TCP_NODELAY. The
 * socket is returned while still connecting (Node queues the first write until it is open):
 * postgres.js then sees connection errors on the socket itself and recovers, whereas a rejected
 * promise would leave that pooled connection stuck for good.
 */
function connectWithoutDelay(options: { host: string[]; port: number[]; path?: string | false }): net.Socket {
  if (options.path) return net.connect({ path: options.path });
  const socket = net.connect({ host: options.host[0], port: options.port[0]!, noDelay: true });
  // The driver names the server in connection errors from these (its own sockets carry them).
  return Object.assign(socket, { host: options.host[0], port: options.port[0] });
}

/**
 * Seconds before a closed connection reconnects, after `failures` connections closed on an error
 * since the last successful connect. The driver's default grows to 20 s: after a burst of
 * terminated backends every pooled connection then sat out that long while requests queued on it.
 * Here it stays under a second, which a reachable server answers and a down one refuses quickly.
 */
function reconnectDelaySeconds(failures: number): number {
  return Math.min(0.05 * 2 ** failures, 1) * (0.5 + Math.random() / 2);
}

export type Sql = postgres.Sql;

const TIMESTAMPTZ_OID = 1184;

/**
 * The postgres.js client under a drizzle database or transaction. Hot-path reads use it directly:
 * drizzle's query builder costs ~0.45 ms of CPU per query here, raw tagged templates ~0.08 ms
 * (docs/decisions.md). Inside a transaction this is the transaction's own connection.
 */
export function sqlOf(db: Db): Sql {
  return (db as unknown as { session: { client: Sql } }).session.client;
}

// One pool per process, kept across hot reloads in development (create-t3-app's pattern).
const globalForDb = globalThis as unknown as { dasDb?: RootDb };

export function getDb(): RootDb {
  globalForDb.dasDb ??= createDb(requireEnv("DATABASE_URL"));
  return globalForDb.dasDb;
}
