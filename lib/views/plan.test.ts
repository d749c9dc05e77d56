import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../client/api";
import { pull } from "../client/pull";
import { createTestKey, createTestOrg, grant } from "../testing/fixtures";
import { call } from "../testing/http";
import {
  copiesOf,
  entriesOf,
  fingerprint,
  leRobotRepo,
  licenceOf,
  removeRepoDir,
  type LeRobotRepo,
} from "../testing/hub-fixtures";
import { filesDigest } from "../disclosures/chain";
import { storedVersion, type StoredVersion } from "../testing/pull-fixtures";
import { carryOutPlan, inProcessFetch } from "../testing/plan-executor";
import * as api from "../../app/api/[[...path]]/route";
import type { Plan, PlanRequest } from "./plan";

// The plan decides on the service what `das pull` decided on the client: carried out by a client
// that decides nothing (lib/testing/plan-executor.ts), it writes what `das pull` writes, byte for
// byte, less what das pull keeps for itself (.das/original/, das-provenance.json).

const dirs: string[] = [];
const newDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
const sink = { write: () => true };
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Every file under a directory with its SHA-256, but das pull's own bookkeeping. */
function contents(dir: string, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (relative === ".das" || relative === "das-provenance.json") continue;
    if (entry.isDirectory()) Object.assign(out, contents(dir, relative));
    else
      out[relative] = createHash("sha256")
        .update(readFileSync(path.join(dir, relative)))
        .digest("hex");
  }
  return out;
}

async function planOf(key: string, request: PlanRequest): Promise<Plan> {
  const { datasetId, version, ...body } = request;
  const answer = await call(api.POST, `/api/v1/datasets/${datasetId}/versions/${version}/plan`, {
    method: "POST",
    key,
    body,
  });
  expect(answer.status, answer.text).toBe(200);
  return answer.json as Plan;
}

/** das pull (in-process against the same service) and the plan carried out, into directories of their own. */
async function both(key: string, request: PlanRequest) {
  const pulled = newDir("das-plan-pull-");
  const client = new ApiClient({ baseUrl: "http://localhost", key, fetch: inProcessFetch() });
  const summary = await pull({
    api: client,
    dir: pulled,
    datasetId: request.datasetId,
    version: request.version,
    episodeIds: request.episode_ids,
    filter: request.filter,
    streams: request.streams,
    keepOriginalIndices: request.keep_original_indices,
    stderr: sink,
  });
  expect(summary.failed).toEqual([]);
  const plan = await planOf(key, request);
  const planned = newDir("das-plan-carried-");
  await carryOutPlan(plan, planned, key);
  return { summary, plan, pulled, planned };
}

