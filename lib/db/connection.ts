import net from "node:net";
import postgres from "postgres";
import { log } from "../log";

/*
 * The service's postgres.js client, without drizzle: what `createDb` (lib/db/client.ts) wraps, and
 * what a thread of the full walk connects with. Loading drizzle and the schema (and the validated
 * environment) costs a new thread about a second of CPU, as much as checking tens of thousands of
 * entries: a walk's thread loads only this.
 */

/** Pool size and timeouts; the service's come from DB_* (`connectionLimits` in lib/db/client.ts). */
export type ConnectionLimits = {
  max: number;
  connectTimeoutS: number;
  idleTimeoutS: number;
  maxLifetimeS: number;
  /** The URL is a transaction-mode pooler (`isTransactionPooler` in lib/db/client.ts). */
  transactionPooler?: boolean;
};

/**
 * `settings`: session settings (time zone, planner switches) sent when each connection starts,
 * for a client with a single purpose such as a thread of the full walk. `statementTimeoutS`: the
 * service's limits (see DB_STATEMENT_TIMEOUT_S), for its own pool; other clients have none.
 * `transactionPooler`: `url` is a transaction-mode pooler (PgBouncer). Consecutive transactions of
 * one client connection then run on different server sessions: a statement prepared on one is
 * unknown on the next, and PgBouncer refuses startup settings other than the few it tracks. So
 * nothing is prepared and only the application's name is sent; the limits are set on every server
 * session by the pooler's `connect_query` (README, "Production"), which lib/db/startup-checks.ts
 * compares with DB_STATEMENT_TIMEOUT_S. The silence watch below still holds.
 */
export function postgresClient(
  url: string,
  options: ConnectionLimits & { settings?: Record<string, string>; statementTimeoutS?: number },
): postgres.Sql {
  const limit = options.statementTimeoutS;
  const pooled = options.transactionPooler ?? false;
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
  return postgres(url, {
    max: options.max,
    // A lost server must cost a request seconds, not the driver's default 30 s per connection attempt.
    connect_timeout: options.connectTimeoutS,
    idle_timeout: options.idleTimeoutS,
    // Spread, so connections opened together are not all replaced together: the driver takes a
    // function here (its own default is one) although its type definitions say number.
    max_lifetime: (() => options.maxLifetimeS * (1 + Math.random())) as unknown as number,
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
}

const TIMESTAMPTZ_OID = 1184;

/** timestamptz values parsed into Dates, and Dates (or ISO text) sent as ISO text. */
export function instantsAsDates(client: postgres.Sql): void {
  const codec = client.options as unknown as {
    parsers: Record<number, (v: string) => unknown>;
    serializers: Record<number, (v: unknown) => string>;
  };
  codec.parsers[TIMESTAMPTZ_OID] = (value) => new Date(value);
  codec.serializers[TIMESTAMPTZ_OID] = (value) =>
    (value instanceof Date ? value : new Date(value as string)).toISOString();
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
