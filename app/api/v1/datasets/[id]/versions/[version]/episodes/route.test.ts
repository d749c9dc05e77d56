import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { GET } from "@/app/api/[[...path]]/route";
import {
  byteOrder,
  createTestKey,
  createTestOrg,
  ENVIRONMENTS,
  grant,
  importTestDataset,
  OUTCOMES,
  randomEpisodes,
} from "@/lib/testing/fixtures";
import { call } from "@/lib/testing/http";
import type { EpisodeLine } from "@/lib/catalog/import/records";

type Filter = { outcome?: string; environment?: string };

let datasetId: string;
let otherDatasetId: string;
let key: string;
const episodes = randomEpisodes(420, 7);

function url(dataset: string, version: string, query: Record<string, string | number | undefined>) {
  const search = new URLSearchParams(
    Object.entries(query)
      .filter((e): e is [string, string] => e[1] !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );
  return `/api/v1/datasets/${dataset}/versions/${version}/episodes?${search}`;
}

const list = (query: Record<string, string | number | undefined>, version = "1.0.0", dataset = datasetId) =>
  call(GET, url(dataset, version, query), { key, params: { id: dataset, version } });

const oracle = (filter: Filter) =>
  episodes
    .filter(
      (e) =>
        (filter.outcome === undefined || e.outcome === filter.outcome) &&
        (filter.environment === undefined || e.environment === filter.environment),
    )
    .sort((a, b) => byteOrder(a.episode_id, b.episode_id));

async function walk(filter: Filter, limit: number): Promise<{ seen: EpisodeLine[]; totals: number[]; pages: number }> {
  const seen: EpisodeLine[] = [];
  const totals: number[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await list({ ...filter, limit, cursor });
    expect(res.status, res.text).toBe(200);
    expect(res.json.episodes.length).toBeLessThanOrEqual(limit);
    seen.push(...res.json.episodes);
    totals.push(res.json.total);
    cursor = res.json.next_cursor ?? undefined;
    pages++;
  } while (cursor);
  return { seen, totals, pages };
}

beforeAll(async () => {
  const org = await createTestOrg();
  datasetId = await importTestDataset([
    { version: "1.0.0", episodes },
    { version: "1.1.0", episodes: episodes.slice(0, 30) },
    { version: "2.0.0", episodes: episodes.slice(0, 5) },
  ]);
  otherDatasetId = await importTestDataset([{ version: "1.0.0", episodes: randomEpisodes(20, 8) }]);
  await grant(org.id, datasetId, "1.0.0");
  await grant(org.id, datasetId, "1.1.0");
  await grant(org.id, otherDatasetId, "1.0.0");
  key = (await createTestKey(org.id)).secret;
});

describe("GET /api/v1/datasets/{id}/versions/{version}/episodes", () => {
  it("returns the spec's envelope and exactly the spec's episode fields", async () => {
    const res = await list({ limit: 3 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(["dataset_id", "version", "total", "episodes", "next_cursor"]);
    expect(res.json).toMatchObject({ dataset_id: datasetId, version: "1.0.0", total: episodes.length });
    expect(Object.keys(res.json.episodes[0]).sort()).toEqual([
      "contributor",
      "duration_s",
      "environment",
      "episode_id",
      "has_recovery",
      "outcome",
      "streams",
      "task",
    ]);
    expect(res.json.episodes[0]).toEqual(oracle({})[0]);
  });

  it("defaults to 50 per page", async () => {
    const res = await list({});
    expect(res.json.episodes).toHaveLength(50);
    expect(typeof res.json.next_cursor).toBe("string");
  });

  it.each([
    [{}, 7],
    [{}, 500],
    [{ outcome: "failure" }, 13],
    [{ environment: "outdoor yard" }, 50],
    [{ outcome: "success", environment: "lab" }, 4],
    [{ outcome: "no-such-outcome" }, 10],
  ] as [Filter, number][])(
    "walks %j at limit %i: every match exactly once, in byte order, with the filtered total",
    async (filter, limit) => {
      const expected = oracle(filter);
      const { seen, totals, pages } = await walk(filter, limit);
      expect(seen).toEqual(expected);
      expect(new Set(seen.map((e) => e.episode_id)).size).toBe(seen.length);
      expect(new Set(totals)).toEqual(new Set([expected.length]));
      expect(pages).toBe(Math.max(1, Math.ceil(expected.length / limit)));
    },
  );

  it("matches the brute-force oracle for any filter and page size", async () => {
    const value = (pool: readonly string[]) => fc.option(fc.constantFrom(...pool, "absent"), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(
        value(OUTCOMES),
        value(ENVIRONMENTS),
        fc.integer({ min: 1, max: 500 }),
        async (outcome, environment, limit) => {
          const res = await list({ outcome, environment, limit });
          const expected = oracle({ outcome, environment });
          expect(res.status).toBe(200);
          expect(res.json.total).toBe(expected.length);
          expect(res.json.episodes).toEqual(expected.slice(0, limit));
          expect(res.json.next_cursor === null).toBe(expected.length <= limit);
        },
      ),
      { numRuns: 60 },
    );
  });

  describe("cursors", () => {
    let cursor: string;
    beforeAll(async () => {
      cursor = (await list({ outcome: "failure", limit: 5 })).json.next_cursor;
    });

    const refused = async (query: Record<string, string | number | undefined>, version?: string, dataset?: string) => {
      const res = await list(query, version, dataset);
      expect(res.status, res.text).toBe(400);
      expect(res.json.error.code).toBe("invalid_cursor");
    };

    it("continue only the query that made them", async () => {
      const res = await list({ outcome: "failure", limit: 5, cursor });
      expect(res.json.episodes[0]).toEqual(oracle({ outcome: "failure" })[5]);
      await refused({ outcome: "success", limit: 5, cursor });
      await refused({ limit: 5, cursor });
      await refused({ outcome: "failure", environment: "lab", cursor });
      await refused({ outcome: "failure", cursor }, "1.1.0");
      await refused({ outcome: "failure", cursor }, "1.0.0", otherDatasetId);
    });

    it("may change page size mid-walk", async () => {
      const res = await list({ outcome: "failure", limit: 2, cursor });
      expect(res.status).toBe(200);
      expect(res.json.episodes).toEqual(oracle({ outcome: "failure" }).slice(5, 7));
    });

    it("refuse forged, truncated and altered cursors", async () => {
      const [payload, mac] = cursor.split(".") as [string, string];
      const forgedPayload = Buffer.from(
        JSON.stringify({ k: ["~"], q: JSON.parse(Buffer.from(payload, "base64url").toString()).q }),
      ).toString("base64url");
      for (const bad of [
        cursor.slice(0, -1),
        cursor.slice(0, 10),
        payload,
        `${forgedPayload}.${mac}`,
        `${payload}.${mac.slice(0, -2)}AA`,
        `${cursor}.x`,
        "not-a-cursor",
        "....",
        "%00",
      ]) {
        await refused({ outcome: "failure", cursor: bad });
      }
    });

    it("refuse random strings", async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ minLength: 1, maxLength: 200 }), async (bad) => {
          const res = await list({ cursor: bad });
          expect(res.status).toBe(400);
          expect(["invalid_cursor", "invalid_parameter"]).toContain(res.json.error.code);
        }),
        { numRuns: 100 },
      );
    });
  });

  describe("parameters", () => {
    it.each([
      [{ outcomes: "failure" }, "Unknown query parameter 'outcomes'"],
      [{ limit: 0 }, "limit"],
      [{ limit: 501 }, "limit"],
      [{ limit: "1e2" }, "limit"],
      [{ limit: "-1" }, "limit"],
      [{ limit: "" }, "limit"],
      [{ outcome: "" }, "outcome"],
      [{ cursor: "" }, "cursor"],
      // Every query of the service refuses control characters, whatever the parameter.
      [{ cursor: "\u0000" }, "'cursor': must not contain control characters"],
      [{ environment: "lab\u0007" }, "'environment': must not contain control characters"],
    ] as [Record<string, string | number>, string][])("refuses %j with invalid_parameter", async (query, mention) => {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("invalid_parameter");
      expect(res.json.error.message).toContain(mention);
    });

    it("refuses a repeated parameter rather than picking one", async () => {
      const res = await call(GET, `${url(datasetId, "1.0.0", {})}&outcome=failure&outcome=success`, {
        key,
        params: { id: datasetId, version: "1.0.0" },
      });
      expect(res.status).toBe(400);
      expect(res.json.error.message).toContain("more than once");
    });
  });

  describe("licensing", () => {
    it("answers 403 version_not_licensed naming the version and the dataset", async () => {
      const res = await list({}, "2.0.0");
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe("version_not_licensed");
      expect(res.json.error.message).toContain("2.0.0");
      expect(res.json.error.message).toContain(datasetId);
    });

    it("answers 404 for an unknown or malformed version of a visible dataset", async () => {
      for (const version of ["9.9.9", "1.0", "latest"]) {
        const res = await list({}, version);
        expect(res.status).toBe(404);
        expect(res.json.error.code).toBe("not_found");
      }
    });
  });
});
