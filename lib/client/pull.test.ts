import { mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppServer, type AppServer } from "../testing/app-server";
import { disclosuresOf, filesUnder, sha256Of, storedVersion, type StoredVersion } from "../testing/pull-fixtures";
import { ApiClient, apiBase, type PlanDocument, type PlannedFile } from "./api";
import { checkPlan, narrowed } from "./plan";
import { carryOutPlan, pull } from "./pull";
import { backoffSeconds, retryAfterSeconds } from "./retry";

const planned = (p: string, get: PlannedFile["get"], episodes: string[] = ["a"]): PlannedFile => ({
  path: p,
  size_bytes: 1,
  sha256: "0".repeat(64),
  episode_ids: episodes,
  stream: "cam",
  get,
  transform: null,
});
const planOf = (files: PlannedFile[], downloads = 1): PlanDocument => ({
  dataset_id: "ds",
  version: "1.0.0",
  revision: "0".repeat(40),
  codebase_version: null,
  episode_ids: ["a"],
  downloads: Array.from({ length: downloads }, () => ({ dataset_id: "ds", version: "1.0.0" })),
  files,
  unplannable: [],
  expires_at: "2030-01-01T00:00:00.000Z",
  lerobot: null,
});

describe("checking the service's plan before anything is fetched", () => {
  const asked = { datasetId: "ds", version: "1.0.0" };
  const check = (plan: PlanDocument) => () => checkPlan(plan, "/tmp/d", asked);

  it("refuses paths that would leave the directory, or land on das's own records", () => {
    for (const bad of ["../x", "/etc/passwd", "a/../../x", "a//b", "a\\b", "./a", "a\u001bb"])
      expect(check(planOf([planned(bad, { download: 0, episode_id: "a" })])), bad).toThrow(/unsafe path/);
    for (const own of ["das-provenance.json", ".das/original/x.parquet", "a.bin.das-partial"])
      expect(check(planOf([planned(own, { download: 0, episode_id: "a" })])), own).toThrow(/its own records/);
    expect(check(planOf([planned("a/b.mp4", { download: 0, episode_id: "a" })]))).not.toThrow();
  });

  it("refuses a path given twice or under another file, a download it does not list, a URL that is not HTTP(S), another version", () => {
    const get = { download: 0, episode_id: "a" };
    expect(check(planOf([planned("a", get), planned("a", get)]))).toThrow(/twice/);
    expect(check(planOf([planned("a", get), planned("a/b", get)]))).toThrow(/a file under it/);
    expect(check(planOf([planned("a", { download: 1, episode_id: "a" })]))).toThrow(/does not list/);
    expect(check(planOf([planned("a", { url: "file:///etc/passwd" })]))).toThrow(/not HTTP/);
    expect(check({ ...planOf([]), version: "2.0.0" })).toThrow(/is for ds@2.0.0/);
    const other = planOf([planned("a", get)]);
    other.downloads[0] = { dataset_id: "elsewhere", version: "1.0.0" };
    expect(check(other)).toThrow(/lists a download of elsewhere@1.0.0/);
  });

  it("cuts a download down to the episodes its missing files are requested with, in place of its filter", () => {
    const body = { dataset_id: "ds", version: "1.0.0", filter: { outcome: "failure" }, streams: ["cam"] };
    const files = [
      planned("a1", { download: 0, episode_id: "a" }),
      planned("a2", { download: 0, episode_id: "a" }),
      planned("b1", { download: 0, episode_id: "b" }, ["b", "z"]),
    ];
    expect(narrowed(body, files, true)).toEqual([body]);
    expect(narrowed(body, files, false)).toEqual([
      { dataset_id: "ds", version: "1.0.0", streams: ["cam"], episode_ids: ["a", "b"] },
    ]);
    // Within the API's body size: a list of long ids in as many bodies as it takes.
    const many = Array.from({ length: 5000 }, (_, i) =>
      planned(`f${i}`, { download: 0, episode_id: `${"e".repeat(190)}${i}` }),
    );
    const bodies = narrowed(body, many, false);
    expect(bodies.length).toBeGreaterThan(1);
    expect(bodies.flatMap((b) => b.episode_ids)).toHaveLength(5000);
    for (const b of bodies) expect(JSON.stringify(b).length).toBeLessThan(1_000_000);
  });
});

