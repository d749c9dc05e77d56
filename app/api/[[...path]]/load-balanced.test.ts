import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { revokeKey } from "@/lib/admin/keys";
import { getDb } from "@/lib/db/client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
} from "@/lib/testing/fixtures";
import { hasHaproxy, startLoadBalancer, type LoadBalancer } from "@/lib/testing/load-balancer";
import { hasPgBouncer, startPgBouncer, type PgBouncer } from "@/lib/testing/pgbouncer";
import { hasRedis, startRedisServer, type RedisServer } from "@/lib/testing/redis-server";

// Three `next start` instances of the production build behind a real HAProxy (Debian's), sharing
// PostgreSQL through a real PgBouncer in transaction mode, one Redis and the store, as the README's
// production section runs them: requests are spread, a key revoked anywhere is refused everywhere
// (each instance's cache listens around the pooler), one rate limit is shared, and a retried
// download is one entry.

const LIMIT_PER_MINUTE = 20;
const available = hasHaproxy() && hasRedis() && hasPgBouncer();
let redis: RedisServer;
let bouncer: PgBouncer;
let instances: AppServer[] = [];
let lb: LoadBalancer;
let organizationId: string;
let datasetId: string;

beforeAll(async () => {
  if (!available) return;
  const org = await createTestOrg();
  organizationId = org.id;
  const episodes = randomEpisodes(3, 83);
  datasetId = await importTestDataset([
    {
      version: "1.0.0",
      episodes,
      files: episodes.map((e) => ({
        path: `${e.episode_id}/cam.mp4`,
        episode_id: e.episode_id,
        stream: "cam",
        size_bytes: 10,
        sha256: "a".repeat(64),
      })),
    },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  const service = new URL(inject("serviceDatabaseUrl"));
  redis = await startRedisServer();
  bouncer = await startPgBouncer(service.toString(), {
    users: [{ name: decodeURIComponent(service.username), password: decodeURIComponent(service.password) }],
    poolSize: 6,
    connectQuery:
      "SET statement_timeout = '20s'; SET lock_timeout = '20s'; SET idle_in_transaction_session_timeout = '20s'",
  });
  const shared = {
    DATABASE_URL: bouncer.urlFor(service.toString()),
    DB_POOL_MODE: "transaction",
    DATABASE_LISTEN_URL: service.toString(),
    REDIS_URL: redis.url,
    RATE_LIMIT_KEY_PREFIX: `das:rl:lb:${Date.now()}`,
    RATE_LIMIT_PER_MINUTE: String(LIMIT_PER_MINUTE),
  };
  instances = await Promise.all([startAppServer(shared), startAppServer(shared), startAppServer(shared)]);
  lb = await startLoadBalancer(instances.map((i) => Number(new URL(i.url).port)));
}, 300_000);

afterAll(async () => {
  await lb?.stop();
  await Promise.all(instances.map((i) => i.stop()));
  await bouncer?.remove();
  await redis?.stop();
});

const api = (path: string, secret: string, init: RequestInit = {}) =>
  fetch(`${lb.url}/api/v1${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json", ...init.headers },
  });

/** Sends `n` requests one after another; the instance that answered each, and its status. */
async function answers(n: number, secret: string): Promise<{ by: string; status: number }[]> {
  const out: { by: string; status: number }[] = [];
  for (let i = 0; i < n; i++) {
    const response = await api("/datasets", secret);
    await response.arrayBuffer();
    out.push({ by: response.headers.get("x-served-by") ?? "", status: response.status });
  }
  return out;
}

if (!available)
  console.warn(
    "skipped: this suite needs HAProxy, Redis and PgBouncer (apt-get install haproxy redis-server pgbouncer)",
  );

describe.skipIf(!available)("three instances behind HAProxy", () => {
  it("spreads requests over all three, each answering from the shared database", async () => {
    const key = await createTestKey(organizationId);
    const seen = await answers(9, key.secret);
    expect(new Set(seen.map((a) => a.by))).toEqual(new Set(["app1", "app2", "app3"]));
    expect(seen.map((a) => a.status)).toEqual(seen.map(() => 200));
  });

  it("records a download retried with its Idempotency-Key once, whichever instances answer", async () => {
    const key = await createTestKey(organizationId);
    const idempotencyKey = `lb-${Date.now()}`;
    const bodies = [];
    for (let i = 0; i < 3; i++) {
      const response = await api("/downloads", key.secret, {
        method: "POST",
        headers: { "Idempotency-Key": idempotencyKey },
        body: JSON.stringify({ dataset_id: datasetId, version: "1.0.0" }),
      });
      expect([200, 201]).toContain(response.status);
      bodies.push((await response.json()) as { download_id: string });
    }
    expect(new Set(bodies.map((b) => b.download_id)).size).toBe(1);
    const [row] = await getDb().$client<{ n: number }[]>`
      select count(*)::int as n from disclosures where id = ${bodies[0]!.download_id}`;
    expect(row!.n).toBe(1);
  });

  it("refuses a key on every instance within a second of its revocation", async () => {
    const key = await createTestKey(organizationId);
    // Each instance has the key in its cache.
    const warm = await answers(6, key.secret);
    expect(warm.map((a) => a.status)).toEqual(warm.map(() => 200));
    await revokeKey(operatorCtx(), { id: key.id });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await answers(6, key.secret);
    expect(new Set(after.map((a) => a.by)).size).toBe(3);
    expect(after.map((a) => a.status)).toEqual(after.map(() => 401));
  });

  it("spends one rate limit per key across the instances (Redis), not one each", async () => {
    const key = await createTestKey(organizationId);
    const seen = await answers(LIMIT_PER_MINUTE + 4, key.secret);
    expect(seen.filter((a) => a.status === 200)).toHaveLength(LIMIT_PER_MINUTE);
    expect(seen.filter((a) => a.status === 429)).toHaveLength(4);
  });
});
