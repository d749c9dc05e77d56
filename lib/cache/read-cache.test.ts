import type postgres from "postgres";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../db/client";
import { createOrganization } from "../admin/organizations";
import { issueKey } from "../admin/keys";
import { createIsolatedDb, type IsolatedDb } from "../testing/isolated-db";
import { uniqueId } from "../testing/fixtures";
import { INVALIDATION_CHANNEL, InvalidationChannel, LISTENER_APPLICATION_NAME } from "./invalidation";
import { Lru } from "./lru";
import { ReadCache } from "./read-cache";
import { until } from "@/lib/testing/until";

// The cache's rules against a real PostgreSQL: what is kept, what is not, and when it is bypassed.
// On a database of its own: any write by a suite running alongside would notify and flush.

let iso: IsolatedDb;
beforeAll(async () => {
  iso = await createIsolatedDb("cache");
});
afterAll(() => iso?.drop());

const sql = () => iso.sql;
const started: InvalidationChannel[] = [];

function channel(options: { notifier?: postgres.Sql; relistenMs?: number } = {}) {
  const c = new InvalidationChannel({
    url: iso.url,
    notifier: options.notifier ?? sql(),
    relistenMs: options.relistenMs ?? 100,
  });
  started.push(c);
  return c;
}

/** A cache whose channel listens; `loads` counts the reads that reached the loader. */
async function listeningCache(options: { relistenMs?: number } = {}) {
  const c = channel(options);
  const cache = new ReadCache(c, 1 << 20);
  c.start();
  await until(() => c.listening);
  return { channel: c, cache };
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((c) => c.stop()));
});

describe("ReadCache.memo", () => {
  it("keeps what it read and serves it from memory until a change is notified", async () => {
    const { channel: c, cache } = await listeningCache();
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.memo("keys", "k", load)).toBe(1);
    expect(await cache.memo("keys", "k", load)).toBe(1);
    const generation = c.generation;
    // A change to a table the answers depend on, by any writer: the trigger notifies.
    await createOrganization(iso.operator, { slug: uniqueId("org") });
    await until(() => c.generation > generation);
    expect(await cache.memo("keys", "k", load)).toBe(2);
  });

  it("is not flushed by a key's last use being recorded (written once a minute per key in use), only by real changes", async () => {
    const { channel: c } = await listeningCache();
    const key = await issueKey(iso.operator, {
      organizationId: (await createOrganization(iso.operator, { slug: uniqueId("org") })).id,
      name: "k",
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const generation = c.generation;
    await sql()`update api_keys set last_used_at = now() where id = ${key.id}`;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(c.generation).toBe(generation);
    await sql()`update api_keys set expires_at = now() + interval '1 day' where id = ${key.id}`;
    await until(() => c.generation > generation);
  });

  it("does not keep a value whose read raced a notification", async () => {
    const { channel: c, cache } = await listeningCache();
    let loads = 0;
    const racing = async () => {
      loads++;
      const generation = c.generation;
      // The read happened; now a change commits and its notification flushes the cache before the value is stored.
      await sql()`select pg_notify(${INVALIDATION_CHANNEL}, 'organizations')`;
      await until(() => c.generation > generation);
      return "stale";
    };
    expect(await cache.memo("licences", "org", racing)).toBe("stale");
    expect(await cache.memo("licences", "org", async () => (loads++, "fresh"))).toBe("fresh");
    expect(loads).toBe(2);
  });

  it("never keeps `undefined` (a key that does not exist)", async () => {
    const { cache } = await listeningCache();
    let loads = 0;
    for (let i = 0; i < 3; i++) await cache.memo("keys", "missing", async () => void loads++);
    expect(loads).toBe(3);
  });

  it("reads the database every time while the channel is not listening, and caches again once it is back", async () => {
    const { channel: c, cache } = await listeningCache({ relistenMs: 1500 });
    let loads = 0;
    const load = async () => ++loads;
    await cache.memo("datasets", "d", load);
    const [killed] = await sql()<{ n: number }[]>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`;
    expect(killed!.n).toBeGreaterThanOrEqual(1);
    await until(() => !c.listening);
    for (let i = 0; i < 3; i++) await cache.memo("datasets", "d", load);
    expect(loads).toBe(4);
    await until(() => c.listening);
    // Listening again starts from an empty cache: what was kept before may have missed a change.
    expect(await cache.memo("datasets", "d", load)).toBe(5);
    expect(await cache.memo("datasets", "d", load)).toBe(5);
  });

  it("never listens when notifications do not come back (probes sent to another database, as through a pooler that drops them)", async () => {
    // The run's shared database is another database on the same server: its notifications never reach this one's sessions.
    const c = channel({ notifier: getDb().$client, relistenMs: 60_000 });
    const cache = new ReadCache(c, 1 << 20);
    c.start();
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(c.listening).toBe(false);
    let loads = 0;
    for (let i = 0; i < 2; i++) await cache.memo("keys", "k", async () => ++loads);
    expect(loads).toBe(2);
  });

  it("keeps bodies within its byte budget, dropping the least recently used", async () => {
    const { cache } = await listeningCache();
    const body = (n: number) => ({ bytes: new Uint8Array(n), etag: '"x"' });
    await cache.memo("bodies", "a", async () => body(400 << 10));
    await cache.memo("bodies", "b", async () => body(400 << 10));
    await cache.memo("bodies", "a", async () => body(1)); // a hit: a is now the most recent
    await cache.memo("bodies", "c", async () => body(400 << 10));
    expect(cache.held("bodies")).toBe(800 << 10);
    expect((await cache.memo("bodies", "a", async () => body(1))).bytes.length).toBe(400 << 10);
    expect((await cache.memo("bodies", "b", async () => body(1))).bytes.length).toBe(1);
  });
});

describe("the invalidation triggers", () => {
  // Whatever table an answer of the API depends on: a statement on it notifies, whoever runs it.
  const TABLES = [
    "api_keys",
    "api_key_scopes",
    "licences",
    "organizations",
    "users",
    "datasets",
    "dataset_versions",
    "changelog_entries",
    "episodes",
    "annotations",
    "files",
    "file_episodes",
  ];

  it("notify the channel with the table's name for a statement on every table an answer depends on", async () => {
    const heard: string[] = [];
    const listener = await sql().listen(INVALIDATION_CHANNEL, (payload) => heard.push(payload));
    try {
      // Statement-level triggers fire for a statement that changes no row too.
      for (const table of TABLES) await sql().unsafe(`delete from ${table} where false`);
      await until(() => heard.length >= TABLES.length);
      expect([...heard].sort()).toEqual([...TABLES].sort());
    } finally {
      await listener.unlisten();
    }
  });
});

describe("Lru", () => {
  it("holds at most its capacity, evicting the least recently used, and refuses what alone exceeds it", () => {
    const lru = new Lru<string, string>(10, (v) => v.length);
    lru.set("a", "aaaa");
    lru.set("b", "bbbb");
    lru.get("a");
    lru.set("c", "cccc");
    expect([lru.get("a"), lru.get("b"), lru.get("c")]).toEqual(["aaaa", undefined, "cccc"]);
    expect(lru.weight).toBe(8);
    lru.set("d", "d".repeat(11));
    expect(lru.get("d")).toBeUndefined();
    lru.set("a", "a");
    expect(lru.weight).toBe(5);
    lru.clear();
    expect([lru.size, lru.weight]).toEqual([0, 0]);
  });
});