describe("client helpers", () => {
  it("reads Retry-After as seconds or an HTTP date, and backs off exponentially with jitter", () => {
    expect(retryAfterSeconds("17")).toBe(17);
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds("soon")).toBeUndefined();
    expect(retryAfterSeconds(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(30);
    expect(backoffSeconds(1)).toBeLessThanOrEqual(1);
    expect(backoffSeconds(4)).toBeGreaterThanOrEqual(6);
    expect(backoffSeconds(4)).toBeLessThanOrEqual(8);
    expect(backoffSeconds(30)).toBeLessThanOrEqual(60);
  });

  it("accepts the service's address with or without /api/v1", () => {
    expect(apiBase("https://das.example.com")).toBe("https://das.example.com/api/v1");
    expect(apiBase("https://das.example.com/api/v1/")).toBe("https://das.example.com/api/v1");
    expect(apiBase("http://127.0.0.1:3000/prefix")).toBe("http://127.0.0.1:3000/prefix/api/v1");
    expect(() => apiBase("not a url")).toThrow(/DAS_API_URL/);
  });
});

describe("pull against the server and the store", () => {
  let server: AppServer;
  let v: StoredVersion;
  const dirs: string[] = [];
  const newDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), "das-pull-"));
    dirs.push(dir);
    return dir;
  };
  const sink = { write: () => true };
  const expectComplete = (dir: string) => {
    expect(filesUnder(dir)).toEqual(v.files.map((f) => f.path).sort());
    for (const f of v.files) expect(sha256Of(path.join(dir, f.path))).toBe(f.sha256);
  };

  beforeAll(async () => {
    [server, v] = await Promise.all([startAppServer(), storedVersion({ episodes: 5, seed: 21, fileBytes: [1, 5000] })]);
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Counts store GETs and API POSTs, and lets a test answer in the store's place. */
  function instrumented(storeAnswer?: (n: number) => Response | undefined) {
    const counts = { storeGets: 0, posts: 0 };
    const storeFetch: typeof fetch = async (input, init) => {
      counts.storeGets++;
      return storeAnswer?.(counts.storeGets) ?? fetch(input, init);
    };
    const apiFetch: typeof fetch = async (input, init) => {
      if (init?.method === "POST") counts.posts++;
      return fetch(input, init);
    };
    return { counts, storeFetch, api: new ApiClient({ baseUrl: server.url, key: v.key, fetch: apiFetch }) };
  }

  it("carries out every download a plan lists, each once, each file through its own", async () => {
    const dir = newDir();
    const { api, counts } = instrumented();
    const request = { episode_ids: v.episodes.map((e) => e.episode_id) };
    const plan = await api.plan(v.datasetId, "1.0.0", request);
    expect(plan.downloads).toHaveLength(1);
    // As the service splits a larger scope (lib/views/requests.test.ts): here 2 + 2 + 1 episodes.
    const ids = [...plan.downloads[0]!.episode_ids!];
    const groups = [ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)];
    const split: PlanDocument = {
      ...plan,
      downloads: groups.map((episode_ids) => ({ ...plan.downloads[0]!, episode_ids })),
      files: plan.files.map((f) => {
        if (!("download" in f.get)) return f;
        const episode = f.get.episode_id;
        return { ...f, get: { download: groups.findIndex((g) => g.includes(episode)), episode_id: episode } };
      }),
    };
    const before = (await disclosuresOf(v.keyId)).length;
    const { summary } = await carryOutPlan(split, {
      api,
      dir,
      datasetId: v.datasetId,
      version: "1.0.0",
      request,
      stderr: sink,
    });
    expect(summary.failed).toEqual([]);
    expect(summary.downloads).toHaveLength(3);
    expect(counts.posts).toBe(4);
    const entries = (await disclosuresOf(v.keyId)).slice(before);
    expect(entries.map((e) => e.file_count)).toEqual([4, 4, 2]);
    expect(entries.map((e) => e.requested_scope.episode_ids)).toEqual(groups);
    expect(filesUnder(dir)).toHaveLength(10);
  });

  it("asks again only for what is missing: a download cut down to the episodes of the files not on disk", async () => {
    const dir = newDir();
    const { api } = instrumented();
    // The whole version: the plan's download asks for all of it.
    const first = await pull({ api, datasetId: v.datasetId, version: "1.0.0", dir, stderr: sink });
    expect(first.failed).toEqual([]);
    const gone = v.episodes[1]!.episode_id;
    const lost = v.files.filter((f) => f.episode_id === gone);
    for (const f of lost) unlinkSync(path.join(dir, f.path));
    const before = (await disclosuresOf(v.keyId)).length;
    const again = await pull({ api, datasetId: v.datasetId, version: "1.0.0", dir, stderr: sink });
    expect(again).toMatchObject({ failed: [], downloaded: lost.length, already_verified: first.files - lost.length });
    // Not the whole version again (a disclosure of every episode): the one episode whose files were missing.
    // (The plan's own entry, for the files of no episode it hands out by URL, is made on every run.)
    const entries = (await disclosuresOf(v.keyId)).slice(before).filter((e) => e.id.startsWith("dl_"));
    expect(entries.map((e) => [e.requested_scope, e.file_count])).toEqual([[{ episode_ids: [gone] }, lost.length]]);
    for (const f of lost) expect(sha256Of(path.join(dir, f.path))).toBe(f.sha256);
  });

  it("requests URLs again when they expire mid-run: a new download, a new disclosure, only for the files left", async () => {
    const dir = newDir();
    let jumped = false;
    const counts = { storeGets: 0, posts: 0 };
    // After four files the clock passes the URLs' expiry, until the next download is issued.
    const now = () => Date.now() + (jumped ? 16 * 60_000 : 0);
    const storeFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (++counts.storeGets === 4) jumped = true;
      return res;
    };
    const api = new ApiClient({
      baseUrl: server.url,
      key: v.key,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (init?.method === "POST") {
          counts.posts++;
          jumped = false;
        }
        return res;
      },
    });
    const before = (await disclosuresOf(v.keyId)).length;
    const episodeIds = v.episodes.map((e) => e.episode_id);
    const summary = await pull({
      api,
      datasetId: v.datasetId,
      version: "1.0.0",
      dir,
      episodeIds,
      concurrency: 1,
      fetch: storeFetch,
      now,
      stderr: sink,
    });
    expect(summary.failed).toEqual([]);
    expect(summary.url_renewals).toBe(1);
    expect(summary.downloads).toHaveLength(2);
    expect(counts.posts).toBe(3);
    expect(counts.storeGets).toBe(10);
    const entries = (await disclosuresOf(v.keyId)).slice(before);
    expect(entries.map((e) => e.id)).toEqual(summary.downloads);
    // Files go in manifest (path) order, two per episode: the renewal asks for the three episodes left.
    const byPath = v.files
      .filter((f) => f.episode_id !== null)
      .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
    const left = [...new Set(byPath.slice(4).map((f) => f.episode_id!))];
    expect(entries[0]!.file_count).toBe(10);
    expect(entries[1]!.file_count).toBe(6);
    expect([...entries[1]!.requested_scope.episode_ids!].sort()).toEqual(left.sort());
    expect(filesUnder(dir)).toEqual(byPath.map((f) => f.path).sort());
  });

  it("requests URLs again when the store refuses one (403), and gives up on a second refusal", async () => {
    const dir = newDir();
    const forbidden = () =>
      new Response("<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>", { status: 403 });
    const once = instrumented((n) => (n === 2 ? forbidden() : undefined));
    const summary = await pull({
      api: once.api,
      datasetId: v.datasetId,
      version: "1.0.0",
      dir,
      concurrency: 1,
      fetch: once.storeFetch,
      stderr: sink,
    });
    expect(summary.failed).toEqual([]);
    expect(summary.url_renewals).toBe(1);
    expect(once.counts.posts).toBe(3);
    expectComplete(dir);

    const always = instrumented(() => forbidden());
    const failing = await pull({
      api: always.api,
      datasetId: v.datasetId,
      version: "1.0.0",
      dir: newDir(),
      concurrency: 2,
      fetch: always.storeFetch,
      stderr: sink,
    });
    expect(failing.failed).toHaveLength(v.files.length);
    expect(failing.failed[0]!.reason).toBe("the store refused the URL (403) even after it was requested again");
    expect(failing.downloaded).toBe(0);
  });

  it("retries the store's 503 after Retry-After and still verifies", async () => {
    const dir = newDir();
    const flaky = instrumented((n) =>
      n === 1 ? new Response("slow down", { status: 503, headers: { "retry-after": "1" } }) : undefined,
    );
    const started = Date.now();
    const summary = await pull({
      api: flaky.api,
      datasetId: v.datasetId,
      version: "1.0.0",
      dir,
      concurrency: 1,
      fetch: flaky.storeFetch,
      stderr: sink,
    });
    expect(summary.failed).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(flaky.counts.storeGets).toBe(v.files.length + 1);
    expectComplete(dir);
  });

  it("falls back to a whole fetch when the store ignores Range", async () => {
    const dir = newDir();
    const target = v.files.find((f) => f.size_bytes > 10)!;
    const { writeFileSync, mkdirSync } = await import("node:fs");
    mkdirSync(path.dirname(path.join(dir, target.path)), { recursive: true });
    writeFileSync(path.join(dir, `${target.path}.das-partial`), v.content.get(target.path)!.subarray(0, 5));
    const noRange: typeof fetch = (input, init) => fetch(input, { ...init, headers: {} });
    const summary = await pull({
      api: instrumented().api,
      datasetId: v.datasetId,
      version: "1.0.0",
      dir,
      fetch: noRange,
      stderr: sink,
    });
    expect(summary.failed).toEqual([]);
    expect(summary.range_ignored).toBe(1);
    expect(summary.resumed).toBe(0);
    expectComplete(dir);
  });
});

