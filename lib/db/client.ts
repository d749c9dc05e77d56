import net from "node:net";
import postgres from "postgres";
import { drizzle, type PostgresJsDatabase, type PostgresJsQueryResultHKT } from "drizzle-orm/postgres-js";
import type { PgDatabase } from "drizzle-orm/pg-core";
import { env, requireEnv } from "../env";
import { log } from "../log";
import * as schema from "./schema";

export type Schema = typeof schema;
/** The root database or a transaction: every lib verb accepts either. */
export type Db = PgDatabase<PostgresJsQueryResultHKT, Schema>;
export type RootDb = PostgresJsDatabase<Schema> & { $client: postgres.Sql };

/**
 * `settings`: session settings (time zone, planner switches) sent when each connection starts,
 * for a client with a single purpose such as a thread of the full walk. `statementTimeoutS`: the
 * service's limits (see DB_STATEMENT_TIMEOUT_S), for its own pool; other clients have none.
 * `transactionPooler`: `url` is a transaction-mode pooler (PgBouncer); by default DATABASE_URL is
 * one when DB_POOL_MODE is `transaction`. Consecutive transactions of one client connection then
 * run on different server sessions: a statement prepared on one is unknown on the next, and
 * PgBouncer refuses startup settings other than the few it tracks. So nothing is prepared and
 * only the application's name is sent; the limits are set on every server session by the
 * pooler's `connect_query` (README, "Production"), which lib/db/startup-checks.ts compares with
 * DB_STATEMENT_TIMEOUT_S. The silence watch below still holds.
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
  const e = env();
  // Whoever connects to DATABASE_URL meets what it is, the service or das-admin alike.
  const pooled = options.transactionPooler ?? (url === e.DATABASE_URL && e.DB_POOL_MODE === "transaction");
  const limit = options.statementTimeoutS;
  const limits: Record<string, string> =
    limit && !pooled
      ? {
          statement_timeout: `${limit}s`,
          lock_timeout: `${limit}s`,
          // A client gone silent inside a transaction (a cut network path) would otherwise hold its
          // locks, the disclosure chain's among them, until the server's TCP keepalive notices: hours.
          idle_in_transaction_session_timeout: `${limit}s`,
        }
      : {};
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
    prepare: !pooled,
    connection: { application_name: "dataset-access-service", ...limits, ...(pooled ? {} : options.settings) },
    // A documented option that the package's type definitions omit.
    ...({
      socket: (target: SocketTarget) =>
        connectWithoutDelay(target, limit ? (limit + SILENCE_GRACE_S) * 1000 : undefined),
    } as object),
  });
  const db = drizzle(client, { schema }) as RootDb;
  // drizzle switches timestamptz parsing and serialising off so that it can map strings itself;
  // it maps Date values just as well and sends ISO strings, which the default serializer takes
  // too, so raw queries get Dates back and may pass them. (JSON stays as drizzle set it: raw
  // queries pass JSON as text with a ::jsonb cast.)
  const codec = client.options as unknown as {
    parsers: Record<number, (v: string) => unknown>;
    serializers: Record<number, (v: unknown) => string>;
  };
  codec.parsers[TIMESTAMPTZ_OID] = (value) => new Date(value);
  codec.serializers[TIMESTAMPTZ_OID] = (value) =>
    (value instanceof Date ? value : new Date(value as string)).toISOString();
  return db;
}

/**
 * postgres.js leaves Nagle's algorithm on; with delayed ACKs that stalls pipelined queries and
 * COPY by tens of milliseconds. So the client gets its sockets from here, with TCP_NODELAY. The
 * socket is returned while still connecting (Node queues the first write until it is open):
 * postgres.js then sees connection errors on the socket itself and recovers, whereas a rejected
 * promise would leave that pooled connection stuck for good.
 */
type SocketTarget = { host: string[]; port: number[]; path?: string | false };

function connectWithoutDelay(options: SocketTarget, silenceLimitMs?: number): net.Socket {
  const socket = options.path
    ? net.connect({ path: options.path })
    : net.connect({ host: options.host[0], port: options.port[0]!, noDelay: true });
  if (silenceLimitMs) watchForSilence(socket, silenceLimitMs);
  // The driver names the server in connection errors from these (its own sockets carry them).
  return options.path ? socket : Object.assign(socket, { host: options.host[0], port: options.port[0] });
}

/** Seconds past the statement timeout before a connection that owes an answer counts as dead. */
const SILENCE_GRACE_S = 5;

/**
 * Closes a connection that owes an answer and has been silent for `limitMs`. The server answers
 * every statement within the statement timeout, if only with its cancellation, so silence past it
 * means the path is cut: a failover or a partition that resets nothing, where the driver would
 * wait for ever and TCP for hours. The connection owes nothing once what it last received ends
 * with ReadyForQuery ('Z', length 5, status): the server is then waiting for us, and an idle
 * pooled connection is left alone however long it idles.
 */
function watchForSilence(socket: net.Socket, limitMs: number): void {
  let owes = false;
  let lastHeard = Date.now();
  let tail = Buffer.alloc(0);
  let first = true;
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((...args: unknown[]) => {
    // TLS takes the socket over after an SSLRequest: its bytes are then out of sight here, and
    // only the server-side limits hold.
    if (first && isSslRequest(args[0])) {
      clearInterval(timer);
      socket.write = write as typeof socket.write;
      return write(...args);
    }
    first = false;
    if (!owes) lastHeard = Date.now();
    owes = true;
    return write(...args);
  }) as typeof socket.write;
  socket.on("data", (chunk: Buffer) => {
    lastHeard = Date.now();
    tail = Buffer.concat([tail, chunk.subarray(-READY_FOR_QUERY_BYTES)]).subarray(-READY_FOR_QUERY_BYTES);
    owes = !(tail.length === READY_FOR_QUERY_BYTES && tail[0] === 0x5a && tail.readInt32BE(1) === 4 + 1);
  });
  const timer = setInterval(
    () => {
      if (owes && Date.now() - lastHeard > limitMs) {
        log.warn("database connection closed: silent while owing an answer", {
          silent_s: Math.round((Date.now() - lastHeard) / 1000),
        });
        // Closed without an error of ours: the driver then fails what it had sent on this
        // connection as CONNECTION_CLOSED (a 503) and opens a new one, in one step.
        socket.destroy();
      }
    },
    Math.min(1000, limitMs / 4),
  );
  timer.unref();
  socket.once("close", () => clearInterval(timer));
}

const READY_FOR_QUERY_BYTES = 6;
const SSL_REQUEST_CODE = 80877103;

const isSslRequest = (data: unknown) =>
  Buffer.isBuffer(data) && data.length === 8 && data.readInt32BE(0) === 8 && data.readInt32BE(4) === SSL_REQUEST_CODE;

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