describe.each(["v3.0", "v2.1"] as const)("a LeRobot %s version", (codebase) => {
  let repo: LeRobotRepo;
  let key: string;
  let keyId: string;
  const failures = [1, 4];
  beforeAll(async () => {
    const org = await createTestOrg();
    repo = await leRobotRepo(org.id, {
      version: codebase,
      episodes: 6,
      cameras: ["observation.images.front", "observation.images.wrist"],
      episodesPerFile: 2,
      chunksSize: 4,
      extra: (e) => ({ outcome: failures.includes(e) ? "failure" : "success" }),
    });
    const issued = await createTestKey(org.id);
    key = issued.secret;
    keyId = issued.id;
  }, 180_000);
  afterAll(() => removeRepoDir(repo));

  const cases: [string, Omit<PlanRequest, "datasetId" | "version">][] = [
    ["the failures (and, in v3.0, what their files hold besides)", { filter: { outcome: "failure" } }],
    ["the failures, indices kept", { filter: { outcome: "failure" }, keep_original_indices: true }],
    ["one episode, its data and one camera", { episode_ids: ["<2>"], streams: ["data", "observation.images.front"] }],
    ["the whole version", {}],
  ];

  it.each(cases)("%s: the plan carried out writes what das pull writes", async (_, scope) => {
    const request: PlanRequest = {
      datasetId: repo.datasetId,
      version: "1.0.0",
      ...scope,
      ...(scope.episode_ids ? { episode_ids: [`${repo.datasetId}-000002`] } : {}),
    };
    const before = (await entriesOf(keyId)).length;
    const { summary, plan, pulled, planned } = await both(key, request);
    expect(contents(planned)).toEqual(contents(pulled));
    const lerobot = summary.lerobot!;
    expect(plan.lerobot).toMatchObject({
      codebase_version: codebase,
      episode_indices: lerobot.episode_indices,
      requested: lerobot.requested,
      co_delivered: lerobot.co_delivered,
      left_out: lerobot.left_out,
      meta: lerobot.meta,
      cameras: lerobot.cameras,
      renumbering: lerobot.renumbered?.episodes ?? null,
      loads_as_is: lerobot.loads_as_is,
      loads_with_episode_list: lerobot.loads_with_episode_list,
      missing_files: [],
    });
    // Each planned download is one entry, as each of das pull's; the files the plan hands out by
    // URL (meta/, of no episode) one more.
    const byUrl = plan.files.filter((f) => "url" in f.get);
    const entries = await entriesOf(keyId);
    expect(entries.length - before).toBe(summary.downloads.length + plan.downloads.length + (byUrl.length ? 1 : 0));
    expect(plan.downloads.length).toBe(summary.downloads.length);
    const planEntry = entries.find((e) => e.id.startsWith("pl_") && entries.indexOf(e) >= before)!;
    expect(planEntry).toMatchObject({ channel: "api", episode_count: 0, file_count: byUrl.length });
    expect(planEntry.requested_scope.paths).toEqual(byUrl.map((f) => f.path));
    // meta/ never comes as the version's own, for every episode, unless all of them are pulled.
    const meta = plan.files.filter((f) => f.path.startsWith("meta/"));
    expect(meta.every((f) => "url" in f.get)).toBe(true);
    if (scope.filter) expect(plan.files.some((f) => f.path.startsWith(".das/"))).toBe(false);
  });
});

