import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "@/lib/admin/organizations";
import { grantLicence } from "@/lib/admin/licences";
import { issueKey } from "@/lib/admin/keys";
import { addTerms } from "@/lib/admin/terms";
import { importVersion } from "@/lib/catalog/import/import-version";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import { randomEpisodes, uniqueId, writeImportDir, type TestVersion } from "@/lib/testing/fixtures";
import { randomIp, type CallResult } from "@/lib/testing/http";
import { assertMatchesContract } from "@/lib/testing/contract";
import { das } from "@/lib/testing/pull-fixtures";

// A licence's end as two `next start` instances meet it, each holding the licence in its cache:
// nothing runs at the end time, and nothing notifies them; each compares the cached term with its
// clock at every request. On a database of its own, so that no other suite's writes flush the caches.

let iso: IsolatedDb;
let servers: AppServer[];
let datasetId: string;
const episodes = randomEpisodes(3, 5151);
const episodeId = episodes[0]!.episode_id;

const versionOf = (version: string): TestVersion => ({
  version,
  episodes,
  annotations: [{ episode_id: episodeId, label: "reach", start_s: 0, end_s: 1 }],
  files: episodes.map((e) => ({
    path: `${e.episode_id}/cam.mp4`,
    episode_id: e.episode_id,
    stream: "cam",
    size_bytes: 10,
    sha256: "b".repeat(64),
  })),
});

