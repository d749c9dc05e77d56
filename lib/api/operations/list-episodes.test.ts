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
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import { withdrawEpisodes } from "@/lib/withdrawals/withdraw";
import { call } from "@/lib/testing/http";
import type { EpisodeLine } from "@/lib/catalog/import/records";

type Filter = {
  outcome?: string;
  environment?: string;
  task?: string;
  contributor?: string;
  has_recovery?: boolean;
  min_duration_s?: number;
  max_duration_s?: number;
};

let datasetId: string;
let otherDatasetId: string;
let key: string;
const TASKS = ["pick", "place", "wipe table"] as const;
// The fixture's episodes all have one task; three here, so that a task filter has something to leave out.
const episodes = randomEpisodes(420, 7).map((e, i) => ({ ...e, task: TASKS[i % TASKS.length]! }));
const CONTRIBUTORS = [...new Set(episodes.map((e) => e.contributor))].sort();

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

const matches = (e: EpisodeLine, filter: Filter) =>
  (filter.outcome === undefined || e.outcome === filter.outcome) &&
  (filter.environment === undefined || e.environment === filter.environment) &&
  (filter.task === undefined || e.task === filter.task) &&
  (filter.contributor === undefined || e.contributor === filter.contributor) &&
  (filter.has_recovery === undefined || e.has_recovery === filter.has_recovery) &&
  (filter.min_duration_s === undefined || e.duration_s >= filter.min_duration_s) &&
  (filter.max_duration_s === undefined || e.duration_s <= filter.max_duration_s);

const oracle = (filter: Filter, among: readonly EpisodeLine[] = episodes) =>
  among.filter((e) => matches(e, filter)).sort((a, b) => byteOrder(a.episode_id, b.episode_id));

/** A filter as query parameters: has_recovery and the durations as their text. */
const asQuery = (filter: Filter): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(filter).map(([k, v]) => [k, v === undefined ? undefined : String(v)]));

