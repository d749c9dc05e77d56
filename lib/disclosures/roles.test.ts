import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/auth/principal";
import type { Ctx } from "@/lib/context";
import { getDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { CALLERS, callers, ctxOf, type CallerName } from "@/lib/testing/admin";
import { importWithFiles, keyPrincipal, contributedEpisodes, makeDownload } from "@/lib/testing/disclosure-fixtures";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";
import * as createPreviewModule from "@/lib/previews/create-preview";
import * as episodeStreamsModule from "@/lib/previews/episode-streams";
import * as previewAccessModule from "@/lib/previews/access";
import * as chainStatusModule from "./chain-status";
import * as exportModule from "./export";
import * as overviewModule from "./overview";
import * as recipientsModule from "./recipients-of-contributor";
import * as searchModule from "./search";
import * as verifyModule from "./verify";

// Who may read the disclosure log, asked of every verb that reads it, with every kind of caller:
// the verbs check the caller themselves (lib/auth/authorize.ts), whoever calls them.

const READERS: readonly CallerName[] = ["operator", "admin", "reviewer"];

type World = { downloadId: string; contributor: string; episodeId: string };

async function drain(lines: AsyncIterable<string | Uint8Array>): Promise<number> {
  let count = 0;
  for await (const _ of lines) count++;
  return count;
}

/** Every verb over the log, called as a reader would. */
const VERBS: Record<string, (ctx: Ctx, w: World) => Promise<unknown>> = {
  searchDisclosures: (ctx) => searchModule.searchDisclosures(ctx, { filter: {}, limit: 5 }),
  getDisclosure: (ctx, w) => searchModule.getDisclosure(ctx, w.downloadId),
  reviewFacets: (ctx) => searchModule.reviewFacets(ctx),
  countDisclosures: (ctx) => searchModule.countDisclosures(ctx, {}),
  disclosedEpisodes: (ctx, w) => searchModule.disclosedEpisodes(ctx, { id: w.downloadId, limit: 5 }),
  recipientsOfContributor: (ctx, w) =>
    recipientsModule.recipientsOfContributor(ctx, { contributor: w.contributor, limit: 50 }),
  exportRecipientsOfContributor: async (ctx, w) =>
    drain(recipientsModule.exportRecipientsOfContributor(ctx, w.contributor, "csv")),
  exportDisclosures: async (ctx, w) =>
    drain(exportModule.exportDisclosures(ctx, { contributor: w.contributor }, "jsonl")),
  verifyChain: (ctx) => verifyModule.verifyChain(ctx),
  verifyChainDetailed: (ctx) => verifyModule.verifyChainDetailed(ctx, { mode: "incremental" }),
  lastFullCheckpoint: (ctx) => verifyModule.lastFullCheckpoint(ctx),
  chainStatus: (ctx) => chainStatusModule.chainStatus(ctx),
  disclosureOverview: (ctx) =>
    overviewModule.disclosureOverview(ctx, { from: "2026-01-01", to: "2026-03-31", granularity: "week" }),
};

/** Exported functions of these modules that are not verbs: they take no caller and read nothing by themselves. */
const NOT_VERBS = new Set(["exportLines", "cappedCount", "overviewPeriod", "weekStart", "isoWeek", "wholeMonths"]);

let who: Record<CallerName, Principal>;
let world: World;

beforeAll(async () => {
  const org = await createTestOrg();
  const contributor = uniqueId("contributor");
  const datasetId = await importWithFiles(getDb().$client, [
    { version: "1.0.0", episodes: contributedEpisodes(3, 71, [contributor]) },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  const made = await makeDownload(getDb(), await keyPrincipal(operatorCtx(), org.id), {
    dataset_id: datasetId,
    version: "1.0.0",
  });
  const watched = randomEpisodes(1, 72).map((e) => ({ ...e, streams: ["cam"] }));
  const videoDataset = await importTestDataset([
    {
      version: "1.0.0",
      episodes: watched,
      files: [
        {
          path: `${watched[0]!.episode_id}/cam.mp4`,
          episode_id: watched[0]!.episode_id,
          stream: "cam",
          size_bytes: 9,
          sha256: "e".repeat(64),
        },
      ],
    },
  ]);
  await grant(org.id, videoDataset, "1.0.0");
  world = { downloadId: made.download.download_id, contributor, episodeId: watched[0]!.episode_id };
  who = await callers(org.id);
});

describe("the verbs over the disclosure log", () => {
  it("are all in this matrix: every function the log's reading modules export", () => {
    const exported = [searchModule, exportModule, recipientsModule, verifyModule, chainStatusModule, overviewModule]
      .flatMap((m) => Object.entries(m))
      .filter(([name, value]) => typeof value === "function" && !NOT_VERBS.has(name))
      .map(([name]) => name);
    expect(exported.sort()).toEqual(Object.keys(VERBS).sort());
  });
});

describe.each(Object.entries(VERBS))("%s", (_name, verb) => {
  it.each(READERS.map((c) => [c]))("answers %s", async (caller) => {
    await expect(verb(ctxOf(who[caller]), world)).resolves.toBeDefined();
  });

  it.each(CALLERS.filter((c) => !READERS.includes(c)).map((c) => [c]))(
    "refuses %s with 403 forbidden",
    async (caller) => {
      const error = await verb(ctxOf(who[caller]), world).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({
        code: "forbidden",
        status: 403,
        message: "The disclosure log is for reviewers and admins.",
      });
    },
  );
});

describe("the exports refuse when called, before a line is asked for", () => {
  // A route streams what the verb yields: a refusal must come before the stream does, as its own answer.
  it.each([["licensee"], ["api_key"]] as const)("for %s", (caller) => {
    const ctx = ctxOf(who[caller]);
    expect(() => exportModule.exportDisclosures(ctx, {}, "csv")).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    expect(() => recipientsModule.exportRecipientsOfContributor(ctx, world.contributor, "csv")).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
  });

  it("and refuse a contributor with a control character the same way, as 400", () => {
    expect(() => recipientsModule.exportRecipientsOfContributor(ctxOf(who.reviewer), "a\u0000b", "csv")).toThrow(
      expect.objectContaining({ code: "invalid_parameter", status: 400 }),
    );
  });
});

// The preview verbs write to the log (a preview is a disclosure) or read what a preview would show:
// who may call each, asked of every kind of caller.
const PREVIEW_VERBS: Record<
  string,
  { verb: (ctx: Ctx, w: World) => Promise<unknown>; allowed: readonly CallerName[]; refusal: string }
> = {
  createPreview: {
    verb: (ctx, w) => createPreviewModule.createPreview(ctx, { episode_id: w.episodeId }),
    // Licensees and keys under their licence, reviewers and admins as themselves; an operator watches nothing.
    allowed: ["admin", "reviewer", "licensee", "api_key"],
    refusal: "Previews are for members of a licensed organisation, their API keys, reviewers and admins.",
  },
  episodeStreams: {
    verb: (ctx, w) => episodeStreamsModule.episodeStreams(ctx, { episodeId: w.episodeId }),
    allowed: ["admin", "reviewer", "licensee", "api_key"],
    refusal: "Previews are for members of a licensed organisation, their API keys, reviewers and admins.",
  },
  reviewEpisode: {
    verb: (ctx, w) => episodeStreamsModule.reviewEpisode(ctx, { episodeId: w.episodeId }),
    allowed: READERS,
    refusal: "The disclosure log is for reviewers and admins.",
  },
  previewBasis: {
    verb: async (ctx) => previewAccessModule.previewBasis(ctx),
    allowed: ["admin", "reviewer", "licensee", "api_key"],
    refusal: "Previews are for members of a licensed organisation, their API keys, reviewers and admins.",
  },
  previewVersion: {
    verb: async (ctx, w) => previewAccessModule.previewVersion(ctx, previewAccessModule.previewBasis(ctx), w.episodeId),
    allowed: ["admin", "reviewer", "licensee", "api_key"],
    refusal: "Previews are for members of a licensed organisation, their API keys, reviewers and admins.",
  },
  reviewedEpisodeVersions: {
    verb: (ctx, w) => previewAccessModule.reviewedEpisodeVersions(ctx, w.episodeId),
    allowed: READERS,
    refusal: "The disclosure log is for reviewers and admins.",
  },
};

describe("the preview verbs", () => {
  it("are all in this matrix: every function the preview modules export", () => {
    const exported = [createPreviewModule, episodeStreamsModule, previewAccessModule]
      .flatMap((m) => Object.entries(m))
      .filter(([, value]) => typeof value === "function")
      .map(([name]) => name);
    expect(exported.sort()).toEqual(Object.keys(PREVIEW_VERBS).sort());
  });

  describe.each(Object.entries(PREVIEW_VERBS))("%s", (_name, { verb, allowed, refusal }) => {
    it.each(allowed.map((c) => [c]))("answers %s", async (caller) => {
      await expect(verb(ctxOf(who[caller]), world)).resolves.toBeDefined();
    });

    it.each(CALLERS.filter((c) => !allowed.includes(c)).map((c) => [c]))(
      "refuses %s with 403 forbidden",
      async (caller) => {
        const error = await verb(ctxOf(who[caller]), world).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(AppError);
        expect(error).toMatchObject({ code: "forbidden", status: 403, ...(refusal ? { message: refusal } : {}) });
      },
    );
  });
});
