import { beforeAll, describe, expect, it } from "vitest";
import { authenticateApiKey } from "@/lib/auth/api-keys";
import type { Ctx } from "@/lib/context";
import { getDb } from "@/lib/db/client";
import { prng } from "@/lib/dev/demo/generate";
import { ctxOf, userOfRole } from "@/lib/testing/admin";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import type { AnnotationLine, EpisodeLine } from "./import/records";
import { listEpisodeSpans } from "./episode-spans";
import { listAnnotations, type AnnotationRecord } from "./list-annotations";

const [episode, onlyUnlicensed, unspanned] = randomEpisodes(3, 61) as [EpisodeLine, EpisodeLine, EpisodeLine];
episode.duration_s = 100;
const E = episode.episode_id;

/** Spans with starts on a 0.5 s grid (so many share a start), in random line order. */
function spans(count: number, seed: number, tag: string): AnnotationLine[] {
  const random = prng(seed);
  return Array.from({ length: count }, (_, i) => {
    const start = Math.floor(random() * 200) / 2;
    return {
      episode_id: E,
      label: `${tag}-${i}`,
      start_s: start,
      end_s: Math.min(100, start + 1),
      ...(i % 4 ? { attributes: { n: i, tag } } : {}),
    };
  });
}

// More spans than the API's largest page (500), so "all of them" is more than one page.
const SPANS = { "1.9.0": spans(9, 1, "v190"), "1.10.0": spans(1203, 2, "v1100"), "2.0.0": spans(5, 3, "v200") };

/** By start_s, and spans sharing a start in the order they were imported. */
const expected = (lines: AnnotationLine[]) =>
  lines
    .map((a, line) => ({ a, line }))
    .sort((x, y) => x.a.start_s - y.a.start_s || x.line - y.line)
    .map(({ a }) => ({ label: a.label, start_s: a.start_s, end_s: a.end_s, attributes: a.attributes ?? {} }));
const strip = (list: { annotation_id: string }[]) => list.map(({ annotation_id: _, ...rest }) => rest);

let datasetId: string;
let licensee: Ctx;
let key: Ctx;
let narrowed: Ctx;

async function keyCaller(organizationId: string, scope?: { datasetId: string; version: string }[]) {
  return ctxOf(await authenticateApiKey(getDb(), (await createTestKey(organizationId, { scope })).secret));
}

/** What a client of GET /v1/episodes/{id}/annotations collects: listAnnotations (the route's verb) page by page until next_cursor is null. */
async function walkPages(ctx: Ctx, limit: number, version?: string) {
  const items: AnnotationRecord[] = [];
  let pages = 0;
  for (let cursor: string | undefined; ; ) {
    const page = await listAnnotations(ctx, { episodeId: E, version, limit, cursor });
    expect(page.annotations.length).toBeLessThanOrEqual(limit);
    items.push(...page.annotations);
    pages++;
    if (!page.next_cursor) return { items, pages };
    cursor = page.next_cursor;
  }
}

beforeAll(async () => {
  datasetId = await importTestDataset([
    // The newest version (unlicensed) holds the episode, and so do the licensed 1.9.0 and 1.10.0.
    { version: "2.0.0", episodes: [episode, onlyUnlicensed], annotations: SPANS["2.0.0"] },
    { version: "1.9.0", episodes: [episode, unspanned], annotations: SPANS["1.9.0"] },
    { version: "1.10.0", episodes: [episode, unspanned], annotations: SPANS["1.10.0"] },
  ]);
  const org = await createTestOrg();
  await grant(org.id, datasetId, "1.9.0");
  await grant(org.id, datasetId, "1.10.0");
  [licensee, key, narrowed] = await Promise.all([
    userOfRole("licensee", org.id).then(ctxOf),
    keyCaller(org.id),
    keyCaller(org.id, [{ datasetId, version: "1.9.0" }]),
  ]);
});

describe("listEpisodeSpans", () => {
  it("returns every span of the newest licensed version holding the episode, ordered by start then import order", async () => {
    const result = await listEpisodeSpans(licensee, { episodeId: E });
    expect(result).toMatchObject({ episode_id: E, dataset_id: datasetId, version: "1.10.0" });
    expect(result.spans).toHaveLength(1203);
    expect(strip(result.spans)).toEqual(expected(SPANS["1.10.0"]));
    // Ties exist, so the order within a start time is exercised.
    expect(new Set(result.spans.map((s) => s.start_s)).size).toBeLessThan(1203);
    expect(new Set(result.spans.map((s) => s.annotation_id)).size).toBe(1203);
  });

  it("reads a pinned licensed version", async () => {
    const result = await listEpisodeSpans(licensee, { episodeId: E, version: "1.9.0" });
    expect(result.version).toBe("1.9.0");
    expect(strip(result.spans)).toEqual(expected(SPANS["1.9.0"]));
  });

  it("answers an episode whose version has no spans with an empty list", async () => {
    expect(await listEpisodeSpans(licensee, { episodeId: unspanned.episode_id })).toEqual({
      episode_id: unspanned.episode_id,
      dataset_id: datasetId,
      version: "1.10.0",
      spans: [],
    });
  });

  describe("is scoped by the caller's licences", () => {
    it("refuses a pinned unlicensed version with 403, whether or not it holds the episode", async () => {
      for (const episodeId of [E, unspanned.episode_id]) {
        await expect(listEpisodeSpans(licensee, { episodeId, version: "2.0.0" })).rejects.toMatchObject({
          code: "version_not_licensed",
        });
      }
    });

    it("answers an episode in no licensed version exactly as a missing one", async () => {
      const hidden = await listEpisodeSpans(licensee, { episodeId: onlyUnlicensed.episode_id }).catch(
        (e: unknown) => e,
      );
      const absent = await listEpisodeSpans(licensee, { episodeId: uniqueId("ep") }).catch((e: unknown) => e);
      expect(hidden).toMatchObject({ code: "not_found" });
      expect(hidden).toEqual(absent);
    });

    it("hides everything from an organisation without a licence", async () => {
      const outsider = ctxOf(await userOfRole("licensee", (await createTestOrg()).id));
      await expect(listEpisodeSpans(outsider, { episodeId: E })).rejects.toMatchObject({ code: "not_found" });
    });

    it("follows a key's narrowing to the versions it may read", async () => {
      expect((await listEpisodeSpans(narrowed, { episodeId: E })).version).toBe("1.9.0");
      await expect(listEpisodeSpans(narrowed, { episodeId: E, version: "1.10.0" })).rejects.toMatchObject({
        code: "version_not_licensed",
      });
    });
  });

  describe("equals walking the paginated API", () => {
    it.each([7, 500])("at limit %i, in the newest licensed version", async (limit) => {
      const { items, pages } = await walkPages(key, limit);
      expect(pages).toBe(Math.ceil(1203 / limit));
      expect((await listEpisodeSpans(key, { episodeId: E })).spans).toEqual(items);
    });

    it("in a pinned version, and for a narrowed key", async () => {
      expect((await listEpisodeSpans(key, { episodeId: E, version: "1.9.0" })).spans).toEqual(
        (await walkPages(key, 2, "1.9.0")).items,
      );
      expect((await listEpisodeSpans(narrowed, { episodeId: E })).spans).toEqual((await walkPages(narrowed, 4)).items);
    });
  });
});
