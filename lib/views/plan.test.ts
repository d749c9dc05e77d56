import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../client/api";
import { carryOutPlan } from "../client/pull";
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
import { inProcessFetch } from "../testing/in-process-fetch";
import * as api from "../../app/api/[[...path]]/route";
import type { Plan, PlanRequest } from "./plan";

// The plan decides on the service what a pull writes (decision 0123). Carried out by das pull's
// own code (lib/client/pull.ts's carryOutPlan, in-process against the same service), every file
// it names is written where it says, as fetched or as its transform says; its downloads and the
// files it hands out by URL are disclosed as it says, and no more.

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

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** Every file under a directory, but das pull's own bookkeeping. */
function filesIn(dir: string, prefix = ""): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (relative === ".das" || relative === "das-provenance.json") return [];
    return entry.isDirectory() ? filesIn(dir, relative) : [relative];
  });
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

/** The plan, carried out by das pull's code into a directory of its own: exactly its files, each as it says. */
async function carriedOut(key: string, request: PlanRequest) {
  const plan = await planOf(key, request);
  const dir = newDir("das-plan-carried-");
  const { datasetId, version, ...body } = request;
  const { summary } = await carryOutPlan(plan as never, {
    api: new ApiClient({ baseUrl: "http://localhost", key, fetch: inProcessFetch() }),
    dir,
    datasetId,
    version,
    request: body,
    stderr: sink,
  });
  expect(summary.failed).toEqual([]);
  expect(filesIn(dir).sort()).toEqual(plan.files.map((f) => f.path).sort());
  for (const file of plan.files) {
    const fetched = file.transform ? path.join(dir, ".das/original", file.path) : path.join(dir, file.path);
    expect(sha256(fetched), file.path).toBe(file.sha256);
    // Written from the fetched bytes; the same bytes only where the transform moves and drops nothing.
    const moves =
      file.transform &&
      (file.transform.dropped_episode_indices.length > 0 ||
        file.transform.episodes.some(
          (e) => e.new_episode_index !== e.episode_index || e.new_index_from !== e.index_from,
        ));
    if (moves) expect(sha256(path.join(dir, file.path)), file.path).not.toBe(file.sha256);
  }
  return { summary, plan, dir };
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
    const { summary, plan } = await carriedOut(key, request);
    expect(plan.lerobot).toMatchObject({ codebase_version: codebase, missing_files: [] });
    expect(summary.lerobot).toMatchObject({
      episode_indices: plan.lerobot!.episode_indices,
      left_out: plan.lerobot!.left_out,
      loads_as_is: plan.lerobot!.loads_as_is,
    });
    // v3.0 data files are transformed where LeRobot could not open them as delivered, never kept indices.
    const transformed = plan.files.filter((f) => f.transform);
    if (scope.keep_original_indices || codebase === "v2.1") expect(transformed).toEqual([]);
    if (codebase === "v3.0" && scope.filter && !scope.keep_original_indices)
      expect(transformed.length).toBeGreaterThan(0);
    // Each planned download is one entry, as each of das pull's; the files the plan hands out by
    // URL (meta/, of no episode) one more.
    const byUrl = plan.files.filter((f) => "url" in f.get);
    const entries = await entriesOf(keyId);
    expect(entries.length - before).toBe(plan.downloads.length + (byUrl.length ? 1 : 0));
    expect(summary.downloads).toHaveLength(plan.downloads.length);
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
    const { plan, dir } = await carriedOut(stored.key, request);
    expect(plan.lerobot).toBeNull();
    expect(existsSync(path.join(dir, ".das"))).toBe(false);
    // A file of no episode comes by its own URL, never through a download.
    const readme = plan.files.find((f) => f.path === "README.md");
    if (readme) expect(Object.keys(readme.get)).toEqual(["url"]);
  });

  it("with an Idempotency-Key, answers a retry with the same plan and no second entry; another body is 409", async () => {
    const url = `/api/v1/datasets/${stored.datasetId}/versions/1.0.0/plan`;
    const headers = { "Idempotency-Key": `plan-${stored.keyId}` };
    const before = (await entriesOf(stored.keyId)).length;
    const first = await call(api.POST, url, { method: "POST", key: stored.key, headers, body: {} });
    expect(first.status, first.text).toBe(200);
    const byUrl = (first.json as Plan).files.filter((f) => "url" in f.get);
    expect(byUrl.map((f) => f.path)).toContain("README.md");
    const again = await call(api.POST, url, { method: "POST", key: stored.key, headers, body: {} });
    expect(again.status, again.text).toBe(200);
    // The same URLs, signed at the same time, and one entry for both answers.
    expect(again.json).toEqual(first.json);
    expect((await entriesOf(stored.keyId)).length - before).toBe(1);
    const other = await call(api.POST, url, { method: "POST", key: stored.key, headers, body: { streams: ["cam"] } });
    expect(other.status, other.text).toBe(409);
    expect(other.json.error.code).toBe("idempotency_conflict");
    // Without a key, each plan is an entry of its own.
    await planOf(stored.key, { datasetId: stored.datasetId, version: stored.version });
    expect((await entriesOf(stored.keyId)).length - before).toBe(2);
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
      // Every file checked against the plan's size and sha256 as it is fetched (the downloads deliver copies).
      const { plan } = await carriedOut(h.key, { datasetId: repo.datasetId, version: "1.0.0", ...scope });
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
