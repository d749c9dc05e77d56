import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidationChannel } from "@/lib/cache/invalidation";
import { verifyChain } from "@/lib/disclosures/verify";
import { lockChain } from "@/lib/disclosures/append";
import { buildWorld, downloadPlan, makeDownload, type World } from "@/lib/testing/disclosure-fixtures";
import { hasPgBouncer, startPgBouncer, type PgBouncer } from "@/lib/testing/pgbouncer";
import { freePort } from "@/lib/dev/embedded-postgres";
import { toAppError } from "@/lib/http/respond";
import { createDb, type RootDb, type Sql } from "./client";
import { JOB_QUEUES, startJobQueue } from "./job-queue";

// The primary behind a real PgBouncer (Debian's) in transaction mode, as DB_POOL_MODE=transaction
// runs it: two pools, as two app instances hold them, share three server sessions, so consecutive
// transactions of one client connection run on different sessions. The chain's lock and the group
// commit must hold through it, the driver must prepare nothing (the append prepares its own
// statements per server session, decision 0146), pg-boss works through it, and the
// cache's LISTEN must go around it.

const LIMITS =
  "SET statement_timeout = '20s'; SET lock_timeout = '20s'; SET idle_in_transaction_session_timeout = '20s'";
let w: World;
let bouncer: PgBouncer;
let pooled: string;
const pools: RootDb[] = [];

beforeAll(async () => {
  if (!hasPgBouncer()) return;
  w = await buildWorld("pooler");
  const u = new URL(w.iso.url);
  bouncer = await startPgBouncer(w.iso.url, {
    users: [{ name: decodeURIComponent(u.username), password: decodeURIComponent(u.password) }],
    poolSize: 3,
    connectQuery: LIMITS,
  });
  pooled = bouncer.urlFor(w.iso.url);
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.$client.end({ timeout: 5 })));
  await bouncer?.remove();
  await w?.iso.drop();
});

const pool = (max: number) => {
  const db = createDb(pooled, { max, transactionPooler: true });
  pools.push(db);
  return db;
};

const heldAdvisoryLocks = async () =>
  Number(
    (
      await w.iso.sql<{ n: string }[]>`select count(*) as n from pg_locks
      where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`
    )[0]!.n,
  );

if (!hasPgBouncer()) console.warn("skipped: this suite needs PgBouncer (apt-get install pgbouncer)");

