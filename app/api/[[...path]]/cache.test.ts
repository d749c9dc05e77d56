import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/admin/users";
import { createOrganization } from "@/lib/admin/organizations";
import { grantLicence } from "@/lib/admin/licences";
import { issueKey, type IssueKeyInput } from "@/lib/admin/keys";
import { importVersion } from "@/lib/catalog/import/import-version";
import { LISTENER_APPLICATION_NAME } from "@/lib/cache/invalidation";
import { jsonBody } from "@/lib/cache/cacheable";
import { streamJsonObject } from "@/lib/http/stream-json";
import { getManifest } from "@/lib/catalog/get-manifest";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import { randomEpisodes, uniqueId, writeImportDir, type TestVersion } from "@/lib/testing/fixtures";
import { randomIp, type CallResult } from "@/lib/testing/http";
import { assertMatchesContract } from "@/lib/testing/contract";
import { signInOverHttp } from "@/lib/testing/portal-session";
import { callAction } from "@/lib/testing/server-actions";
import { adminCli } from "@/lib/testing/admin-cli";

// The API's per-instance cache (lib/cache) as clients meet it: two `next start` processes on one
// database, writers in other processes (the portal, das-admin, SQL from this one), real HTTP. On a
// database of its own, so that no suite running alongside notifies (and flushes) in the middle of
// a check that an answer came from memory.

let iso: IsolatedDb;
const sql = () => iso.sql;
const createTestOrg = () => createOrganization(iso.operator, { slug: uniqueId("org") });
const grant = (organizationId: string, datasetId: string, version: string) =>
  grantLicence(iso.operator, { organizationId, datasetId, version });
const createTestKey = (organizationId: string, options: Partial<IssueKeyInput> = {}) =>
  issueKey(iso.operator, { organizationId, name: "test key", ...options });
const admin = adminCli("cache", { databaseUrl: () => iso.url });