describe("a version of our own format", () => {
  let stored: StoredVersion;
  beforeAll(async () => {
    stored = await storedVersion({ episodes: 5, seed: 41, fileBytes: [200, 900] });
  }, 120_000);

  it.each([
    ["the whole version", {}],
    ["two episodes, one stream", { episode_ids: ["<0>", "<3>"], streams: ["cam"] }],
  ] as const)("%s: the plan carried out writes what das pull writes", async (_, scope) => {
    const request: PlanRequest = {
      datasetId: stored.datasetId,
      version: stored.version,
      ...("streams" in scope ? { streams: [...scope.streams] } : {}),
      ...("episode_ids" in scope
        ? { episode_ids: [stored.episodes[0]!.episode_id, stored.episodes[3]!.episode_id] }
        : {}),
    };
    const { plan, pulled, planned } = await both(stored.key, request);
    expect(contents(planned)).toEqual(contents(pulled));
    expect(plan.lerobot).toBeNull();
    // A file of no episode comes by its own URL, never through a download.
    const readme = plan.files.find((f) => f.path === "README.md");
    if (readme) expect(Object.keys(readme.get)).toEqual(["url"]);
  });

  it("refuses what das pull refused: an unknown stream, episodes without files", async () => {
    const unknown = await call(api.POST, `/api/v1/datasets/${stored.datasetId}/versions/1.0.0/plan`, {
      method: "POST",
      key: stored.key,
      body: { streams: ["nope"] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toContain("Unknown streams for");
    const missing = await call(api.POST, `/api/v1/datasets/${stored.datasetId}/versions/1.0.0/plan`, {
      method: "POST",
      key: stored.key,
      body: { episode_ids: ["no-such-episode"] },
    });
    expect(missing.status).toBe(400);
    const stranger = await createTestKey((await createTestOrg()).id);
    const hidden = await call(api.POST, `/api/v1/datasets/${stored.datasetId}/versions/1.0.0/plan`, {
      method: "POST",
      key: stranger.secret,
      body: {},
    });
    expect(hidden.status).toBe(404);
  });
});

describe("a fingerprinted LeRobot v3.0 version", () => {
  let repo: LeRobotRepo;
  const holders: { key: string; keyId: string; licenceId: string }[] = [];
  beforeAll(async () => {
    const org = await createTestOrg();
    repo = await leRobotRepo(org.id, {
      version: "v3.0",
      episodes: 6,
      episodesPerFile: 2,
      extra: (e) => ({ outcome: [1, 4].includes(e) ? "failure" : "success" }),
    });
    for (const organizationId of [org.id, (await createTestOrg()).id]) {
      if (organizationId !== org.id) await grant(organizationId, repo.datasetId, "1.0.0");
      const issued = await createTestKey(organizationId);
      holders.push({
        key: issued.secret,
        keyId: issued.id,
        licenceId: await licenceOf(organizationId, repo.datasetId, "1.0.0"),
      });
    }
    await fingerprint(repo.datasetId, "1.0.0");
  }, 240_000);
  afterAll(() => removeRepoDir(repo));

  it.each([
    ["the failures (meta/ rendered, data renumbered)", { filter: { outcome: "failure" } }],
    ["the whole version", {}],
  ] as const)("%s: each licence's plan names its own copies, and carried out gets them", async (_, scope) => {
    const rendered: Set<string>[] = [];
    for (const h of holders) {
      const before = (await entriesOf(h.keyId)).length;
      const plan = await planOf(h.key, { datasetId: repo.datasetId, version: "1.0.0", ...scope });
      // Every file checked against the plan's size and sha256 as it is fetched (the downloads deliver copies).
      await carryOutPlan(plan, newDir("das-plan-fingerprinted-"), h.key);
      const copies = await copiesOf(h.licenceId);
      // The version's own files are the licence's copies (by its downloads or by URL); the rest is
      // meta/ rendered for it.
      const made = plan.files.filter((f) => "url" in f.get && new URL(f.get.url).pathname.includes("/_rendered/"));
      for (const f of plan.files.filter((f) => !made.includes(f))) {
        expect(f.sha256, f.path).toBe(copies.get(f.path)!.sha256);
        expect(f.size_bytes, f.path).toBe(copies.get(f.path)!.size_bytes);
        if ("url" in f.get) expect(new URL(f.get.url).pathname).toContain(`/copies/${h.licenceId}/`);
      }
      expect(made.every((f) => f.path.startsWith("meta/"))).toBe(true);
      expect(made.length > 0).toBe("filter" in scope);
      const byUrl = plan.files.filter((f) => "url" in f.get);
      const entry = (await entriesOf(h.keyId)).slice(before).find((e) => e.id.startsWith("pl_"))!;
      expect(entry.files_sha256).toBe(filesDigest(byUrl.map((f) => ({ path: f.path, sha256: f.sha256 }))));
      expect(entry.total_bytes).toBe(byUrl.reduce((n, f) => n + f.size_bytes, 0));
      rendered.push(new Set(made.map((f) => f.sha256)));
    }
    // No rendered file of one licence's is another's.
    expect([...rendered[0]!].filter((sha) => rendered[1]!.has(sha))).toEqual([]);
  });

  it("is a 503 with Retry-After while the licence's copies are being made", async () => {
    const org = await createTestOrg();
    await grant(org.id, repo.datasetId, "1.0.0");
    const key = await createTestKey(org.id);
    const answer = await call(api.POST, `/api/v1/datasets/${repo.datasetId}/versions/1.0.0/plan`, {
      method: "POST",
      key: key.secret,
      body: {},
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("30");
    expect(await entriesOf(key.id)).toEqual([]);
  });
});

describe("the Hub view and the plan", () => {
  it("name the same revision", async () => {
    const org = await createTestOrg();
    const stored = await storedVersion({ episodes: 2, seed: 43, fileBytes: [10, 20] });
    await grant(org.id, stored.datasetId, stored.version);
    const key = (await createTestKey(org.id)).secret;
    const plan = await planOf(key, { datasetId: stored.datasetId, version: stored.version });
    const { GET } = await import("../../app/hub/[[...path]]/route");
    const info = await call(GET, `/hub/api/datasets/das/${stored.datasetId}/revision/${stored.version}`, { key });
    expect(info.json.sha).toBe(plan.revision);
  });
});