async function walk(
  filter: Filter,
  limit: number,
  lister = list,
): Promise<{ seen: EpisodeLine[]; totals: number[]; pages: number }> {
  const seen: EpisodeLine[] = [];
  const totals: number[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await lister({ ...asQuery(filter), limit, cursor });
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

  describe("filters beyond outcome and environment", () => {
    // An episode's duration from the data, so that a bound falls exactly on one (the range is closed).
    const someDuration = [...episodes].sort((a, b) => a.duration_s - b.duration_s)[140]!.duration_s;

    it.each([
      [{ task: "place" }, 11],
      [{ task: "wipe table" }, 500],
      [{ contributor: "c3" }, 9],
      [{ has_recovery: true }, 17],
      [{ has_recovery: false }, 100],
      [{ min_duration_s: 20 }, 31],
      [{ max_duration_s: 12.5 }, 8],
      [{ min_duration_s: 10, max_duration_s: 30.25 }, 16],
      [{ min_duration_s: someDuration, max_duration_s: someDuration }, 3],
      [{ contributor: "c1", has_recovery: true }, 3],
      [{ task: "pick", outcome: "failure" }, 6],
      [{ task: "place", environment: "lab", has_recovery: false }, 4],
      [{ contributor: "c2", min_duration_s: 15, max_duration_s: 45 }, 5],
      [{ task: "pick", contributor: "c0", has_recovery: true, min_duration_s: 5 }, 2],
      [{ outcome: "success", environment: "kitchen", task: "wipe table", contributor: "c4", has_recovery: false }, 2],
      [{ task: "no such task" }, 10],
      [{ contributor: "c1", min_duration_s: 1000 }, 10],
    ] as [Filter, number][])(
      "walks %j at limit %i: every match exactly once, in byte order, with the filtered total",
      async (filter, limit) => {
        const expected = oracle(filter);
        const { seen, totals, pages } = await walk(filter, limit);
        expect(seen).toEqual(expected);
        expect(new Set(totals)).toEqual(new Set([expected.length]));
        expect(pages).toBe(Math.max(1, Math.ceil(expected.length / limit)));
      },
    );

    it("the range includes both bounds", async () => {
      const exact = await list({ min_duration_s: someDuration, max_duration_s: someDuration });
      expect(exact.json.total).toBeGreaterThan(0);
      expect(exact.json.episodes.every((e: EpisodeLine) => e.duration_s === someDuration)).toBe(true);
    });

    it("matches the brute-force oracle for any combination of every filter and any page size", async () => {
      const value = <T>(pool: readonly T[]) => fc.option(fc.constantFrom(...pool), { nil: undefined });
      const bound = fc.option(
        fc.integer({ min: 0, max: 6200 }).map((n) => n / 100),
        { nil: undefined },
      );
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            outcome: value(OUTCOMES),
            environment: value(ENVIRONMENTS),
            task: value([...TASKS, "absent"]),
            contributor: value([...CONTRIBUTORS, "absent"]),
            has_recovery: value([true, false]),
            min_duration_s: bound,
            max_duration_s: bound,
          }),
          fc.integer({ min: 1, max: 500 }),
          async (drawn, limit) => {
            const filter: Filter = { ...drawn };
            if (
              filter.min_duration_s !== undefined &&
              filter.max_duration_s !== undefined &&
              filter.min_duration_s > filter.max_duration_s
            )
              [filter.min_duration_s, filter.max_duration_s] = [filter.max_duration_s, filter.min_duration_s];
            const res = await list({ ...asQuery(filter), limit });
            const expected = oracle(filter);
            expect(res.status, res.text).toBe(200);
            expect(res.json.total).toBe(expected.length);
            expect(res.json.episodes).toEqual(expected.slice(0, limit));
            expect(res.json.next_cursor === null).toBe(expected.length <= limit);
          },
        ),
        { numRuns: 80 },
      );
    });

    it("bind their cursors: a walk continues only with the same values", async () => {
      const started = { task: "pick", contributor: "c2", has_recovery: false, min_duration_s: 5, max_duration_s: 55 };
      const first = await list({ ...asQuery(started), limit: 3 });
      const cursor = first.json.next_cursor as string;
      expect(cursor).toEqual(expect.any(String));
      const next = await list({ ...asQuery(started), limit: 4, cursor });
      expect(next.status).toBe(200);
      expect(next.json.episodes).toEqual(oracle(started).slice(3, 7));
      for (const changed of [
        { task: "place" },
        { task: undefined },
        { contributor: "c3" },
        { has_recovery: true },
        { has_recovery: undefined },
        { min_duration_s: 5.5 },
        { max_duration_s: undefined },
        { outcome: "failure" },
      ]) {
        const res = await list({ ...asQuery({ ...started, ...changed }), cursor });
        expect(res.status, JSON.stringify(changed)).toBe(400);
        expect(res.json.error.code).toBe("invalid_cursor");
      }
      // Nor does a cursor of the outcome filter alone continue with a new filter added.
      const outcomeCursor = (await list({ outcome: "failure", limit: 2 })).json.next_cursor;
      const widened = await list({ outcome: "failure", task: "pick", cursor: outcomeCursor });
      expect(widened.json.error.code).toBe("invalid_cursor");
    });

    it.each([
      [{ has_recovery: "yes" }, "'has_recovery': must be true or false"],
      [{ has_recovery: "TRUE" }, "'has_recovery'"],
      [{ has_recovery: "1" }, "'has_recovery'"],
      [{ has_recovery: "" }, "'has_recovery'"],
      [{ min_duration_s: "-1" }, "'min_duration_s': must not be negative"],
      [{ min_duration_s: "ten" }, "'min_duration_s': must be a number of seconds"],
      [{ max_duration_s: "1e10" }, "'max_duration_s': must be at most 1000000000 seconds"],
      [{ max_duration_s: "0x10" }, "'max_duration_s'"],
      [{ max_duration_s: " 1" }, "'max_duration_s'"],
      [{ max_duration_s: "Infinity" }, "'max_duration_s'"],
      [{ max_duration_s: "NaN" }, "'max_duration_s'"],
      [{ max_duration_s: "" }, "'max_duration_s'"],
      [{ min_duration_s: "12." }, "'min_duration_s'"],
      [{ min_duration_s: "30", max_duration_s: "10" }, "'min_duration_s': must not exceed max_duration_s"],
      [{ task: "" }, "'task': must not be empty"],
      [{ contributor: "c1\u0000" }, "'contributor': must not contain control characters"],
      [{ tasks: "pick" }, "Unknown query parameter 'tasks'"],
      [{ recovery: "true" }, "Unknown query parameter 'recovery'"],
      [{ min_duration: "3" }, "Unknown query parameter 'min_duration'"],
    ] as [Record<string, string>, string][])("refuses %j with invalid_parameter", async (query, mention) => {
      const res = await list(query);
      expect(res.status, res.text).toBe(400);
      expect(res.json.error.code).toBe("invalid_parameter");
      expect(res.json.error.message).toContain(mention);
    });

    it("refuses a repeated task rather than picking one", async () => {
      const res = await call(GET, `${url(datasetId, "1.0.0", {})}&task=pick&task=place`, {
        key,
        params: { id: datasetId, version: "1.0.0" },
      });
      expect(res.status).toBe(400);
      expect(res.json.error.message).toContain("'task' was given more than once");
    });

    it("leave withdrawn episodes out of every page and total", async () => {
      // Contributors of their own: a withdrawal by contributor reaches every dataset that names them.
      const who = uniqueId("w");
      const own = randomEpisodes(90, 11).map((e, i) => ({
        ...e,
        task: TASKS[i % TASKS.length]!,
        contributor: `${who}-${e.contributor}`,
      }));
      const ownDataset = await importTestDataset([{ version: "1.0.0", episodes: own }]);
      const org = await createTestOrg();
      await grant(org.id, ownDataset, "1.0.0");
      const ownKey = (await createTestKey(org.id)).secret;
      const listOwn = (query: Record<string, string | number | undefined>) =>
        call(GET, url(ownDataset, "1.0.0", query), { key: ownKey, params: { id: ownDataset, version: "1.0.0" } });
      // Withdrawn: a recovery episode of task "place" and every episode of one contributor.
      const recovering = own.find((e) => e.task === "place" && e.has_recovery)!;
      await withdrawEpisodes(operatorCtx(), {
        episodeIds: [recovering.episode_id],
        reason: "a bystander is recognisable",
      });
      await withdrawEpisodes(operatorCtx(), { contributor: `${who}-c3`, reason: "consent withdrawn" });
      const left = own.filter((e) => e.episode_id !== recovering.episode_id && e.contributor !== `${who}-c3`);
      for (const filter of [
        { task: "place" },
        { task: "place", has_recovery: true },
        { has_recovery: true },
        { contributor: `${who}-c3` },
        { contributor: `${who}-c1`, has_recovery: false },
        { min_duration_s: 0 },
        { task: "place", max_duration_s: 40 },
        { outcome: "failure", task: "pick" },
      ] as Filter[]) {
        const expected = oracle(filter, left);
        const { seen, totals } = await walk(filter, 7, listOwn);
        expect(seen, JSON.stringify(filter)).toEqual(expected);
        expect(new Set(totals), JSON.stringify(filter)).toEqual(new Set([expected.length]));
      }
    });
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
