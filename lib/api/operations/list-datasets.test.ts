import { beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/[[...path]]/route";
import { GET as versionsGET } from "@/app/api/[[...path]]/route";
import { revokeLicence } from "@/lib/admin/licences";
import {
  byteOrder,
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import { call } from "@/lib/testing/http";
import { expectError, expectOk, tamperedCursors, walkPages } from "@/lib/testing/expect-api";

const list = (key: string, query: Record<string, string | number> = {}) =>
  call(GET, `/api/v1/datasets?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`, { key });

const version = (name: string, seed: number) => ({ version: name, episodes: randomEpisodes(2, seed) });

let key: string;
let startedAt: number;
// Ids chosen so that byte order differs from creation order and from a locale's order ('-' < '.' < '0' < '_' < 'a').
const prefix = uniqueId("ds");
const ids = {
  semver: `${prefix}_semver`,
  dash: `${prefix}-dash`,
  dot: `${prefix}.dot`,
  digit: `${prefix}0digit`,
  lower: `${prefix}a`,
};
const hidden = { unlicensed: `${prefix}-unlicensed`, otherOrg: `${prefix}-other-org` };

beforeAll(async () => {
  startedAt = Date.now();
  const org = await createTestOrg();
  const otherOrg = await createTestOrg();
  // Imported out of order; 2.0.0 stays unlicensed.
  await importTestDataset(
    [version("1.10.0", 1), version("1.2.0", 2), version("2.0.0", 3), version("1.9.0", 4)],
    ids.semver,
  );
  for (const [i, id] of [ids.lower, ids.digit, ids.dot, ids.dash].entries())
    await importTestDataset([version("0.1.0", 10 + i)], id);
  await importTestDataset([version("1.0.0", 20)], hidden.unlicensed);
  await importTestDataset([version("1.0.0", 21)], hidden.otherOrg);
  for (const v of ["1.2.0", "1.9.0", "1.10.0"]) await grant(org.id, ids.semver, v);
  for (const id of [ids.lower, ids.digit, ids.dot, ids.dash]) await grant(org.id, id, "0.1.0");
  await grant(otherOrg.id, hidden.otherOrg, "1.0.0");
  key = (await createTestKey(org.id)).secret;
});

describe("GET /api/v1/datasets", () => {
  it("lists exactly the datasets with a licensed version, in dataset_id byte order, with the record's fields", async () => {
    const res = await list(key);
    expectOk(res);
    expect(Object.keys(res.json)).toEqual(["datasets", "next_cursor"]);
    expect(res.json.next_cursor).toBeNull();
    const expectedOrder = Object.values(ids).sort(byteOrder);
    expect(expectedOrder).toEqual([ids.dash, ids.dot, ids.digit, ids.semver, ids.lower]);
    expect(res.json.datasets.map((d: { dataset_id: string }) => d.dataset_id)).toEqual(expectedOrder);
    for (const record of res.json.datasets) {
      expect(Object.keys(record)).toEqual([
        "dataset_id",
        "title",
        "description",
        "licensed_versions",
        "latest_licensed_version",
        "updated_at",
      ]);
      expect(record.title).toBe(`Dataset ${record.dataset_id}`);
      expect(record.description).toBe("test data");
      expect(new Date(record.updated_at).toISOString()).toBe(record.updated_at);
      expect(Date.parse(record.updated_at)).toBeGreaterThanOrEqual(startedAt - 5_000);
      expect(Date.parse(record.updated_at)).toBeLessThanOrEqual(Date.now() + 5_000);
    }
    expect(res.json.datasets.find((d: { dataset_id: string }) => d.dataset_id === ids.dot)).toMatchObject({
      licensed_versions: ["0.1.0"],
      latest_licensed_version: "0.1.0",
    });
  });

  it("lists licensed versions newest first by semver, not as text, and leaves unlicensed ones out", async () => {
    const res = await list(key);
    const record = res.json.datasets.find((d: { dataset_id: string }) => d.dataset_id === ids.semver);
    expect(record.licensed_versions).toEqual(["1.10.0", "1.9.0", "1.2.0"]);
    expect(record.latest_licensed_version).toBe("1.10.0");
  });

  it("lists nothing for an organisation without licences", async () => {
    const empty = await createTestOrg();
    const res = await list((await createTestKey(empty.id)).secret);
    expectOk(res);
    expect(res.json).toEqual({ datasets: [], next_cursor: null });
  });

  it("drops a dataset when its only licence is revoked, and a version when one of several is", async () => {
    const org = await createTestOrg();
    const single = await importTestDataset([version("1.0.0", 30)]);
    const several = await importTestDataset([version("1.0.0", 31), version("1.1.0", 32)]);
    await grant(org.id, single, "1.0.0");
    await grant(org.id, several, "1.0.0");
    await grant(org.id, several, "1.1.0");
    const orgKey = (await createTestKey(org.id)).secret;
    const shown = async () =>
      (await list(orgKey)).json.datasets.map((d: { dataset_id: string; licensed_versions: string[] }) => [
        d.dataset_id,
        d.licensed_versions,
      ]);
    const before = [
      [single, ["1.0.0"]],
      [several, ["1.1.0", "1.0.0"]],
    ].sort((a, b) => byteOrder(a[0] as string, b[0] as string));
    expect(await shown()).toEqual(before);
    await revokeLicence(operatorCtx(), { organizationId: org.id, datasetId: single, version: "1.0.0" });
    await revokeLicence(operatorCtx(), { organizationId: org.id, datasetId: several, version: "1.1.0" });
    expect(await shown()).toEqual([[several, ["1.0.0"]]]);
    const res = await list(orgKey);
    expect(res.json.datasets[0].latest_licensed_version).toBe("1.0.0");
  });

  it("shows a narrowed key only its scope, and nothing once the scoped licence is revoked (never the whole organisation)", async () => {
    const org = await createTestOrg();
    const inScope = await importTestDataset([version("1.0.0", 40), version("1.1.0", 41)]);
    const elsewhere = await importTestDataset([version("1.0.0", 42)]);
    await grant(org.id, inScope, "1.0.0");
    await grant(org.id, inScope, "1.1.0");
    await grant(org.id, elsewhere, "1.0.0");
    const narrowed = (await createTestKey(org.id, { scope: [{ datasetId: inScope, version: "1.0.0" }] })).secret;
    const before = await list(narrowed);
    expect(
      before.json.datasets.map((d: { dataset_id: string; licensed_versions: string[] }) => [
        d.dataset_id,
        d.licensed_versions,
      ]),
    ).toEqual([[inScope, ["1.0.0"]]]);
    await revokeLicence(operatorCtx(), { organizationId: org.id, datasetId: inScope, version: "1.0.0" });
    const after = await list(narrowed);
    expectOk(after);
    expect(after.json).toEqual({ datasets: [], next_cursor: null });
  });

  it.each([1, 2, 3, 4, 5, 6, 500])("walks every dataset exactly once at limit %i", async (limit) => {
    const all = (await list(key)).json.datasets;
    const { items, pages } = await walkPages(
      (cursor) => list(key, cursor ? { limit, cursor } : { limit }),
      "datasets",
      limit,
    );
    expect(items).toEqual(all);
    expect(items).toHaveLength(5);
    expect(pages).toHaveLength(Math.max(1, Math.ceil(5 / limit)));
  });

  it("defaults to 50 per page and caps limit at 500", async () => {
    expectError(await list(key, { limit: 501 }), 400, "invalid_parameter");
    expectError(await list(key, { limit: 0 }), 400, "invalid_parameter");
    expectOk(await list(key, { limit: 500 }));
  });

  describe("cursors", () => {
    let cursor: string;
    beforeAll(async () => {
      cursor = (await list(key, { limit: 2 })).json.next_cursor;
    });

    it("continue where the page ended", async () => {
      const res = await list(key, { limit: 2, cursor });
      expectOk(res);
      expect(res.json.datasets.map((d: { dataset_id: string }) => d.dataset_id)).toEqual([ids.digit, ids.semver]);
    });

    it("refuse any alteration with 400 invalid_cursor", async () => {
      for (const bad of tamperedCursors(cursor)) {
        const res = await list(key, { limit: 2, cursor: bad });
        expectError(res, 400, "invalid_cursor");
      }
    });

    it("refuse a cursor another endpoint issued", async () => {
      const versions = await call(versionsGET, `/api/v1/datasets/${ids.semver}/versions?limit=1`, {
        key,
        params: { id: ids.semver },
      });
      expect(typeof versions.json.next_cursor).toBe("string");
      expectError(await list(key, { cursor: versions.json.next_cursor }), 400, "invalid_cursor");
    });
  });

  describe("parameters", () => {
    it.each([
      [{ dataset_id: ids.dot }, "Unknown query parameter 'dataset_id'"],
      [{ licensed: "true" }, "Unknown query parameter 'licensed'"],
      [{ Limit: 2 }, "Unknown query parameter 'Limit'"],
      [{ limit: "two" }, "limit"],
      [{ cursor: "" }, "cursor"],
    ] as [Record<string, string | number>, string][])(
      "refuses %j with 400 invalid_parameter",
      async (query, mention) => {
        const res = await list(key, query);
        expectError(res, 400, "invalid_parameter");
        expect(res.json.error.message).toContain(mention);
      },
    );
  });
});
