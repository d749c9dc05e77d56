import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/auth/principal";
import type { Ctx } from "@/lib/context";
import { getDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { CALLERS, callers, ctxOf, type CallerName } from "@/lib/testing/admin";
import { importWithFiles, keyPrincipal, contributedEpisodes, makeDownload } from "@/lib/testing/disclosure-fixtures";
import { createTestOrg, grant, operatorCtx, uniqueId } from "@/lib/testing/fixtures";
import * as chainStatusModule from "./chain-status";
import * as exportModule from "./export";
import * as recipientsModule from "./recipients-of-contributor";
import * as searchModule from "./search";
import * as verifyModule from "./verify";

// Who may read the disclosure log, asked of every verb that reads it, with every kind of caller:
// the verbs check the caller themselves (lib/auth/authorize.ts), whoever calls them.

const READERS: readonly CallerName[] = ["operator", "admin", "reviewer"];

type World = { downloadId: string; contributor: string };

async function drain(lines: AsyncIterable<string>): Promise<number> {
  let count = 0;
  for await (const _ of lines) count++;
  return count;
}

/** Every verb over the log, called as a reader would. */
const VERBS: Record<string, (ctx: Ctx, w: World) => Promise<unknown>> = {
  searchDisclosures: (ctx) => searchModule.searchDisclosures(ctx, { filter: {}, limit: 5 }),
  getDisclosure: (ctx, w) => searchModule.getDisclosure(ctx, w.downloadId),
  reviewFacets: (ctx) => searchModule.reviewFacets(ctx),
  recipientsOfContributor: (ctx, w) => recipientsModule.recipientsOfContributor(ctx, w.contributor),
  exportRecipientsOfContributor: async (ctx, w) => drain(recipientsModule.exportRecipientsOfContributor(ctx, w.contributor, "csv")),
  exportDisclosures: async (ctx, w) => drain(exportModule.exportDisclosures(ctx, { contributor: w.contributor }, "jsonl")),
  verifyChain: (ctx) => verifyModule.verifyChain(ctx),
  chainStatus: (ctx) => chainStatusModule.chainStatus(ctx),
};

/** Exported functions of these modules that are not verbs: they take no caller and read nothing by themselves. */
const NOT_VERBS = new Set(["exportLines"]);

let who: Record<CallerName, Principal>;
let world: World;

beforeAll(async () => {
  const org = await createTestOrg();
  const contributor = uniqueId("contributor");
  const datasetId = await importWithFiles(getDb().$client, [{ version: "1.0.0", episodes: contributedEpisodes(3, 71, [contributor]) }]);
  await grant(org.id, datasetId, "1.0.0");
  const made = await makeDownload(getDb(), await keyPrincipal(operatorCtx(), org.id), { dataset_id: datasetId, version: "1.0.0" });
  world = { downloadId: made.download.download_id, contributor };
  who = await callers(org.id);
});

describe("the verbs over the disclosure log", () => {
  it("are all in this matrix: every function the log's reading modules export", () => {
    const exported = [searchModule, exportModule, recipientsModule, verifyModule, chainStatusModule]
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

  it.each(CALLERS.filter((c) => !READERS.includes(c)).map((c) => [c]))("refuses %s with 403 forbidden", async (caller) => {
    const error = await verb(ctxOf(who[caller]), world).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "forbidden", status: 403, message: "The disclosure log is for reviewers and admins." });
  });
});

describe("the exports refuse when called, before a line is asked for", () => {
  // A route streams what the verb yields: a refusal must come before the stream does, as its own answer.
  it.each([["licensee"], ["api_key"]] as const)("for %s", (caller) => {
    const ctx = ctxOf(who[caller]);
    expect(() => exportModule.exportDisclosures(ctx, {}, "csv")).toThrow(expect.objectContaining({ code: "forbidden" }));
    expect(() => recipientsModule.exportRecipientsOfContributor(ctx, world.contributor, "csv")).toThrow(expect.objectContaining({ code: "forbidden" }));
  });

  it("and refuse a contributor with a control character the same way, as 400", () => {
    expect(() => recipientsModule.exportRecipientsOfContributor(ctxOf(who.reviewer), "a\u0000b", "csv")).toThrow(
      expect.objectContaining({ code: "invalid_parameter", status: 400 }),
    );
  });
});
