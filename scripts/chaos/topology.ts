// The production topology on loopback, for the chaos run: a Debian PostgreSQL primary with a
// streaming replica, PgBouncer in transaction mode in front of the primary, Redis, the local
// object store, three `next start` instances of the production build and HAProxy in front of
// them: what the README's production section describes, every part a real one.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { issueKey } from "@/lib/admin/keys";
import { organizationBySlug } from "@/lib/admin/organizations";
import type { Ctx } from "@/lib/context";
import { createDb, type RootDb } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";
import { asUser, ensureLoginRole } from "@/lib/db/roles";
import { seedDemo } from "@/lib/dev/demo/seed";
import { DEMO_ORGANIZATIONS } from "@/lib/dev/demo/credentials";
import { freePort } from "@/lib/dev/embedded-postgres";
import { randomStoreCredentials, startLocalStore, type LocalStore } from "@/lib/dev/local-store";
import { startNextServer, type NextServer } from "@/lib/dev/next-server";
import { storeLocation } from "@/lib/storage/config";
import { startLoadBalancer, type LoadBalancer } from "@/lib/testing/load-balancer";
import { startPgBouncer, type PgBouncer } from "@/lib/testing/pgbouncer";
import { initCluster, pgBinaries, withPort, type PostgresServer } from "@/lib/testing/postgres-cluster";
import { startRedisServer, type RedisServer } from "@/lib/testing/redis-server";
import { startStreamingReplica, type StreamingReplica } from "@/lib/testing/streaming-replica";

const SERVICE_ROLE = "das_service";
const DATABASE = "das";
export const INSTANCES = 3;

/** One app instance behind the load balancer: killed and started again on the same port. */
export class Instance {
  private server: NextServer | null = null;
  /** Everything it wrote, across its restarts: searched for 500s afterwards. */
  private earlier = "";

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  async start(): Promise<void> {
    this.server = await startNextServer(this.env, [], { port: this.port });
  }

  /** SIGKILL: no shutdown, its requests in flight cut. */
  kill(): void {
    if (!this.server) return;
    process.kill(this.server.pid, "SIGKILL");
    this.earlier += this.server.output();
    this.server = null;
  }

  async stop(): Promise<void> {
    await this.server?.stop();
  }

  log(): string {
    return this.earlier + (this.server?.output() ?? "");
  }
}

export type Topology = {
  dir: string;
  primary: PostgresServer;
  /** The primary as its owner, directly: setup, checks. */
  ownerUrl: string;
  replica: StreamingReplica;
  replicaServiceUrl: string;
  bouncer: PgBouncer;
  redis: RedisServer;
  store: LocalStore;
  instances: Instance[];
  lb: LoadBalancer;
  owner: RootDb;
  operator: Ctx;
  /** API keys: one per licensee client, one per `das pull`, each of an organisation of the demo. */
  keys: { secret: string; organization: string; id: string }[];
  stop(): Promise<void>;
};

