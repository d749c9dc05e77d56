import { beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/[[...path]]/route";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import { call } from "@/lib/testing/http";
import { expectError, expectIndistinguishable, expectOk, tamperedCursors, walkPages } from "@/lib/testing/expect-api";
import type { AnnotationLine, EpisodeLine } from "@/lib/catalog/import/records";
import { prng } from "@/lib/dev/demo/generate";

const annotations = (episodeId: string, query: Record<string, string | number | undefined> = {}, withKey = key) => {
  const search = new URLSearchParams(
    Object.entries(query)
      .filter((e): e is [string, string | number] => e[1] !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );
  return call(GET, `/api/v1/episodes/${episodeId}/annotations?${search}`, { key: withKey, params: { episodeId } });
};

let key: string;
let datasetId: string;

const base = randomEpisodes(4, 21);
base[0]!.duration_s = 100;
const [episode, unspanned, onlyUnlicensed, other] = base as [EpisodeLine, EpisodeLine, EpisodeLine, EpisodeLine];
const E = episode.episode_id;

/** Spans of the episode with random starts on a 0.5 s grid (so many share a start), in random line order. */
function spans(count: number, seed: number, tag: string): AnnotationLine[] {
  const random = prng(seed);
  return Array.from({ length: count }, (_, i) => {
    const start = Math.floor(random() * 160) / 2;
    const end = Math.min(100, Math.round((start + random() * 20) * 1000) / 1000);
    const attributes =
      i % 3 === 0
        ? undefined
        : { hand: i % 2 ? "left" : "right", score: Math.round(random() * 1000) / 1000, tags: [tag, `n${i}`] };
    return { episode_id: E, label: `${tag}-${i}`, start_s: start, end_s: end, ...(attributes ? { attributes } : {}) };
  });
}

const SPANS = {
  "1.9.0": spans(6, 1, "v190"),
  "1.10.0": spans(137, 2, "v1100"),
  "2.0.0": spans(4, 3, "v200"),
};

/** What the API must answer: by start_s, and spans sharing a start in the order they were imported. */
const oracle = (lines: AnnotationLine[]) =>
  lines
    .map((a, line) => ({ a, line }))
    .sort((x, y) => x.a.start_s - y.a.start_s || x.line - y.line)
    .map(({ a }) => ({ label: a.label, start_s: a.start_s, end_s: a.end_s, attributes: a.attributes ?? {} }));

const strip = (list: { annotation_id: string }[]) => list.map(({ annotation_id: _, ...rest }) => rest);

beforeAll(async () => {
  const org = await createTestOrg();
  datasetId = await importTestDataset([
    // Newest overall (unlicensed) holds the episode; so do 1.9.0 and 1.10.0. 1.11.0 (licensed) does not.
    { version: "2.0.0", episodes: [episode, onlyUnlicensed], annotations: SPANS["2.0.0"] },
    { version: "1.9.0", episodes: [episode, unspanned], annotations: SPANS["1.9.0"] },
    { version: "1.11.0", episodes: [unspanned, other] },
    { version: "1.10.0", episodes: [episode, unspanned], annotations: SPANS["1.10.0"] },
  ]);
  for (const v of ["1.9.0", "1.10.0", "1.11.0"]) await grant(org.id, datasetId, v);
  key = (await createTestKey(org.id)).secret;
});

describe("GET /api/v1/episodes/{episode_id}/annotations", () => {
  it("resolves the episode in the newest licensed version that contains it", async () => {
    const res = await annotations(E, { limit: 500 });
    expectOk(res);
    expect(Object.keys(res.json)).toEqual(["episode_id", "dataset_id", "version", "annotations", "next_cursor"]);
    expect(res.json).toMatchObject({ episode_id: E, dataset_id: datasetId, version: "1.10.0", next_cursor: null });
    expect(strip(res.json.annotations)).toEqual(oracle(SPANS["1.10.0"]));
  });

  it("returns spans ordered by start_s with exactly the span fields", async () => {
    const res = await annotations(E, { limit: 500 });
    const list = res.json.annotations;
    expect(list).toHaveLength(137);
    for (const span of list) {
      expect(Object.keys(span)).toEqual(["annotation_id", "label", "start_s", "end_s", "attributes"]);
      expect(span.annotation_id).toMatch(/^ann_[0-9]+$/);
      expect(span.start_s).toBeLessThanOrEqual(span.end_s);
    }
    for (let i = 1; i < list.length; i++) expect(list[i].start_s).toBeGreaterThanOrEqual(list[i - 1].start_s);
    expect(new Set(list.map((s: { annotation_id: string }) => s.annotation_id)).size).toBe(137);
    // Ties exist, so the order within a start time is exercised.
    expect(new Set(list.map((s: { start_s: number }) => s.start_s)).size).toBeLessThan(137);
    expect(list.find((s: { label: string }) => s.label === "v1100-0").attributes).toEqual({});
    expect(list.find((s: { label: string }) => s.label === "v1100-1").attributes).toMatchObject({
      hand: "left",
      tags: ["v1100", "n1"],
    });
  });

  it("answers an episode whose version has no spans with an empty list", async () => {
    const res = await annotations(unspanned.episode_id);
    expectOk(res);
    // 1.11.0 is the newest licensed version containing it.
    expect(res.json).toEqual({
      episode_id: unspanned.episode_id,
      dataset_id: datasetId,
      version: "1.11.0",
      annotations: [],
      next_cursor: null,
    });
  });

  describe("?version=", () => {
    it("pins a licensed version", async () => {
      const res = await annotations(E, { version: "1.9.0" });
      expectOk(res);
      expect(res.json).toMatchObject({ episode_id: E, dataset_id: datasetId, version: "1.9.0", next_cursor: null });
      expect(strip(res.json.annotations)).toEqual(oracle(SPANS["1.9.0"]));
    });

    it("answers a pinned unlicensed version with 403 version_not_licensed naming version and dataset", async () => {
      const res = await annotations(E, { version: "2.0.0" });
      expectError(res, 403, "version_not_licensed");
      expect(res.json.error.message).toContain("2.0.0");
      expect(res.json.error.message).toContain(datasetId);
    });

    it("answers a pinned unlicensed version the same whether or not it holds the episode", async () => {
      // Both episodes are visible (in licensed versions); only the first is in unlicensed 2.0.0.
      const holds = await annotations(E, { version: "2.0.0" });
      const lacks = await annotations(unspanned.episode_id, { version: "2.0.0" });
      expectError(lacks, 403, "version_not_licensed");
      expectIndistinguishable(holds, lacks);
    });

    it.each(["1.11.0", "7.7.7", "1.10", "latest"])(
      "answers pinned version %s, which does not hold the episode, with 404",
      async (version) => {
        expectError(await annotations(E, { version }), 404, "not_found");
      },
    );

    it("refuses an empty version with 400", async () => {
      expectError(await annotations(E, { version: "" }), 400, "invalid_parameter");
    });
  });

  describe("episodes in no licensed version", () => {
    it.each([undefined, "2.0.0", "1.0.0"])("answer exactly as a missing episode (version %s)", async (version) => {
      const hidden = await annotations(onlyUnlicensed.episode_id, { version });
      const absent = await annotations(uniqueId("ep"), { version });
      expectError(hidden, 404, "not_found");
      expectIndistinguishable(hidden, absent);
      expect(hidden.text).not.toContain(datasetId);
      expect(hidden.text).not.toContain(onlyUnlicensed.episode_id);
    });
  });

  describe("pagination", () => {
    it("defaults to 50 per page", async () => {
      const res = await annotations(E);
      expect(res.json.annotations).toHaveLength(50);
      expect(typeof res.json.next_cursor).toBe("string");
    });

    it.each([1, 7, 50, 136, 137, 500])("walks every span exactly once at limit %i", async (limit) => {
      const full = (await annotations(E, { limit: 500 })).json.annotations;
      const { items, pages } = await walkPages((cursor) => annotations(E, { limit, cursor }), "annotations", limit);
      expect(items).toEqual(full);
      expect(new Set(items.map((s: { annotation_id: string }) => s.annotation_id)).size).toBe(137);
      expect(pages).toHaveLength(Math.ceil(137 / limit));
      for (const page of pages)
        expect(page.json).toMatchObject({ episode_id: E, dataset_id: datasetId, version: "1.10.0" });
    });

    it("walks a pinned version", async () => {
      const { items } = await walkPages(
        (cursor) => annotations(E, { version: "1.9.0", limit: 4, cursor }),
        "annotations",
        4,
      );
      expect(strip(items)).toEqual(oracle(SPANS["1.9.0"]));
    });
  });

  describe("cursors", () => {
    let cursor: string;
    beforeAll(async () => {
      cursor = (await annotations(E, { limit: 7 })).json.next_cursor;
    });

    it("continue the walk they came from", async () => {
      const res = await annotations(E, { limit: 7, cursor });
      expectOk(res);
      expect(strip(res.json.annotations)).toEqual(oracle(SPANS["1.10.0"]).slice(7, 14));
    });

    it("refuse another version, another episode, or alteration with 400 invalid_cursor", async () => {
      expectError(await annotations(E, { version: "1.9.0", cursor }), 400, "invalid_cursor");
      expectError(await annotations(unspanned.episode_id, { cursor }), 400, "invalid_cursor");
      for (const bad of tamperedCursors(cursor))
        expectError(await annotations(E, { limit: 7, cursor: bad }), 400, "invalid_cursor");
    });

    it("refuse a cursor once the episode resolves to another version", async () => {
      const org = await createTestOrg();
      await grant(org.id, datasetId, "1.9.0");
      const own = (await createTestKey(org.id)).secret;
      const first = await annotations(E, { limit: 2 }, own);
      expect(first.json.version).toBe("1.9.0");
      await grant(org.id, datasetId, "2.0.0");
      expectError(await annotations(E, { limit: 2, cursor: first.json.next_cursor }, own), 400, "invalid_cursor");
      expect((await annotations(E, {}, own)).json.version).toBe("2.0.0");
    });
  });

  it.each([
    [{ label: "grasp" }, "Unknown query parameter 'label'"],
    [{ episode_id: E }, "Unknown query parameter 'episode_id'"],
    [{ limit: 0 }, "limit"],
    [{ limit: 501 }, "limit"],
  ] as [Record<string, string | number>, string][])("refuses %j with 400 invalid_parameter", async (query, mention) => {
    const res = await annotations(E, query);
    expectError(res, 400, "invalid_parameter");
    expect(res.json.error.message).toContain(mention);
  });
});