describe("the API client's waits and errors", () => {
  const envelope = (status: number, code: string, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify({ error: { code, message: `${code} happened`, request_id: "req_abc123" } }), {
      status,
      headers: { "content-type": "application/json", ...headers },
    });
  const page = () => new Response(JSON.stringify({ datasets: [], next_cursor: null }), { status: 200 });

  it("waits Retry-After seconds on 429 and 503, then succeeds", async () => {
    const answers = [
      envelope(429, "rate_limited", { "retry-after": "7" }),
      envelope(503, "unavailable", { "retry-after": "2" }),
      page(),
    ];
    const slept: number[] = [];
    const waits: unknown[] = [];
    const api = new ApiClient({
      baseUrl: "http://das.test",
      key: "k",
      fetch: async () => answers.shift()!,
      sleep: async (ms) => void slept.push(ms),
      onWait: (w) => waits.push(w),
    });
    expect(await api.listDatasets()).toEqual([]);
    expect(slept).toEqual([7000, 2000]);
    expect(waits).toEqual([
      { status: 429, seconds: 7, attempt: 1, what: "GET /api/v1/datasets" },
      { status: 503, seconds: 2, attempt: 2, what: "GET /api/v1/datasets" },
    ]);
  });

  it("asks again after a gateway's 502 or 504 what is safe to repeat, and only that", async () => {
    const gateway = (status: number) => new Response("<html>Bad Gateway</html>", { status });
    const keys: (string | null)[] = [];
    const answers = [gateway(502), gateway(504), page(), gateway(502), envelope(422, "scope_too_large")];
    const api = new ApiClient({
      baseUrl: "http://das.test",
      key: "k",
      sleep: async () => {},
      fetch: async (_url, init) => {
        keys.push(new Headers(init?.headers).get("idempotency-key"));
        return answers.shift()!;
      },
    });
    expect(await api.listDatasets()).toEqual([]);
    // A download carries its Idempotency-Key: the same one again, so the service returns the same download.
    await expect(api.createDownload({ dataset_id: "d", version: "1.0.0" })).rejects.toMatchObject({ status: 422 });
    expect(keys.slice(3)).toEqual([keys[3], keys[3]]);
    expect(keys[3]).toMatch(/^[0-9a-f-]{36}$/);
    // So does a plan: asked again with its key, the service answers the same plan.
    answers.push(gateway(502), envelope(422, "scope_too_large"));
    await expect(api.plan("d", "1.0.0", {})).rejects.toMatchObject({ status: 422 });
    expect(keys.slice(5)).toEqual([keys[5], keys[5]]);
    expect(keys[5]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[5]).not.toBe(keys[3]);
    // An acknowledgement has no key: a 502 is the answer, not a reason to acknowledge twice.
    answers.push(gateway(502), page());
    await expect(api.acknowledgeNotice("ntc_1", { statement: "deleted", deleted_paths: [] })).rejects.toMatchObject({
      status: 502,
    });
    expect(answers).toHaveLength(1);
  });

  it("gives up after its attempts with the API's error, shown as `code: message (request_id)`", async () => {
    let calls = 0;
    const api = new ApiClient({
      baseUrl: "http://das.test",
      key: "k",
      maxAttempts: 3,
      sleep: async () => {},
      fetch: async () => (calls++, envelope(503, "unavailable")),
    });
    const error = await api.listDatasets().catch((e: unknown) => e);
    expect(calls).toBe(3);
    expect(String(error)).toBe("unavailable: unavailable happened (req_abc123)");
  });

  it("does not retry other errors, and sends the same Idempotency-Key on every retry of a download", async () => {
    const keys: (string | null)[] = [];
    const answers = [envelope(503, "unavailable", { "retry-after": "1" }), envelope(422, "scope_too_large")];
    const api = new ApiClient({
      baseUrl: "http://das.test",
      key: "k",
      sleep: async () => {},
      fetch: async (_url, init) => {
        keys.push(new Headers(init?.headers).get("idempotency-key"));
        return answers.shift()!;
      },
    });
    await expect(api.createDownload({ dataset_id: "d", version: "1.0.0" })).rejects.toMatchObject({
      code: "scope_too_large",
      status: 422,
    });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
  });
});
