import { beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/[[...path]]/route";
import { GET as episodesGET } from "@/app/api/[[...path]]/route";
import { GET as manifestGET } from "@/app/api/[[...path]]/route";
import { GET as annotationsGET } from "@/app/api/[[...path]]/route";
import { revokeLicence } from "@/lib/admin/licences";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
  type TestVersion,
} from "@/lib/testing/fixtures";
import { call, type CallResult } from "@/lib/testing/http";
import type { RouteHandler } from "@/lib/http/route";
import { expectError, expectIndistinguishable, expectOk, tamperedCursors, walkPages } from "@/lib/testing/expect-api";

const list = (dataset: string, query: Record<string, string | number> = {}, withKey = key) =>
  call(
    GET,
    `/api/v1/datasets/${dataset}/versions?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`,
    {
      key: withKey,
      params: { id: dataset },
    },
  );

let key: string;
let datasetId: string;
let otherDatasetId: string;

// Imported out of order; each version has its own release time, episode count and changelog.
const VERSIONS: (TestVersion & { licensed: boolean })[] = [
  {
    version: "1.9.0",
    released_at: "2025-09-01T12:00:00Z",
    licensed: true,
    episodes: randomEpisodes(4, 1),
    changelog: [
      { type: "fixed", description: "Joint angles of episode 12 were in degrees" },
      { type: "added", description: "A wrist camera stream" },
    ],
  },
  {
    version: "1.10.0",
    released_at: "2025-10-15T08:30:00.250Z",
    licensed: false,
    episodes: randomEpisodes(5, 2),
    changelog: [
      { type: "security", description: "Faces blurred in the overhead stream" },
      { type: "deprecated", description: "The depth stream; it goes in 2.0.0" },
      { type: "changed", description: "Outcome labels reviewed" },
    ],
  },
  {
    version: "1.2.0",
    released_at: "2025-02-01T00:00:00Z",
    licensed: true,
    episodes: randomEpisodes(2, 3),
    changelog: [],
  },
  {
    version: "2.0.0",
    released_at: "2026-01-01T00:00:00+02:00",
    licensed: true,
    episodes: randomEpisodes(7, 4),
    changelog: [{ type: "removed", description: "The depth stream" }],
  },
  {
    version: "0.9.1",
    released_at: "2024-12-24T18:00:00Z",
    licensed: false,
    episodes: randomEpisodes(1, 5),
    changelog: [{ type: "added", description: "First release" }],
  },
];

const NEWEST_FIRST = ["2.0.0", "1.10.0", "1.9.0", "1.2.0", "0.9.1"];

const expectedVersions = () =>
  NEWEST_FIRST.map((name) => {
    const v = VERSIONS.find((x) => x.version === name)!;
    return {
      version: v.version,
      licensed: v.licensed,
      released_at: new Date(v.released_at!).toISOString(),
      episode_count: v.episodes.length,
      changelog: v.changelog,
    };
  });

beforeAll(async () => {
  const org = await createTestOrg();
  datasetId = await importTestDataset(VERSIONS);
  otherDatasetId = await importTestDataset([{ version: "1.0.0", episodes: randomEpisodes(2, 6) }]);
  for (const v of VERSIONS) if (v.licensed) await grant(org.id, datasetId, v.version);
  await grant(org.id, otherDatasetId, "1.0.0");
  key = (await createTestKey(org.id)).secret;
});

describe("GET /api/v1/datasets/{id}/versions", () => {
  it("lists every released version newest first by semver, with licence flags, release times, counts and changelogs", async () => {
    const res = await list(datasetId);
    expectOk(res);
    expect(Object.keys(res.json)).toEqual(["dataset_id", "versions", "next_cursor"]);
    expect(res.json).toEqual({ dataset_id: datasetId, versions: expectedVersions(), next_cursor: null });
    for (const record of res.json.versions) {
      expect(Object.keys(record)).toEqual(["version", "licensed", "released_at", "episode_count", "changelog"]);
      for (const entry of record.changelog) expect(Object.keys(entry)).toEqual(["type", "description"]);
    }
  });

  it("keeps changelog entries in the order they were written", async () => {
    const res = await list(datasetId);
    const v110 = res.json.versions.find((v: { version: string }) => v.version === "1.10.0");
    expect(v110.changelog.map((c: { type: string }) => c.type)).toEqual(["security", "deprecated", "changed"]);
  });

  it.each([1, 2, 3, 4, 5, 50])("walks every version exactly once at limit %i", async (limit) => {
    const { items, pages } = await walkPages(
      (cursor) => list(datasetId, cursor ? { limit, cursor } : { limit }),
      "versions",
      limit,
    );
    expect(items).toEqual(expectedVersions());
    expect(pages).toHaveLength(Math.ceil(5 / limit));
    for (const page of pages) expect(page.json.dataset_id).toBe(datasetId);
  });

  describe("cursors", () => {
    let cursor: string;
    beforeAll(async () => {
      cursor = (await list(datasetId, { limit: 2 })).json.next_cursor;
    });

    it("continue after the last version served", async () => {
      const res = await list(datasetId, { limit: 2, cursor });
      expect(res.json.versions.map((v: { version: string }) => v.version)).toEqual(["1.9.0", "1.2.0"]);
    });

    it("refuse any alteration with 400 invalid_cursor", async () => {
      for (const bad of tamperedCursors(cursor))
        expectError(await list(datasetId, { limit: 2, cursor: bad }), 400, "invalid_cursor");
    });

    it("refuse a cursor made for another dataset", async () => {
      expectError(await list(otherDatasetId, { cursor }), 400, "invalid_cursor");
    });
  });

  it.each([
    [{ version: "1.2.0" }, "Unknown query parameter 'version'"],
    [{ licensed: "true" }, "Unknown query parameter 'licensed'"],
    [{ limit: 0 }, "limit"],
    [{ limit: 501 }, "limit"],
  ] as [Record<string, string | number>, string][])("refuses %j with 400 invalid_parameter", async (query, mention) => {
    const res = await list(datasetId, query);
    expectError(res, 400, "invalid_parameter");
    expect(res.json.error.message).toContain(mention);
  });
});

