import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { endLicence, grantLicence } from "@/lib/admin/licences";
import { addTerms } from "@/lib/admin/terms";
import { call, type CallResult } from "@/lib/testing/http";
import { expectError, expectOk } from "@/lib/testing/expect-api";
import {
  createTestKey,
  createTestOrg,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import * as api from "../../app/api/[[...path]]/route";

// A licence's term, decided at each request through the API's real handlers on a real database:
// nothing runs when a term begins or ends, so these tests only wait for the clock.

const sleepUntil = (at: Date) => new Promise((r) => setTimeout(r, Math.max(0, at.getTime() - Date.now()) + 50));
const sql = () => getDb().$client;

async function world() {
  const org = await createTestOrg();
  const episodes = randomEpisodes(3, 4242);
  const episodeId = episodes[0]!.episode_id;
  const version = (v: string) => ({
    version: v,
    episodes,
    annotations: [{ episode_id: episodeId, label: `span ${v}`, start_s: 0, end_s: 1 }],
    files: episodes.map((e) => ({
      path: `${e.episode_id}/cam.mp4`,
      episode_id: e.episode_id,
      stream: "cam",
      size_bytes: 10,
      sha256: "b".repeat(64),
    })),
  });
  const datasetId = await importTestDataset([version("1.0.0"), version("2.0.0")]);
  const key = (await createTestKey(org.id)).secret;
  return { org, datasetId, episodeId, key };
}

type World = Awaited<ReturnType<typeof world>>;

const get = (w: World, url: string) => call(api.GET, url, { key: w.key });
const post = (w: World, url: string, body: unknown) => call(api.POST, url, { key: w.key, method: "POST", body });

/** Every read and delivery of version `v` of the world's dataset. */
function everyUse(w: World, v: string): Promise<[string, CallResult][]> {
  const base = `/api/v1/datasets/${w.datasetId}/versions/${v}`;
  return Promise.all(
    (
      [
        ["manifest", () => get(w, `${base}/manifest`)],
        ["episodes", () => get(w, `${base}/episodes`)],
        ["annotations", () => get(w, `/api/v1/episodes/${w.episodeId}/annotations?version=${v}`)],
        ["download", () => post(w, "/api/v1/downloads", { dataset_id: w.datasetId, version: v })],
        ["preview", () => post(w, "/api/v1/previews", { episode_id: w.episodeId, version: v, streams: ["cam"] })],
      ] as const
    ).map(async ([name, send]) => [name, await send()] as [string, CallResult]),
  );
}

const disclosuresOf = async (organizationId: string) =>
  Number((await sql()`select count(*) from disclosures where organization_id = ${organizationId}`)[0]!.count);

describe("a licence's term", () => {
  it("an ended licence refuses every read and delivery at its end, says when it ended, and discloses nothing", async () => {
    const w = await world();
    const endsAt = new Date(Date.now() + 2500);
    await grantLicence(operatorCtx(), { organizationId: w.org.id, datasetId: w.datasetId, version: "1.0.0", endsAt });
    await grantLicence(operatorCtx(), { organizationId: w.org.id, datasetId: w.datasetId, version: "2.0.0" });
    for (const [name, res] of await everyUse(w, "1.0.0")) expect(res.status, name).toBeLessThan(300);
    const disclosed = await disclosuresOf(w.org.id);
    expect(disclosed).toBe(2); // the download and the preview

    await sleepUntil(endsAt);
    for (const [name, res] of await everyUse(w, "1.0.0")) {
      expectError(res, 403, "version_not_licensed");
      expect(res.json.error.message, name).toContain(`Version 1.0.0 of dataset '${w.datasetId}'`);
      expect(res.json.error.message, name).toContain(`your licence ended on ${endsAt.toISOString()}`);
    }
    expect(await disclosuresOf(w.org.id)).toBe(disclosed);
    // The newest usable version is still read without pinning; the versions list says which is licensed.
    const versions = await get(w, `/api/v1/datasets/${w.datasetId}/versions`);
    expect(versions.json.versions.map((v: { version: string; licensed: boolean }) => [v.version, v.licensed])).toEqual([
      ["2.0.0", true],
      ["1.0.0", false],
    ]);
    const annotations = await get(w, `/api/v1/episodes/${w.episodeId}/annotations`);
    expect(annotations.json.version).toBe("2.0.0");

    // With no usable version left the dataset is not found, exactly as one that does not exist.
    const end2 = new Date(Date.now() + 300);
    await endLicence(operatorCtx(), {
      organizationId: w.org.id,
      datasetId: w.datasetId,
      version: "2.0.0",
      endsAt: end2,
    });
    await sleepUntil(end2);
    expectError(await get(w, `/api/v1/datasets/${w.datasetId}/versions`), 404, "not_found");
    expectError(await get(w, `/api/v1/datasets/${w.datasetId}/versions/2.0.0/manifest`), 404, "not_found");
    expectError(await get(w, `/api/v1/episodes/${w.episodeId}/annotations`), 404, "not_found");
    expect((await get(w, "/api/v1/datasets")).json.datasets).toEqual([]);
    expect((await get(w, "/api/v1/licences")).json.licences).toEqual([]);
    expect(await disclosuresOf(w.org.id)).toBe(disclosed);

    // Extended after it ended: usable again from the next request.
    await endLicence(operatorCtx(), {
      organizationId: w.org.id,
      datasetId: w.datasetId,
      version: "1.0.0",
      endsAt: new Date(Date.now() + 3_600_000),
    });
    expectOk(await get(w, `/api/v1/datasets/${w.datasetId}/versions/1.0.0/manifest`));
  });

  it("a licence that starts in the future is refused until then, saying when it starts", async () => {
    const w = await world();
    const startsAt = new Date(Date.now() + 2500);
    await grantLicence(operatorCtx(), { organizationId: w.org.id, datasetId: w.datasetId, version: "1.0.0", startsAt });
    // Its only licence has not begun: the dataset is not found at all.
    expectError(await get(w, `/api/v1/datasets/${w.datasetId}/versions/1.0.0/manifest`), 404, "not_found");
    expect((await get(w, "/api/v1/datasets")).json.datasets).toEqual([]);
    await grantLicence(operatorCtx(), { organizationId: w.org.id, datasetId: w.datasetId, version: "2.0.0" });
    for (const [name, res] of await everyUse(w, "1.0.0")) {
      expectError(res, 403, "version_not_licensed");
      expect(res.json.error.message, name).toContain(`your licence starts on ${startsAt.toISOString()}`);
    }
    expect(await disclosuresOf(w.org.id)).toBe(0);
    await sleepUntil(startsAt);
    for (const [name, res] of await everyUse(w, "1.0.0")) expect(res.status, name).toBeLessThan(300);
  });

  it("a term must end after it starts", async () => {
    const w = await world();
    const startsAt = new Date(Date.now() + 86_400_000);
    await expect(
      grantLicence(operatorCtx(), {
        organizationId: w.org.id,
        datasetId: w.datasetId,
        version: "1.0.0",
        startsAt,
        endsAt: new Date(startsAt.getTime() - 1),
      }),
    ).rejects.toMatchObject({ code: "invalid_parameter" });
  });
});

describe("GET /api/v1/licences", () => {
  it("lists the usable licences with their terms, one cursor page at a time", async () => {
    const w = await world();
    const other = await importTestDataset([{ version: "1.0.0", episodes: randomEpisodes(1, 4243) }]);
    const terms = await addTerms(operatorCtx(), {
      title: "Kitchen agreement",
      body: `# Agreement ${uniqueId("t")}\n\nUse for research only.\n`,
      datasetId: w.datasetId,
    });
    const endsAt = new Date(Date.now() + 86_400_000);
    const grantTo = (datasetId: string, version: string, extra = {}) =>
      grantLicence(operatorCtx(), { organizationId: w.org.id, datasetId, version, ...extra });
    await grantTo(w.datasetId, "1.0.0", { endsAt, termsSha256: terms.document.sha256 });
    await grantTo(w.datasetId, "2.0.0");
    await grantTo(other, "1.0.0", { startsAt: new Date(Date.now() + 86_400_000) }); // not yet: absent
    // Terms for one dataset cannot be named by a licence to another.
    await expect(
      grantLicence(operatorCtx(), {
        organizationId: (await createTestOrg()).id,
        datasetId: other,
        version: "1.0.0",
        termsSha256: terms.document.sha256,
      }),
    ).rejects.toMatchObject({ code: "invalid_parameter" });

    const seen: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(w, `/api/v1/licences?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expectOk(res);
      expect(res.json.licences).toHaveLength(1);
      seen.push(...res.json.licences);
      cursor = res.json.next_cursor;
      pages++;
    } while (cursor && pages < 5);
    expect(pages).toBe(2);
    expect(seen).toEqual([
      { dataset_id: w.datasetId, version: "2.0.0", starts_at: expect.any(String), ends_at: null, terms: null },
      {
        dataset_id: w.datasetId,
        version: "1.0.0",
        starts_at: expect.any(String),
        ends_at: endsAt.toISOString(),
        terms: { title: "Kitchen agreement", sha256: terms.document.sha256 },
      },
    ]);
    expectError(await get(w, "/api/v1/licences?cursor=forged.cursor"), 400, "invalid_cursor");
  });
});

describe("terms documents", () => {
  it("are keyed by the SHA-256 of their text and cannot be changed or removed", async () => {
    const body = `# Terms ${uniqueId("t")}\n\nNo redistribution.\n`;
    const added = await addTerms(operatorCtx(), { title: "Agreement", body });
    const { createHash } = await import("node:crypto");
    expect(added.document.sha256).toBe(createHash("sha256").update(body, "utf8").digest("hex"));
    expect(added.created).toBe(true);
    expect((await addTerms(operatorCtx(), { title: "Another title", body })).created).toBe(false);
    const sha = added.document.sha256;
    await expect(sql()`update terms_documents set title = 'changed' where sha256 = ${sha}`).rejects.toThrow(
      /immutable: UPDATE/,
    );
    await expect(sql()`delete from terms_documents where sha256 = ${sha}`).rejects.toThrow(/immutable: DELETE/);
    await expect(
      sql()`insert into terms_documents (sha256, title, body, created_by) values (${"0".repeat(64)}, 'x', 'y', 'me')`,
    ).rejects.toThrow(/terms_documents_sha256_of_body/);
    const [row] = await sql()`select title, body from terms_documents where sha256 = ${sha}`;
    expect(row).toEqual({ title: "Agreement", body });
  });
});
