import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { env } from "../env";
import { errorFields, log } from "../log";

/** The channel the database's triggers notify on every change a cached answer depends on (drizzle/0004). */
export const INVALIDATION_CHANNEL = "das_cache";
/** The listener's application_name, so that an operator (or a test) can find its connection in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = "das-cache-listener";

const PROBE_PREFIX = "probe:";
/** How often a listening instance checks that notifications still arrive. */
const HEARTBEAT_MS = 5_000;
/** How long a probe may take to come back before the channel counts as down. */
const PROBE_TIMEOUT_MS = 3_000;

export type ChannelOptions = {
  url: string;
  /** Sends the probes: another connection than the listener's, so an echo proves delivery between sessions. */
  notifier: postgres.Sql;
  /** How soon to try again after the channel was lost or could not be opened. */
  relistenMs: number;
};

/**
 * This instance's LISTEN connection on the invalidation channel, and whether it can be trusted.
 *
 * Caches may serve only while `listening`. A notification, losing the connection, and listening
 * again each flush every cache and bump `generation`; a value read from the database is stored only
 * if the generation did not move while it was read, so a read that raced a change is never kept.
 *
 * postgres.js's own `sql.listen` re-listens after a closed connection, but says nothing while it is
 * not listening and gives up for good if the database is down at that moment; this class owns its
 * connection instead. Listening counts from the moment a probe notification, sent from another
 * connection, has come back (which also catches a pooler that drops notifications, such as
 * PgBouncer in transaction mode); a heartbeat probe every few seconds catches a connection that
 * died without closing.
 */
export class InvalidationChannel {
  /** Moves on every flush. */
  generation = 0;
  private state: "stopped" | "connecting" | "listening" | "lost" = "stopped";
  private client: postgres.Sql | undefined;
  private readonly flushListeners = new Set<() => void>();
  private pendingProbe: { payload: string; arrived: () => void } | undefined;
  private probes = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** When the current outage began (null while none): warnings are logged once per outage. */
  private outageSince: number | null = null;
  private readonly instance = randomBytes(6).toString("hex");

  constructor(private readonly options: ChannelOptions) {}

  get listening(): boolean {
    return this.state === "listening";
  }

  onFlush(listener: () => void): void {
    this.flushListeners.add(listener);
  }

  start(): void {
    if (this.state === "stopped") void this.connect();
  }

  async stop(): Promise<void> {
    this.state = "stopped";
    clearInterval(this.heartbeat);
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.flush();
    await client?.end({ timeout: 0 }).catch(() => undefined);
  }

  private flush(): void {
    this.generation++;
    for (const listener of this.flushListeners) listener();
  }

  private async connect(): Promise<void> {
    this.state = "connecting";
    // onnotify and onclose are documented options that the package's type definitions omit.
    const client: postgres.Sql = postgres(this.options.url, {
      max: 1,
      idle_timeout: null as unknown as number,
      max_lifetime: null,
      connect_timeout: env().DB_CONNECT_TIMEOUT_S,
      onnotice: () => {},
      connection: { application_name: LISTENER_APPLICATION_NAME },
      ...({
        onnotify: (_channel: string, payload: string) => this.notified(client, payload),
        onclose: () => {
          if (client === this.client) this.lose("the listening connection closed");
        },
      } as object),
    });
    this.client = client;
    try {
      await client.unsafe(`listen ${INVALIDATION_CHANNEL}`);
      await this.probe();
      if (client !== this.client) return;
      // Whatever was cached before this moment may have missed a notification: start empty.
      this.flush();
      this.state = "listening";
      if (this.outageSince === null) {
        log.info("api cache: listening for invalidations", { channel: INVALIDATION_CHANNEL });
      } else {
        log.info("api cache: listening again; caches flushed and in use", {
          channel: INVALIDATION_CHANNEL,
          outage_ms: Date.now() - this.outageSince,
        });
        this.outageSince = null;
      }
      this.heartbeat = setInterval(() => {
        if (!this.listening || this.pendingProbe) return;
        this.probe().catch((error: unknown) => {
          if (client === this.client) this.lose(describe(error));
        });
      }, HEARTBEAT_MS);
      this.heartbeat.unref();
    } catch (error) {
      if (client === this.client) this.lose(describe(error));
    }
  }

  private notified(client: postgres.Sql, payload: string): void {
    if (client !== this.client) return;
    if (payload.startsWith(PROBE_PREFIX)) {
      if (payload === this.pendingProbe?.payload) this.pendingProbe.arrived();
      return; // another instance's probe
    }
    this.flush();
  }

  /** Sends a notification from another connection and waits for it to arrive on the listener. */
  private probe(): Promise<void> {
    const payload = `${PROBE_PREFIX}${this.instance}:${++this.probes}`;
    return new Promise<void>((resolve, reject) => {
      const pending = { payload, arrived: () => done() };
      const done = (error?: Error) => {
        clearTimeout(timer);
        if (this.pendingProbe === pending) this.pendingProbe = undefined;
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(
        () =>
          done(
            new ProbeNotReturned(`a probe on ${INVALIDATION_CHANNEL} did not come back within ${PROBE_TIMEOUT_MS} ms`),
          ),
        PROBE_TIMEOUT_MS,
      );
      this.pendingProbe = pending;
      this.options.notifier`select pg_notify(${INVALIDATION_CHANNEL}, ${payload})`.then(
        () => undefined,
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    });
  }

  private lose(reason: string): void {
    if (this.state === "stopped") return;
    const client = this.client;
    this.client = undefined;
    clearInterval(this.heartbeat);
    this.state = "lost";
    this.flush();
    if (this.outageSince === null) {
      this.outageSince = Date.now();
      log.warn("api cache: not listening for invalidations; every request reads the database until it is back", {
        channel: INVALIDATION_CHANNEL,
        reason,
      });
    }
    void client?.end({ timeout: 0 }).catch(() => undefined);
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      if (this.state === "lost") void this.connect();
    }, this.options.relistenMs);
    this.retry.unref();
  }
}

/** What the log says of a failure: through errorFields, as every error (a driver's error may quote values). */
function describe(error: unknown): string {
  return errorFields(error).error;
}

/** A probe that did not come back: named, so that the log can say so without quoting a message. */
class ProbeNotReturned extends Error {
  override name = "ProbeNotReturned";
}