/**
 * Non-enumeration (licences are never hinted at): whatever the route, asking about a dataset (or
 * episode) that exists but is not licensed to the key gives the same answer as asking about one
 * that does not exist, byte for byte apart from request_id.
 */
describe("non-enumeration", () => {
  let unlicensed: { datasetId: string; episodeId: string };
  let revoked: { datasetId: string; episodeId: string };
  const missing = { datasetId: uniqueId("ds"), episodeId: uniqueId("ep") };
  let key404: string;

  beforeAll(async () => {
    const org = await createTestOrg();
    const stranger = await createTestOrg();
    const make = async () => {
      const episodes = randomEpisodes(2, 9);
      const files = [{ path: "README.md", size_bytes: 3, sha256: "c".repeat(64) }];
      const annotations = [{ episode_id: episodes[0]!.episode_id, label: "grasp", start_s: 0, end_s: 0.5 }];
      const id = await importTestDataset([{ version: "1.0.0", episodes, files, annotations }]);
      return { datasetId: id, episodeId: episodes[0]!.episode_id };
    };
    // Licensed to another organisation only: it exists, the key cannot see it.
    unlicensed = await make();
    await grant(stranger.id, unlicensed.datasetId, "1.0.0");
    // Once licensed to this organisation, then revoked.
    revoked = await make();
    await grant(org.id, revoked.datasetId, "1.0.0");
    await revokeLicence(operatorCtx(), { organizationId: org.id, datasetId: revoked.datasetId, version: "1.0.0" });
    // The key's organisation holds something, so it is not an empty key that gets 404 for everything.
    await grant(org.id, datasetId, "2.0.0");
    key404 = (await createTestKey(org.id)).secret;
  });

  type Case = [
    string,
    RouteHandler,
    (d: { datasetId: string; episodeId: string }) => { url: string; params: Record<string, string> },
  ];
  const cases: Case[] = [
    ["versions", GET, (d) => ({ url: `/api/v1/datasets/${d.datasetId}/versions`, params: { id: d.datasetId } })],
    [
      "versions with a limit",
      GET,
      (d) => ({ url: `/api/v1/datasets/${d.datasetId}/versions?limit=1`, params: { id: d.datasetId } }),
    ],
    [
      "manifest of an existing version",
      manifestGET,
      (d) => ({
        url: `/api/v1/datasets/${d.datasetId}/versions/1.0.0/manifest`,
        params: { id: d.datasetId, version: "1.0.0" },
      }),
    ],
    [
      "manifest of an unknown version",
      manifestGET,
      (d) => ({
        url: `/api/v1/datasets/${d.datasetId}/versions/7.7.7/manifest`,
        params: { id: d.datasetId, version: "7.7.7" },
      }),
    ],
    [
      "episodes of an existing version",
      episodesGET,
      (d) => ({
        url: `/api/v1/datasets/${d.datasetId}/versions/1.0.0/episodes`,
        params: { id: d.datasetId, version: "1.0.0" },
      }),
    ],
    [
      "episodes, filtered",
      episodesGET,
      (d) => ({
        url: `/api/v1/datasets/${d.datasetId}/versions/1.0.0/episodes?outcome=failure&limit=1`,
        params: { id: d.datasetId, version: "1.0.0" },
      }),
    ],
    [
      "episodes of an unknown version",
      episodesGET,
      (d) => ({
        url: `/api/v1/datasets/${d.datasetId}/versions/7.7.7/episodes`,
        params: { id: d.datasetId, version: "7.7.7" },
      }),
    ],
    [
      "annotations",
      annotationsGET,
      (d) => ({ url: `/api/v1/episodes/${d.episodeId}/annotations`, params: { episodeId: d.episodeId } }),
    ],
    [
      "annotations, pinned",
      annotationsGET,
      (d) => ({ url: `/api/v1/episodes/${d.episodeId}/annotations?version=1.0.0`, params: { episodeId: d.episodeId } }),
    ],
  ];

  it.each(cases)("%s: an unlicensed, a revoked and a missing dataset get the same 404", async (_, handler, target) => {
    const ask = (d: { datasetId: string; episodeId: string }): Promise<CallResult> => {
      const { url, params } = target(d);
      return call(handler, url, { key: key404, params });
    };
    const absent = await ask(missing);
    expectError(absent, 404, "not_found");
    for (const d of [unlicensed, revoked]) {
      const res = await ask(d);
      expectError(res, 404, "not_found");
      expectIndistinguishable(res, absent);
      expect(res.text).not.toContain(d.datasetId);
      expect(res.text).not.toContain(d.episodeId);
    }
  });

  it("answers the same requests with 200 for a key that holds the licence", async () => {
    const org = await createTestOrg();
    await grant(org.id, unlicensed.datasetId, "1.0.0");
    const holder = (await createTestKey(org.id)).secret;
    for (const [name, handler, target] of cases.filter(([name]) => !name.includes("unknown version"))) {
      const { url, params } = target(unlicensed);
      const res = await call(handler, url, { key: holder, params });
      expect(res.status, `${name}: ${res.text}`).toBe(200);
    }
  });
});