async function importTestDataset(versions: TestVersion[]): Promise<string> {
  const id = uniqueId("ds");
  for (const version of versions) {
    const dir = writeImportDir(id, version);
    try {
      await importVersion(iso.db.$client, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return id;
}
const episodes = randomEpisodes(12, 91);
const episodeId = episodes[0]!.episode_id;
const versionOf = (version: string) => ({
  version,
  episodes,
  annotations: [
    { episode_id: episodeId, label: "reach", start_s: 0, end_s: 1, attributes: { hand: "left" } },
    { episode_id: episodeId, label: "grasp", start_s: 1, end_s: 2, attributes: {} },
  ],
  files: [
    { path: "README.md", size_bytes: 3, sha256: "a".repeat(64) },
    ...episodes.map((e) => ({
      path: `${e.episode_id}/cam.mp4`,
      episode_id: e.episode_id,
      stream: "cam",
      size_bytes: 10,
      sha256: "b".repeat(64),
    })),
  ],
});

let datasetId: string;
let servers: AppServer[];
const PASSWORD = "a long admin password";
let adminCookie: string;

/** GET over HTTP as a client behind a TLS-terminating proxy; the result is checked against the OpenAPI document. */
async function get(
  server: AppServer,
  path: string,
  key: string | undefined,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  const res = await fetch(`${server.url}${path}`, {
    headers: {
      "x-forwarded-for": randomIp(),
      "x-forwarded-proto": "https",
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const result = { status: res.status, headers: res.headers, text, json };
  assertMatchesContract({ method: "GET", url: new URL(path, server.url), result });
  return result;
}

const page = (version: string, query = "") =>
  `/api/v1/datasets/${datasetId}/versions/${version}/episodes?limit=5${query}`;

const count = (text: string, needle: string) => text.split(needle).length - 1;

/** Waits until `condition` holds (polling every 20 ms) or fails after `ms`. */
async function eventually(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Requests `path` from every instance, again and again, until each answers `status`; returns how
 * long that took from the call, and fails once it takes longer than a second.
 */
async function secondsUntilEveryInstanceAnswers(path: string, key: string, status: number): Promise<number> {
  const started = Date.now();
  const pending = new Set(servers);
  while (pending.size) {
    for (const server of [...pending]) if ((await get(server, path, key)).status === status) pending.delete(server);
    if (pending.size && Date.now() - started > 1000) {
      const seen = await Promise.all([...pending].map(async (s) => (await get(s, path, key)).status));
      throw new Error(
        `after ${Date.now() - started} ms an instance still answers ${seen.join(", ")} instead of ${status}`,
      );
    }
  }
  return (Date.now() - started) / 1000;
}

/** A request on every instance, twice, so that whatever it reads is in each instance's cache. */
async function warm(path: string, key: string, status = 200) {
  for (const server of servers) for (let i = 0; i < 2; i++) expect((await get(server, path, key)).status).toBe(status);
}

/** An organisation holding both versions, and a key of it. */
async function holder() {
  const org = await createTestOrg();
  await grant(org.id, datasetId, "1.0.0");
  await grant(org.id, datasetId, "2.0.0");
  const key = await createTestKey(org.id);
  return { org, key };
}

/**
 * A write the database does not notify: triggers are off for this transaction
 * (session_replication_role = replica). Only a test does this: it shows which answers come from
 * memory (they stay as they were) and which from the database (they change at once).
 */
function writeUnnoticed(statement: (tx: ReturnType<typeof sql>) => Promise<unknown>) {
  return sql().begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await statement(tx as unknown as ReturnType<typeof sql>);
  });
}

const listening = (server: AppServer) => server.output().includes("api cache: listening for invalidations");

beforeAll(async () => {
  iso = await createIsolatedDb("cache");
  datasetId = await importTestDataset([versionOf("1.0.0"), versionOf("2.0.0")]);
  // A long pause before listening again, so that an outage lasts long enough to be looked at.
  const env = { DATABASE_URL: iso.url, API_CACHE_RELISTEN_MS: "4000" };
  servers = await Promise.all([startAppServer(env), startAppServer(env)]);
  // The first API request opens each instance's channel.
  const { key } = await holder();
  for (const server of servers) await get(server, "/api/v1/datasets", key.secret);
  await eventually(() => servers.every(listening), 15_000, "both instances listen for invalidations");
  const email = `${uniqueId("admin")}@cache.example`;
  await createUser(iso.operator, { email, role: "admin", organizationId: null, password: PASSWORD });
  adminCookie = await signInOverHttp(servers[0]!.url, email, PASSWORD);
}, 180_000);

afterAll(async () => {
  await Promise.all((servers ?? []).map((s) => s.stop()));
  await iso?.drop();
});

describe("revocation with caches in two instances", () => {
  it("a key revoked in the portal is refused by both instances within a second", async () => {
    const { key } = await holder();
    await warm(page("1.0.0"), key.secret);
    const result = await callAction(servers[1]!.url, "revokeKeyAction", { id: key.id }, adminCookie);
    expect(result).toMatchObject({ ok: true });
    expect(await secondsUntilEveryInstanceAnswers(page("1.0.0"), key.secret, 401)).toBeLessThan(1);
    const res = await get(servers[0]!, page("1.0.0"), key.secret);
    expect(res.json.error.message).toBe("This API key has been revoked.");
  });

  it("a key revoked by das-admin in another process is refused by both instances within a second", async () => {
    const { key } = await holder();
    await warm(page("1.0.0"), key.secret);
    await warm("/api/v1/datasets", key.secret);
    const run = await admin.run(["key", "revoke", key.id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`Revoked key ${key.prefix}`);
    expect(await secondsUntilEveryInstanceAnswers(page("1.0.0"), key.secret, 401)).toBeLessThan(1);
    expect(await secondsUntilEveryInstanceAnswers("/api/v1/datasets", key.secret, 401)).toBeLessThan(1);
  });

  it("a revoked licence is 403 (the dataset still visible) and the last one 404, in both instances within a second", async () => {
    const { org, key } = await holder();
    await warm(page("2.0.0"), key.secret);
    await warm(page("1.0.0"), key.secret);
    const run = await admin.run(["licence", "revoke", org.slug, datasetId, "2.0.0"]);
    expect(run.code, run.stderr).toBe(0);
    expect(await secondsUntilEveryInstanceAnswers(page("2.0.0"), key.secret, 403)).toBeLessThan(1);
    expect((await get(servers[1]!, page("1.0.0"), key.secret)).status).toBe(200);

    const result = await callAction(
      servers[0]!.url,
      "revokeLicenceAction",
      { organizationId: org.id, datasetId, version: "1.0.0" },
      adminCookie,
    );
    expect(result).toMatchObject({ ok: true });
    expect(await secondsUntilEveryInstanceAnswers(page("1.0.0"), key.secret, 404)).toBeLessThan(1);
    expect(await secondsUntilEveryInstanceAnswers(page("2.0.0"), key.secret, 404)).toBeLessThan(1);
  });

  it("narrowing a key (by SQL, as from a psql session) takes effect in both instances within a second", async () => {
    const { key } = await holder();
    await warm(page("2.0.0"), key.secret);
    const [v1] = await sql()<
      { id: number }[]
    >`select id from dataset_versions where dataset_id = ${datasetId} and version = '1.0.0'`;
    await sql().begin(async (tx) => {
      await tx`insert into api_key_scopes (key_id, version_id) values (${key.id}, ${v1!.id})`;
      await tx`update api_keys set narrowed = true where id = ${key.id}`;
    });
    expect(await secondsUntilEveryInstanceAnswers(page("2.0.0"), key.secret, 403)).toBeLessThan(1);
    expect((await get(servers[0]!, page("1.0.0"), key.secret)).status).toBe(200);
    // Narrowed further, to nothing: the dataset is no longer visible at all.
    await sql()`delete from api_key_scopes where key_id = ${key.id}`;
    expect(await secondsUntilEveryInstanceAnswers(page("1.0.0"), key.secret, 404)).toBeLessThan(1);
  });

  it("checks expiry against the clock on every request, with no change to notify", async () => {
    const org = await createTestOrg();
    await grant(org.id, datasetId, "1.0.0");
    const expiresAt = new Date(Date.now() + 2500);
    const key = await createTestKey(org.id, { expiresAt });
    await warm(page("1.0.0"), key.secret);
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 10));
    for (const server of servers) {
      const res = await get(server, page("1.0.0"), key.secret);
      expect(res.status).toBe(401);
      expect(res.json.error.message).toContain("expired");
    }
  });

  it("keeps recording a key's last use, at most once a minute, off the request's path", async () => {
    const { key } = await holder();
    const lastUsed = async () =>
      (await sql()<{ at: Date | null }[]>`select last_used_at as at from api_keys where id = ${key.id}`)[0]!.at;
    const before = Date.now();
    expect((await get(servers[0]!, page("1.0.0"), key.secret)).status).toBe(200);
    await eventually(async () => (await lastUsed()) !== null, 2000, "last_used_at is written");
    const first = (await lastUsed())!.getTime();
    expect(first).toBeGreaterThanOrEqual(before - 1000);
    for (let i = 0; i < 3; i++) await get(servers[0]!, page("1.0.0"), key.secret);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await lastUsed())!.getTime()).toBe(first);
  });
});

describe("with the notification channel cut", () => {
  it("reads the database on every request until it listens again, then caches again", async () => {
    const { key } = await holder();
    const unnoticed = await holder();
    await warm(page("1.0.0"), key.secret);
    await warm(page("1.0.0"), unnoticed.key.secret);
    const lost = servers.map((s) => count(s.output(), "api cache: not listening"));
    const back = servers.map((s) => count(s.output(), "api cache: listening again"));

    const [killed] = await sql()<{ n: number }[]>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`;
    expect(killed!.n).toBeGreaterThanOrEqual(2);
    await eventually(
      () => servers.every((s, i) => count(s.output(), "api cache: not listening") > lost[i]!),
      2000,
      "both instances log the outage",
    );

    // A revocation nobody is told about: only an instance reading the database can see it.
    await writeUnnoticed((tx) => tx`update api_keys set revoked_at = now() where id = ${unnoticed.key.id}`);
    for (const server of servers) {
      expect((await get(server, page("1.0.0"), unnoticed.key.secret)).status).toBe(401);
      const ok = await get(server, page("1.0.0"), key.secret);
      expect(ok.status).toBe(200);
      expect(ok.json.episodes).toHaveLength(5);
    }
    // All of that happened during the outage, before either instance listened again.
    expect(servers.map((s) => count(s.output(), "api cache: listening again"))).toEqual(back);
    expect(servers.map((s) => count(s.output(), "api cache: not listening"))).toEqual(lost.map((n) => n + 1));

    await eventually(
      () => servers.every((s, i) => count(s.output(), "api cache: listening again") > back[i]!),
      15_000,
      "both instances listen again",
    );
    // Caching is back: an unnoticed revocation is not seen (the key's row is served from memory) ...
    const cached = await holder();
    await warm(page("1.0.0"), cached.key.secret);
    await writeUnnoticed((tx) => tx`update api_keys set revoked_at = now() where id = ${cached.key.id}`);
    for (const server of servers) expect((await get(server, page("1.0.0"), cached.key.secret)).status).toBe(200);
    // ... until any notified change flushes it.
    await sql()`update api_keys set name = 'renamed' where id = ${cached.key.id}`;
    expect(await secondsUntilEveryInstanceAnswers(page("1.0.0"), cached.key.secret, 401)).toBeLessThan(1);
  });
});

describe("cached answers", () => {
  let uncached: AppServer;
  beforeAll(async () => {
    uncached = await startAppServer({ DATABASE_URL: iso.url, API_CACHE_MB: "0" });
  }, 120_000);
  afterAll(() => uncached?.stop());

  it("are byte for byte the answers of an instance without a cache, for every catalog read", async () => {
    const { key } = await holder();
    const first = await get(servers[0]!, page("1.0.0"), key.secret);
    const paths = [
      "/api/v1/datasets",
      `/api/v1/datasets/${datasetId}/versions`,
      `/api/v1/datasets/${datasetId}/versions?limit=1`,
      `/api/v1/datasets/${datasetId}/versions/1.0.0/manifest`,
      page("1.0.0"),
      page("1.0.0", "&outcome=success"),
      page("1.0.0", `&cursor=${encodeURIComponent(first.json.next_cursor)}`),
      page("2.0.0"),
      `/api/v1/episodes/${episodeId}/annotations`,
      `/api/v1/episodes/${episodeId}/annotations?version=1.0.0&limit=1`,
    ];
    for (const path of paths) {
      const [miss, hit, other, direct] = [
        await get(servers[0]!, path, key.secret),
        await get(servers[0]!, path, key.secret),
        await get(servers[1]!, path, key.secret),
        await get(uncached, path, key.secret),
      ];
      expect(direct.status, path).toBe(200);
      for (const res of [miss, hit, other]) {
        expect(res.text, path).toBe(direct.text);
        expect(res.headers.get("etag"), path).toBe(direct.headers.get("etag"));
        expect(res.headers.get("cache-control"), path).toBe(direct.headers.get("cache-control"));
      }
    }
  });

  it("a small manifest whole has the bytes of the same manifest streamed", async () => {
    const { key } = await holder();
    const principal = {
      kind: "api_key" as const,
      keyId: key.id,
      keyPrefix: key.prefix,
      organizationId: (await sql()<{ o: string }[]>`select organization_id as o from api_keys where id = ${key.id}`)[0]!
        .o,
      narrowed: false,
    };
    const manifest = await getManifest({ ...iso.operator, principal }, { datasetId, version: "1.0.0" });
    const streamed = await streamJsonObject(manifest.head, "files", manifest.files, "req_test").text();
    expect(manifest.whole).not.toBeNull();
    expect(Buffer.from(jsonBody(await manifest.whole!.read()).bytes).toString("utf8")).toBe(streamed);
  });

  it("are never handed to a key that may not read them, whatever cursor it brings", async () => {
    // Key `both` fills the caches with pages of both versions; key `v1` holds 1.0.0 only.
    const both = await holder();
    const org = await createTestOrg();
    await grant(org.id, datasetId, "1.0.0");
    const v1 = await createTestKey(org.id);
    const outsider = await createTestKey((await createTestOrg()).id);
    const second = await get(servers[0]!, page("2.0.0"), both.key.secret);
    const cursor = encodeURIComponent(second.json.next_cursor);
    await warm(page("2.0.0", `&cursor=${cursor}`), both.key.secret);
    for (const server of servers) {
      // The version it may not read: 403 before any cache is consulted, cursor or not.
      expect((await get(server, page("2.0.0", `&cursor=${cursor}`), v1.secret)).json.error.code).toBe(
        "version_not_licensed",
      );
      // Its own version with the other version's cursor: refused, never the other version's page.
      expect((await get(server, page("1.0.0", `&cursor=${cursor}`), v1.secret)).json.error.code).toBe("invalid_cursor");
      // A key of another organisation: the dataset does not exist for it.
      expect((await get(server, page("2.0.0", `&cursor=${cursor}`), outsider.secret)).status).toBe(404);
      expect((await get(server, `/api/v1/episodes/${episodeId}/annotations?version=2.0.0`, v1.secret)).status).toBe(
        403,
      );
      // And its lists are its own: the list cached for `both` names both versions, v1's only one.
      expect(
        (await get(server, "/api/v1/datasets", both.key.secret)).json.datasets.find(
          (d: { dataset_id: string }) => d.dataset_id === datasetId,
        ).licensed_versions,
      ).toEqual(["2.0.0", "1.0.0"]);
      expect(
        (await get(server, "/api/v1/datasets", v1.secret)).json.datasets.find(
          (d: { dataset_id: string }) => d.dataset_id === datasetId,
        ).licensed_versions,
      ).toEqual(["1.0.0"]);
      const versions = await get(server, `/api/v1/datasets/${datasetId}/versions`, v1.secret);
      expect(versions.json.versions.map((v: { licensed: boolean }) => v.licensed)).toEqual([false, true]);
    }
  });
});

describe("conditional requests", () => {
  it("answer 304 without a body to a matching If-None-Match (one tag, a list, a weak tag, *), still counting the request", async () => {
    const { key } = await holder();
    const ok = await get(servers[0]!, page("1.0.0"), key.secret);
    const etag = ok.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(ok.headers.get("cache-control")).toBe("private, no-cache");
    // Next adds its own (rsc, Accept-Encoding, ...) to the list.
    expect(ok.headers.get("vary")?.split(/, */)).toContain("Authorization");
    let remaining = Number(ok.headers.get("ratelimit-remaining"));
    for (const field of [etag, `"other", ${etag}`, `W/${etag}`, `"x,y" , W/"z",${etag}`, "*"]) {
      const res = await get(servers[0]!, page("1.0.0"), key.secret, { "if-none-match": field });
      expect(res.status, field).toBe(304);
      expect(res.text).toBe("");
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("cache-control")).toBe("private, no-cache");
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      expect(Number(res.headers.get("ratelimit-remaining"))).toBe(--remaining);
    }
    for (const field of ['"other"', etag.slice(1, -1), `${etag} garbage`, ""]) {
      const res = await get(servers[0]!, page("1.0.0"), key.secret, { "if-none-match": field });
      expect(res.status, field).toBe(200);
      expect(res.text).toBe(ok.text);
    }
    // The same page from the other instance has the same validator.
    expect((await get(servers[1]!, page("1.0.0"), key.secret, { "if-none-match": etag })).status).toBe(304);
  });

  it("a changed licence changes the answer, never a stale 304; a key that may not read it gets its error", async () => {
    const { org, key } = await holder();
    const before = await get(servers[0]!, "/api/v1/datasets", key.secret);
    expect(before.headers.get("cache-control")).toBe("private, no-cache");
    const etag = before.headers.get("etag")!;
    for (const server of servers)
      expect((await get(server, "/api/v1/datasets", key.secret, { "if-none-match": etag })).status).toBe(304);
    const pageEtag = (await get(servers[0]!, page("2.0.0"), key.secret)).headers.get("etag")!;

    const result = await callAction(
      servers[0]!.url,
      "revokeLicenceAction",
      { organizationId: org.id, datasetId, version: "2.0.0" },
      adminCookie,
    );
    expect(result).toMatchObject({ ok: true });
    await eventually(
      async () =>
        (
          await Promise.all(servers.map((s) => get(s, "/api/v1/datasets", key.secret, { "if-none-match": etag })))
        ).every((r) => r.status === 200),
      1000,
      "both instances answer 200",
    );
    for (const server of servers) {
      const after = await get(server, "/api/v1/datasets", key.secret, { "if-none-match": etag });
      expect(after.headers.get("etag")).not.toBe(etag);
      expect(
        after.json.datasets.find((d: { dataset_id: string }) => d.dataset_id === datasetId).licensed_versions,
      ).toEqual(["1.0.0"]);
      // The page's validator still matches its bytes, but the key may no longer read it.
      const denied = await get(server, page("2.0.0"), key.secret, { "if-none-match": pageEtag });
      expect(denied.status).toBe(403);
      expect(denied.headers.get("cache-control")).toBe("no-store");
      expect(denied.headers.get("etag")).toBeNull();
    }
  });
});

describe("withdrawal with caches in two instances", () => {
  it("a withdrawal by das-admin in another process leaves both instances' cached answers within a second", async () => {
    // A dataset of its own: the withdrawal must not change what the other tests read.
    const own = randomEpisodes(4, 2626);
    const ownId = uniqueId("ds");
    const dir = writeImportDir(ownId, {
      version: "1.0.0",
      episodes: own,
      files: own.map((e) => ({
        path: `${e.episode_id}/cam.mp4`,
        episode_id: e.episode_id,
        stream: "cam",
        size_bytes: 10,
        sha256: "b".repeat(64),
      })),
    });
    try {
      await importVersion(iso.db.$client, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const org = await createTestOrg();
    await grant(org.id, ownId, "1.0.0");
    const key = (await createTestKey(org.id)).secret;
    const withdrawn = own[1]!.episode_id;
    const episodesPath = `/api/v1/datasets/${ownId}/versions/1.0.0/episodes`;
    const annotationsPath = `/api/v1/episodes/${withdrawn}/annotations`;
    await warm(episodesPath, key);
    await warm(`/api/v1/datasets/${ownId}/versions/1.0.0/manifest`, key);
    await warm(annotationsPath, key);
    // A released version's pages change with a withdrawal: a client may keep them, but must ask
    // again before using them (no-cache), with the validator it holds.
    const held = new Map<string, string>();
    for (const path of [episodesPath, `/api/v1/datasets/${ownId}/versions/1.0.0/manifest`]) {
      const res = await get(servers[0]!, path, key);
      expect(res.headers.get("cache-control"), path).toBe("private, no-cache");
      held.set(path, res.headers.get("etag")!);
    }

    const run = await admin.run(["withdraw", "--episodes", withdrawn, "--reason", "consent withdrawn"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("Withdrew 1 episode");
    expect(await secondsUntilEveryInstanceAnswers(annotationsPath, key, 410)).toBeLessThan(1);
    for (const server of servers) {
      const listed = await get(server, episodesPath, key);
      expect(listed.json.total).toBe(3);
      expect(listed.json.episodes.map((e: { episode_id: string }) => e.episode_id)).not.toContain(withdrawn);
      const manifest = await get(server, `/api/v1/datasets/${ownId}/versions/1.0.0/manifest`, key);
      expect(manifest.json.episode_count).toBe(3);
      expect(manifest.json.files.map((f: { episode_id: string }) => f.episode_id)).not.toContain(withdrawn);
      // Asking again with what it held gets the new page, not a 304.
      for (const [path, etag] of held)
        expect((await get(server, path, key, { "if-none-match": etag })).status).toBe(200);
    }
  });
});
