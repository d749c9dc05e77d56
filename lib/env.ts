import { z } from "zod";

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const optionalString = z.string().trim().min(1).optional().catch(undefined);

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: optionalString,
  /**
   * A streaming read replica of DATABASE_URL's server (physical replication): reviewer pages, the
   * contributor report, exports and `das-admin disclosures verify --full` read the log from it.
   * Everything a licensee does, appends, checkpoints and digests stay on the primary. Unset: every
   * read goes to the primary.
   */
  DATABASE_REPLICA_URL: optionalString,
  /**
   * Where the API cache's LISTEN connection goes: the primary directly, when DATABASE_URL is a
   * transaction-mode pooler (which would not deliver notifications). Default DATABASE_URL.
   */
  DATABASE_LISTEN_URL: optionalString,
  /**
   * The role that owns the tables: `das-admin migrate` and the log's archiving connect with it,
   * the service never does. Unset: DATABASE_URL's role does both (one role, as before).
   */
  DATABASE_OWNER_URL: optionalString,
  /**
   * `session` (default): DATABASE_URL is the server or a session pooler, each pooled connection a
   * session of its own. `transaction`: it is a transaction-mode pooler such as PgBouncer, so no
   * statement is prepared and no session setting is sent at connect (the pooler would refuse or
   * leak them): the service role's own settings carry the limits (`das-admin migrate` sets them).
   */
  DB_POOL_MODE: z.enum(["session", "transaction"]).default("session"),
  /** Signs cursors and portal sessions. The launcher provides one per installation in the embedded default. */
  APP_SECRET: optionalString,
  REDIS_URL: optionalString,
  /** Names the rate-limit counters in Redis, so that several deployments can share one server. */
  RATE_LIMIT_KEY_PREFIX: z.string().trim().min(1).default("das:rl"),
  RATE_LIMIT_PER_MINUTE: positiveInt(600),
  /**
   * How many proxies in front of the service append to X-Forwarded-For and set X-Forwarded-Proto.
   * 0 (no proxy): the client is the socket's peer and the forwarded headers a client sends are
   * ignored; 1 (one load balancer or TLS terminator): the right-most entries, written by it.
   */
  TRUSTED_PROXIES: z.coerce.number().int().min(0).max(10).default(0),
  AUTH_FAILURES_PER_MINUTE: positiveInt(30),
  /** Failed portal sign-ins per account per minute. */
  SIGNIN_FAILURES_PER_MINUTE: positiveInt(5),
  DAS_DATA_DIR: z.string().default(".data"),
  DB_POOL_MAX: positiveInt(10),
  /** Seconds a new database connection may take to be ready; past it the request answers 503 instead of waiting. */
  DB_CONNECT_TIMEOUT_S: positiveInt(5),
  /** Seconds an unused pooled connection is kept: one a firewall or failover dropped silently is never reused. */
  DB_IDLE_TIMEOUT_S: positiveInt(30),
  /** Seconds (up to twice as many, spread) before a connection is replaced, so none lives on a stale server for ever. */
  DB_MAX_LIFETIME_S: positiveInt(1800),
  /**
   * Seconds a statement of the service may run (PostgreSQL's statement_timeout, lock waits
   * included) and a transaction may sit idle (idle_in_transaction_session_timeout) before the
   * server ends it. A connection that has said nothing for this long and a few seconds more while
   * a statement was due is dead (a cut network path): it is closed and the request answers 503.
   * Only the service's own pool has these limits; das-admin's imports and walks run as long as they need.
   */
  DB_STATEMENT_TIMEOUT_S: positiveInt(20),
  /**
   * MiB of immutable API response bodies each instance keeps in memory (lib/cache). 0 turns every
   * cache of the API off (keys, licences, catalog, bodies): each request then reads the database.
   */
  API_CACHE_MB: z.coerce.number().int().min(0).default(64),
  /** How soon an instance tries again to listen for invalidations after losing the channel. */
  API_CACHE_RELISTEN_MS: positiveInt(1000),
  S3_ENDPOINT: optionalString,
  /**
   * The store's address as the service's clients reach it, when it differs from S3_ENDPOINT (the
   * address the service itself uses): signed URLs and the portal's media policy name it. The
   * embedded store then also listens on every interface, at its port.
   */
  S3_PUBLIC_ENDPOINT: optionalString,
  S3_REGION: z.string().default("us-east-1"),
  S3_BUCKET: optionalString,
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /**
   * The Ed25519 key that signs the disclosure log's head digests (lib/disclosures/digest.ts): a
   * PKCS#8 PEM, or the path of a file holding one. Unset: no digests are written.
   */
  DIGEST_SIGNING_KEY: optionalString,
  /** The public key (SPKI PEM, or a path) that `das-admin disclosures verify --digests` checks digests with; derived from DIGEST_SIGNING_KEY when unset. */
  DIGEST_PUBLIC_KEY: optionalString,
  /** Where digests go: a key prefix, in DIGEST_BUCKET (default S3_BUCKET). */
  DIGEST_PREFIX: z.string().trim().min(1).default("disclosure-digests/"),
  DIGEST_BUCKET: optionalString,
  /** Credentials for the digest bucket when they differ from S3_*'s (a write-only writer, a read-only verifier). */
  DIGEST_S3_ACCESS_KEY_ID: optionalString,
  DIGEST_S3_SECRET_ACCESS_KEY: optionalString,
  /**
   * Where archived months of the disclosure log go (`das-admin disclosures archive`): a bucket
   * (default S3_BUCKET; in production one with object lock) and a key prefix, one folder a month.
   */
  DISCLOSURE_ARCHIVE_BUCKET: optionalString,
  DISCLOSURE_ARCHIVE_PREFIX: z.string().trim().min(1).default("disclosure-archives/"),
  /**
   * Minutes between each instance's look at the log's months: partitions made ahead, ended months
   * closed (a checkpoint, a signed digest). 0 turns it off (then `das-admin disclosures months`).
   */
  DISCLOSURE_MONTHS_INTERVAL_MINUTES: z.coerce.number().int().min(0).default(60),
  /**
   * Days a view's rendered meta/ is kept after its last use (lib/views/collect.ts, decision 0147):
   * at least 1, far beyond a signed URL's 15 minutes; a view asked for after that is rendered again.
   */
  RENDERED_VIEW_RETENTION_DAYS: z.coerce.number().min(1).default(7),
  /** Minutes between each instance's collection of rendered meta/ unused for the retention; 0 turns it off (then `das-admin store collect`). */
  RENDERED_COLLECTION_INTERVAL_MINUTES: z.coerce.number().int().min(0).default(60),
  /** Minutes between head digests each instance tries to write; 0 turns the schedule off. */
  DIGEST_INTERVAL_MINUTES: z.coerce.number().int().min(0).default(60),
  /**
   * Webhook URLs whose host resolves to a loopback, private, link-local, unique-local or
   * unspecified address are refused, at registration and again at each delivery (SSRF). 1 allows
   * them: for a receiver on this machine in development and tests, never in production.
   */
  WEBHOOKS_ALLOW_PRIVATE: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /** Milliseconds a webhook receiver has to answer an attempt before it counts as failed. */
  WEBHOOK_TIMEOUT_MS: positiveInt(10_000),
  /** smtp://user:pass@host:port (or smtps://): notices are also emailed to the organisation's users. Unset: no email. */
  SMTP_URL: optionalString,
  /** The From address of notice emails. */
  SMTP_FROM: z.string().trim().min(1).default("Dataset Access Service <notices@localhost>"),
  /**
   * Seconds before the first retry of a failed delivery; each further retry waits about twice as
   * long (pg-boss's backoff, with jitter), NOTICE_RETRY_LIMIT times. The defaults, 30 s and 12,
   * keep trying for 1.4 to 2.8 days. Tests shorten the delay.
   */
  NOTICE_RETRY_DELAY_S: positiveInt(30),
  NOTICE_RETRY_LIMIT: z.coerce.number().int().min(0).max(16).default(12),
  /**
   * Days a withdrawal notice may stay unacknowledged before its organisation is reminded, and
   * between reminders after that; 0: no reminders.
   */
  NOTICE_REMINDER_DAYS: z.coerce.number().int().min(0).max(365).default(7),
  /** off: this server runs no delivery worker (then `das-admin worker` must run somewhere). */
  NOTICE_WORKER: z.enum(["on", "off"]).default("on"),
  /**
   * off: this server makes no licences' copies of fingerprinted versions (then `das-admin worker`
   * must run somewhere; downloads of those versions answer 503 until their copies are made).
   */
  COPY_WORKER: z.enum(["on", "off"]).default("on"),
  AUTH_OIDC_ISSUER: optionalString,
  AUTH_OIDC_ID: optionalString,
  AUTH_OIDC_SECRET: optionalString,
});

export type Env = z.infer<typeof EnvSchema>;

let cached: Env | undefined;

/** Validated once, on first use, so a misconfiguration fails loudly with the variable's name. */
export function env(): Env {
  if (cached) return cached;
  const parsed = EnvSchema.safeParse(process.env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`Invalid environment variable ${issue.path.join(".")}: ${issue.message}`);
  }
  cached = parsed.data;
  return cached;
}

export function requireEnv<K extends keyof Env>(name: K): NonNullable<Env[K]> {
  const value = env()[name];
  if (value === undefined || value === null) {
    throw new Error(
      `${name} is not set. Start the service with \`npm run dev\` or \`npm start\`, which provide it, or set it yourself.`,
    );
  }
  return value as NonNullable<Env[K]>;
}