async function get(server: AppServer, path: string, key: string): Promise<CallResult> {
  const res = await fetch(`${server.url}${path}`, {
    headers: { "x-forwarded-for": randomIp(), "x-forwarded-proto": "https", authorization: `Bearer ${key}` },
  });
  const text = await res.text();
  const result = { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
  assertMatchesContract({ method: "GET", url: new URL(path, server.url), result });
  return result;
}

async function eventually(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const listening = (server: AppServer) => server.output().includes("api cache: listening for invalidations");

beforeAll(async () => {
  iso = await createIsolatedDb("term");
  datasetId = uniqueId("ds");
  for (const v of [versionOf("1.0.0"), versionOf("2.0.0")]) {
    const dir = writeImportDir(datasetId, v);
    try {
      await importVersion(iso.db.$client, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const env = { DATABASE_URL: iso.url };
  servers = await Promise.all([startAppServer(env), startAppServer(env)]);
  const org = await createOrganization(iso.operator, { slug: uniqueId("org") });
  const key = await issueKey(iso.operator, { organizationId: org.id, name: "warm" });
  for (const server of servers) await get(server, "/api/v1/datasets", key.secret);
  await eventually(() => servers.every(listening), 15_000, "both instances listen for invalidations");
}, 180_000);

afterAll(async () => {
  await Promise.all((servers ?? []).map((s) => s.stop()));
  await iso?.drop();
});

describe("a licence that ends while two instances hold it in their caches", () => {
  it("is refused by both within a second of its end, with nothing running at that moment", async () => {
    const org = await createOrganization(iso.operator, { slug: uniqueId("org") });
    const endsAt = new Date(Date.now() + 4000);
    await grantLicence(iso.operator, { organizationId: org.id, datasetId, version: "1.0.0", endsAt });
    await grantLicence(iso.operator, { organizationId: org.id, datasetId, version: "2.0.0" });
    const key = (await issueKey(iso.operator, { organizationId: org.id, name: "term" })).secret;
    const manifest = `/api/v1/datasets/${datasetId}/versions/1.0.0/manifest`;
    const paths = [manifest, `/api/v1/datasets/${datasetId}/versions/1.0.0/episodes`, "/api/v1/licences"];
    for (const server of servers) for (const path of paths) expect((await get(server, path, key)).status).toBe(200);
    // The database now says the licence runs for another hour, without telling the instances: what
    // they answer at `endsAt` comes from the term they hold in memory, compared with their clock.
    await iso.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`update licences set ends_at = ${new Date(Date.now() + 3_600_000)} where organization_id = ${org.id} and ends_at is not null`;
    });
    for (const server of servers) expect((await get(server, manifest, key)).status).toBe(200);

    await new Promise((r) => setTimeout(r, Math.max(0, endsAt.getTime() - Date.now())));
    const pending = new Set(servers);
    while (pending.size) {
      for (const server of [...pending]) {
        const res = await get(server, manifest, key);
        if (res.status === 403) {
          expect(res.json.error.code).toBe("version_not_licensed");
          expect(res.json.error.message).toContain(`your licence ended on ${endsAt.toISOString()}`);
          pending.delete(server);
        }
      }
      if (pending.size && Date.now() - endsAt.getTime() > 1000)
        throw new Error(`${Date.now() - endsAt.getTime()} ms after the end an instance still serves the licence`);
    }
    const refusedWithin = Date.now() - endsAt.getTime();
    expect(refusedWithin).toBeLessThan(1000);
    for (const server of servers) {
      expect((await get(server, paths[1]!, key)).status).toBe(403);
      const licences = (await get(server, "/api/v1/licences", key)).json.licences;
      expect(licences.map((l: { version: string }) => l.version)).toEqual(["2.0.0"]);
    }
  });

  it("one that starts in the future is refused by both until then", async () => {
    const org = await createOrganization(iso.operator, { slug: uniqueId("org") });
    const startsAt = new Date(Date.now() + 3000);
    await grantLicence(iso.operator, { organizationId: org.id, datasetId, version: "1.0.0", startsAt });
    await grantLicence(iso.operator, { organizationId: org.id, datasetId, version: "2.0.0" });
    const key = (await issueKey(iso.operator, { organizationId: org.id, name: "future" })).secret;
    const manifest = `/api/v1/datasets/${datasetId}/versions/1.0.0/manifest`;
    for (const server of servers) {
      const res = await get(server, manifest, key);
      expect(res.status).toBe(403);
      expect(res.json.error.message).toContain(`your licence starts on ${startsAt.toISOString()}`);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, startsAt.getTime() - Date.now())));
    for (const server of servers) expect((await get(server, manifest, key)).status).toBe(200);
  });
});

describe("das licences", () => {
  it("prints the key's usable licences as a table and as JSON", async () => {
    const org = await createOrganization(iso.operator, { slug: uniqueId("org") });
    const terms = await addTerms(iso.operator, { title: "Kitchen DUA", body: `# DUA ${uniqueId("t")}\n` });
    const endsAt = new Date("2099-12-31T00:00:00Z");
    await grantLicence(iso.operator, {
      organizationId: org.id,
      datasetId,
      version: "1.0.0",
      endsAt,
      termsSha256: terms.document.sha256,
    });
    const key = (await issueKey(iso.operator, { organizationId: org.id, name: "cli" })).secret;
    const env = { DAS_API_URL: servers[0]!.url, DAS_API_KEY: key };
    const [tableRun, jsonRun] = await Promise.all([das(["licences"], env), das(["licences", "--json"], env)]);
    expect(tableRun.code, tableRun.stderr).toBe(0);
    expect(tableRun.stdout).toMatch(/^DATASET +VERSION +STARTS +ENDS +TERMS +TERMS SHA256\n/);
    expect(tableRun.stdout).toContain(datasetId);
    expect(tableRun.stdout).toContain("2099-12-31 00:00Z");
    expect(tableRun.stdout).toContain(terms.document.sha256);
    expect(JSON.parse(jsonRun.stdout)).toEqual([
      {
        dataset_id: datasetId,
        version: "1.0.0",
        starts_at: expect.any(String),
        ends_at: endsAt.toISOString(),
        terms: { title: "Kitchen DUA", sha256: terms.document.sha256 },
      },
    ]);
    const bare = await createOrganization(iso.operator, { slug: uniqueId("org") });
    const bareKey = (await issueKey(iso.operator, { organizationId: bare.id, name: "none" })).secret;
    const none = await das(["licences"], { ...env, DAS_API_KEY: bareKey });
    expect(none).toMatchObject({ code: 0, stdout: "", stderr: "Your key may use no licence now.\n" });
  });
});