/** Starts every part, seeds the demo, issues the clients' keys. `say` reports each step. */
export async function startTopology(options: { clients: number; pulls: number; say: (line: string) => void }) {
  const { say } = options;
  const dir = mkdtempSync(path.join(os.tmpdir(), "das-chaos-"));
  const stops: (() => Promise<void>)[] = [];
  try {
    const primary = await startPrimary(say);
    stops.push(() =>
      primary.server.stop("fast").then(() => rmSync(primary.server.dataDir, { recursive: true, force: true })),
    );
    const servicePassword = randomBytes(18).toString("hex");
    await ensureLoginRole(primary.superuser, SERVICE_ROLE, servicePassword);
    const ownerUrl = withPort(primary.superuser, primary.server.port, DATABASE);
    await migrateDatabase(ownerUrl, { serviceRole: SERVICE_ROLE });
    const serviceUrl = asUser(ownerUrl, SERVICE_ROLE, servicePassword);
    const store = await startLocalStore(path.join(dir, "store"), randomStoreCredentials());
    stops.push(store.stop);
    Object.assign(process.env, store.env);
    const appSecret = randomBytes(32).toString("hex");
    const owner = createDb(ownerUrl, { max: 4 });
    stops.push(() => owner.$client.end({ timeout: 5 }));
    const operator: Ctx = {
      db: owner,
      requestId: "chaos",
      principal: { kind: "operator", name: "chaos", organizationId: null },
    };
    say("seeding the demo catalog and its files");
    await seedDemo(operator, { appSecret, store: storeLocation(), log: () => {}, episodesPerVersion: 12 });
    const keys = await issueKeys(operator, options.clients + options.pulls);
    say("starting the streaming replica, Redis and PgBouncer");
    const replica = await startStreamingReplica(ownerUrl);
    stops.push(replica.remove);
    const redis = await startRedisServer();
    stops.push(redis.stop);
    const bouncer = await startPgBouncer(serviceUrl, {
      users: [{ name: SERVICE_ROLE, password: servicePassword }],
      poolSize: 12,
      connectQuery:
        "SET statement_timeout = '20s'; SET lock_timeout = '20s'; SET idle_in_transaction_session_timeout = '20s'",
    });
    stops.push(bouncer.remove);
    const replicaServiceUrl = withPort(serviceUrl, replica.server.port);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...store.env,
      DATABASE_URL: bouncer.urlFor(serviceUrl),
      DB_POOL_MODE: "transaction",
      DATABASE_LISTEN_URL: serviceUrl,
      DATABASE_REPLICA_URL: replicaServiceUrl,
      REDIS_URL: redis.url,
      APP_SECRET: appSecret,
      TRUSTED_PROXIES: "1",
      RATE_LIMIT_PER_MINUTE: "1000000",
      AUTH_FAILURES_PER_MINUTE: "1000000",
      DIGEST_INTERVAL_MINUTES: "0",
    };
    delete env.DATABASE_OWNER_URL;
    say(`starting ${INSTANCES} instances of next start and HAProxy`);
    const instances = await Promise.all(
      Array.from({ length: INSTANCES }, async (_, i) => new Instance(`app${i + 1}`, await freePort(), env)),
    );
    stops.push(() => Promise.all(instances.map((i) => i.stop())).then(() => undefined));
    for (const instance of instances) await instance.start();
    const lb = await startLoadBalancer(instances.map((i) => i.port));
    stops.push(lb.stop);
    const topology: Topology = {
      dir,
      primary: primary.server,
      ownerUrl,
      replica,
      replicaServiceUrl,
      bouncer,
      redis,
      store,
      instances,
      lb,
      owner,
      operator,
      keys,
      stop: async () => {
        for (const stop of stops.reverse()) await stop().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
    };
    return topology;
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** A new cluster of the machine's newest PostgreSQL (Debian's), started, with the service's database. */
async function startPrimary(say: (line: string) => void) {
  const major = newestMachinePostgres();
  const binaries = major === null ? null : await pgBinaries(major, "pg_basebackup");
  if (!binaries)
    throw new Error("The chaos run needs the machine's PostgreSQL with pg_basebackup: apt-get install postgresql.");
  say(`starting a PostgreSQL ${binaries.major} primary (${binaries.dir})`);
  const password = randomBytes(18).toString("hex");
  const port = await freePort();
  const server = await initCluster(binaries, {
    password,
    port,
    settings: { max_connections: "200", shared_buffers: "128MB", wal_level: "replica", max_wal_senders: "10" },
  });
  const superuser = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  await server.start(superuser);
  const sql = postgres(superuser, { max: 1, onnotice: () => {} });
  await sql.unsafe(`create database ${DATABASE}`);
  await sql.end();
  return { server, superuser };
}

function newestMachinePostgres(): number | null {
  try {
    const majors = readdirSync("/usr/lib/postgresql").map(Number).filter(Number.isInteger);
    return majors.length ? Math.max(...majors) : null;
  } catch {
    return null;
  }
}

/** A key per client, alternating between the demo's organisations. */
async function issueKeys(operator: Ctx, count: number) {
  const keys: Topology["keys"] = [];
  for (let i = 0; i < count; i++) {
    const slug = DEMO_ORGANIZATIONS[i % DEMO_ORGANIZATIONS.length]!.slug;
    const org = await organizationBySlug(operator, slug);
    const issued = await issueKey(operator, { organizationId: org.id, name: `chaos client ${i + 1}` });
    keys.push({ secret: issued.secret, organization: slug, id: issued.id });
  }
  return keys;
}