describe.skipIf(!hasPgBouncer())("through PgBouncer in transaction mode", () => {
  it("appends concurrently from two instances' pools: a gapless chain that verifies", async () => {
    const instances = [pool(6), pool(6)];
    const plan = downloadPlan(w);
    const made = await Promise.all(
      Array.from({ length: 48 }, (_, i) => makeDownload(instances[i % 2]!, ...plan[i % plan.length]!)),
    );
    expect(new Set(made.map((m) => m.download.download_id)).size).toBe(48);
    const seqs = (await w.iso.sql<{ seq: string }[]>`select seq from disclosures order by seq`).map((r) =>
      Number(r.seq),
    );
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    expect(await verifyChain(w.iso.operator)).toMatchObject({ intact: true, count: seqs.length });
    // Twelve client connections, three server sessions: the pooler really multiplexed them.
    const pids = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const [row] = await instances[i % 2]!.$client<
          { pid: number }[]
        >`select pg_backend_pid() as pid, pg_sleep(0.05)`;
        return row!.pid;
      }),
    );
    expect(new Set(pids).size).toBeLessThanOrEqual(3);
  });

  it("plans the chain statement once per server session, whichever client's transactions run on it (decision 0146)", async () => {
    // One server session behind the pooler, two app instances' clients taking turns on it.
    const u = new URL(w.iso.url);
    const single = await startPgBouncer(w.iso.url, {
      users: [{ name: decodeURIComponent(u.username), password: decodeURIComponent(u.password) }],
      poolSize: 1,
      connectQuery: LIMITS,
    });
    const instances = [0, 1].map(() => createDb(single.urlFor(w.iso.url), { max: 1, transactionPooler: true }));
    try {
      const plan = downloadPlan(w);
      for (let i = 0; i < 12; i++) await makeDownload(instances[i % 2]!, ...plan[i % plan.length]!);
      const statements = await instances[0]!.$client<{ custom_plans: string; generic_plans: string }[]>`
        select custom_plans, generic_plans from pg_prepared_statements
        where name like 'das\_%' and statement like '%insert into disclosures (%'`;
      // Planned per batch (the driver's unnamed statements), the session would keep nothing; a
      // statement the server re-planned for every batch would count twelve custom plans. The plan
      // cache plans the first five executions for their values, then keeps one generic plan.
      expect(statements).toHaveLength(1);
      const [chain] = statements;
      expect(Number(chain!.custom_plans) + Number(chain!.generic_plans)).toBe(12);
      expect(Number(chain!.custom_plans)).toBeLessThanOrEqual(5);
    } finally {
      await Promise.all(instances.map((db) => db.$client.end({ timeout: 5 })));
      await single.remove();
    }
  });

  it("holds the chain's lock for a transaction only: released at its commit, whichever session ran it", async () => {
    const [a, b] = [pool(1), pool(1)];
    const tryLock = (db: RootDb) =>
      db.$client.begin(async (tx) => {
        const [row] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(7203115) as locked`;
        return row!.locked;
      });
    let release!: () => void;
    const holding = a.$client.begin(async (tx) => {
      await lockChain(tx as unknown as Sql);
      await new Promise<void>((resolve) => (release = resolve));
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await tryLock(b)).toBe(false);
    release();
    await holding;
    expect(await tryLock(b)).toBe(true);
    expect(await heldAdvisoryLocks()).toBe(0);
  });

  it("would leak a session-level lock to whichever client gets the session next: why the chain's is not one", async () => {
    const a = pool(1);
    await a.$client`select pg_advisory_lock(4242)`;
    // The client is done with it, but the server session the pooler hands to others still holds it.
    expect(await heldAdvisoryLocks()).toBe(1);
    await w.iso.sql`select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and objid = 4242`;
  });

  it("starts every server session with the service's limits (its connect_query)", async () => {
    const [row] = await pool(1).$client<{ timeout: string; idle: string }[]>`
      select current_setting('statement_timeout') as timeout, current_setting('idle_in_transaction_session_timeout') as idle`;
    expect(row).toEqual({ timeout: "20s", idle: "20s" });
  });

  it("carries pg-boss: jobs are sent, fetched and completed through it", async () => {
    const boss = await startJobQueue(pooled, { max: 2 });
    try {
      const id = await boss.send(JOB_QUEUES.noticeEmail, { through: "pgbouncer" });
      const [job] = await boss.fetch(JOB_QUEUES.noticeEmail);
      expect(job).toMatchObject({ id, data: { through: "pgbouncer" } });
      await boss.complete(JOB_QUEUES.noticeEmail, job!.id);
      expect(await boss.getJobById(JOB_QUEUES.noticeEmail, id!)).toMatchObject({ state: "completed" });
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
  });

  it("answers 503 when it cannot reach the server, as every database outage does (decision 0011)", async () => {
    // A pooler in front of a port nothing listens on: the primary down, as during a restart.
    const u = new URL(w.iso.url);
    const dead = new URL(w.iso.url);
    dead.port = String(await freePort());
    const lost = await startPgBouncer(dead.toString(), {
      users: [{ name: decodeURIComponent(u.username), password: decodeURIComponent(u.password) }],
      queryWaitTimeoutS: 2,
    });
    const db = createDb(lost.urlFor(w.iso.url), { max: 1, transactionPooler: true });
    try {
      const error = await db.$client`select 1`.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "08P01" });
      expect(toAppError(error, "req_test")).toMatchObject({ code: "unavailable", status: 503 });
    } finally {
      await db.$client.end({ timeout: 1 });
      await lost.remove();
    }
  });

  it("does not deliver the cache's notifications, so its LISTEN goes to the primary directly", async () => {
    const notifier = pool(1).$client;
    const through = new InvalidationChannel({ url: pooled, notifier, relistenMs: 60_000 });
    const around = new InvalidationChannel({ url: w.iso.url, notifier, relistenMs: 60_000 });
    try {
      through.start();
      around.start();
      await new Promise((resolve) => setTimeout(resolve, 4000));
      expect(around.listening).toBe(true);
      expect(through.listening).toBe(false);
    } finally {
      await Promise.all([through.stop(), around.stop()]);
    }
  });
});
