import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppServer, type AppServer } from "../testing/app-server";
import { disclosuresOf, filesUnder, sha256Of, storedVersion, type StoredVersion } from "../testing/pull-fixtures";
import { ApiClient, apiBase, type ManifestDocument, type ManifestFile } from "./api";
import { filesInScope, planRequests } from "./plan";
import { destination, pull } from "./pull";
import { backoffSeconds, retryAfterSeconds } from "./retry";

const file = (p: string, episode: string | null, stream: string | null = "cam"): ManifestFile => ({
  path: p,
  episode_id: episode,
  episode_ids: episode === null ? [] : [episode],
  stream,
  size_bytes: 1,
  sha256: "0".repeat(64),
  media_type: "application/octet-stream",
});

describe("planning download requests", () => {
  const scope = { datasetId: "ds", version: "1.0.0" };
  // 6 episodes of 2 files (cam, joints) and one file of the whole version.
  const files = [
    file("README.md", null, null),
    ...["a", "b", "c", "d", "e", "f"].flatMap((e) => [file(`${e}/cam`, e), file(`${e}/joints`, e, "joints")]),
  ];

  it("asks for the whole version at once when it fits", () => {
    const { requests } = planRequests(scope, files, files, { limit: 13 });
    expect(requests).toEqual([{ body: { dataset_id: "ds", version: "1.0.0" }, files }]);
  });

  it("splits into requests that each resolve to at most `limit` files and together cover every file once", () => {
    const inScope = files.filter((f) => f.episode_id !== null);
    const { requests, unplannable } = planRequests(
      { ...scope, episodeIds: ["a", "b", "c", "d", "e", "f"] },
      inScope,
      inScope,
      { limit: 5 },
    );
    expect(unplannable).toEqual([]);
    // Whole episodes of 2 files each: 2 episodes per request.
    expect(requests.map((r) => r.body.episode_ids)).toEqual([
      ["a", "b"],
      ["c", "d"],
      ["e", "f"],
    ]);
    expect(requests.flatMap((r) => r.files)).toEqual(inScope);
  });

  it("sizes a request by everything its episodes resolve to, not only the missing files", () => {
    const inScope = files.filter((f) => f.episode_id !== null);
    const pending = inScope.filter((f) => f.stream === "cam"); // the joints files are on disk already
    const { requests } = planRequests({ ...scope, episodeIds: ["a", "b", "c", "d", "e", "f"] }, inScope, pending, {
      limit: 4,
    });
    expect(requests.map((r) => r.body.episode_ids)).toEqual([
      ["a", "b"],
      ["c", "d"],
      ["e", "f"],
    ]);
    expect(requests.flatMap((r) => r.files)).toEqual(pending);
  });

  it("keeps the user's filter and streams when one request covers the scope", () => {
    const inScope = files.filter((f) => f.stream === "cam");
    const { requests } = planRequests(
      { ...scope, filter: { outcome: "failure" }, streams: ["cam"] },
      inScope,
      inScope,
      { filterCovers: true, limit: 10 },
    );
    expect(requests.map((r) => r.body)).toEqual([
      { dataset_id: "ds", version: "1.0.0", streams: ["cam"], filter: { outcome: "failure" } },
    ]);
  });

  it("fetches a missing file of the whole version with a whole-version request, or reports that it cannot", () => {
    const readme = files[0]!;
    expect(planRequests(scope, files, [readme], { limit: 13 }).requests).toEqual([
      { body: { dataset_id: "ds", version: "1.0.0" }, files: [readme] },
    ]);
    const tooBig = planRequests(scope, files, [readme, files[1]!], { limit: 12 });
    expect(tooBig.unplannable.map((u) => u.file)).toEqual([readme]);
    expect(tooBig.unplannable[0]!.reason).toContain("13 files (more than 12)");
    expect(tooBig.requests).toEqual([
      { body: { dataset_id: "ds", version: "1.0.0", episode_ids: ["a"] }, files: [files[1]] },
    ]);
  });

  it("splits an episode larger than a request by stream", () => {
    const big = [file("x/1", "x"), file("x/2", "x"), file("x/3", "x", "joints")];
    const { requests } = planRequests({ ...scope, episodeIds: ["x"] }, big, big, { limit: 2 });
    expect(requests.map((r) => r.body)).toEqual([
      { dataset_id: "ds", version: "1.0.0", episode_ids: ["x"], streams: ["cam"] },
      { dataset_id: "ds", version: "1.0.0", episode_ids: ["x"], streams: ["joints"] },
    ]);
  });

  it("fetches a file shared by several chosen episodes once, with the first of them, and sizes requests by what they resolve to", () => {
    const shared = (p: string, episodes: string[], stream = "cam"): ManifestFile => ({
      ...file(p, episodes.length === 1 ? episodes[0]! : null, stream),
      episode_ids: episodes,
    });
    const files = [
      shared("v0", ["a", "b"]),
      shared("d0", ["a", "b"], "joints"),
      shared("v1", ["c", "d"]),
      shared("d1", ["c"], "joints"),
      shared("d2", ["d"], "joints"),
    ];
    const chosen = new Set(["a", "b", "c", "d"]);
    const { requests, unplannable } = planRequests({ ...scope, episodeIds: [...chosen] }, files, files, {
      limit: 3,
      episodes: chosen,
    });
    expect(unplannable).toEqual([]);
    // a and b resolve to the same two files; c and d to v1, d1, d2 (three).
    expect(requests.map((r) => r.body.episode_ids)).toEqual([["a"], ["c", "d"]]);
    expect(requests.map((r) => r.files.map((f) => f.path))).toEqual([
      ["v0", "d0"],
      ["v1", "d1", "d2"],
    ]);
    // Only chosen episodes are named, even where a file holds others.
    const one = planRequests({ ...scope, episodeIds: ["b"] }, files.slice(0, 2), files.slice(0, 2), {
      limit: 10,
      episodes: new Set(["b"]),
    });
    expect(one.requests.map((r) => r.body)).toEqual([{ dataset_id: "ds", version: "1.0.0", episode_ids: ["b"] }]);
  });

  it("with includeVersionFiles, asks for the files of the whole version along with an episode request, whatever the streams", () => {
    const meta = file("meta/info.json", null, null);
    const inScope = [meta, ...files.slice(1, 5)]; // a and b, cam and joints
    const chosen = new Set(["a", "b"]);
    const whole = planRequests({ ...scope, episodeIds: ["a", "b"], includeVersionFiles: true }, inScope, inScope, {
      limit: 13,
      episodes: chosen,
    });
    expect(whole.requests.map((r) => r.body)).toEqual([
      { dataset_id: "ds", version: "1.0.0", episode_ids: ["a", "b"], include_version_files: true },
    ]);
    expect(whole.requests[0]!.files).toEqual([...files.slice(1, 5), meta]);
    // Only meta/ left to fetch: a request of the smallest chosen episode carries it.
    const rest = planRequests(
      { ...scope, episodeIds: ["a", "b"], streams: ["cam"], includeVersionFiles: true },
      inScope,
      [meta],
      { limit: 13, episodes: chosen },
    );
    expect(rest.requests).toEqual([
      {
        body: { dataset_id: "ds", version: "1.0.0", streams: ["cam"], episode_ids: ["a"], include_version_files: true },
        files: [meta],
      },
    ]);
    // A whole version with streams: one request with the flag.
    const manifest = { files, streams: ["cam", "joints"] } as ManifestDocument;
    const camOnly = filesInScope(manifest, { ...scope, streams: ["cam"], includeVersionFiles: true }, null);
    expect(camOnly.map((f) => f.path)).toEqual(["README.md", "a/cam", "b/cam", "c/cam", "d/cam", "e/cam", "f/cam"]);
    expect(
      planRequests({ ...scope, streams: ["cam"], includeVersionFiles: true }, camOnly, camOnly, {
        limit: 13,
      }).requests.map((r) => r.body),
    ).toEqual([{ dataset_id: "ds", version: "1.0.0", streams: ["cam"], include_version_files: true }]);
  });

  it("selects the scope's files from a manifest", () => {
    const manifest = { files, streams: ["cam", "joints"] } as ManifestDocument;
    expect(filesInScope(manifest, { ...scope, streams: ["joints"] }, new Set(["b"])).map((f) => f.path)).toEqual([
      "b/joints",
    ]);
    expect(filesInScope(manifest, scope, null)).toHaveLength(13);
  });

  it("refuses manifest paths that would leave the directory", () => {
    for (const bad of ["../x", "/etc/passwd", "a/../../x", "a//b", "a\\b", "./a"])
      expect(() => destination("/tmp/d", bad), bad).toThrow(/unsafe path/);
    expect(destination("/tmp/d", "a/b.mp4")).toBe("/tmp/d/a/b.mp4");
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

  it("splits a scope into several downloads when it is larger than one request may be", async () => {
    const dir = newDir();
    const { api, counts } = instrumented();
    const before = (await disclosuresOf(v.keyId)).length;
    const summary = await pull({
      api,
      datasetId: v.datasetId,
      version: "1.0.0",
      dir,
      episodeIds: v.episodes.map((e) => e.episode_id),
      maxFilesPerRequest: 4,
      stderr: sink,
    });
    expect(summary.failed).toEqual([]);
    // 5 episodes of 2 files, at most 4 files per request: 2 + 2 + 1 episodes.
    expect(summary.downloads).toHaveLength(3);
    expect(counts.posts).toBe(3);
    const entries = (await disclosuresOf(v.keyId)).slice(before);
    expect(entries.map((e) => e.file_count)).toEqual([4, 4, 2]);
    expect(entries.flatMap((e) => e.requested_scope.episode_ids)).toEqual(
      v.episodes.map((e) => e.episode_id).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    );
    expect(filesUnder(dir)).toHaveLength(10);
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
    expect(counts.posts).toBe(2);
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
    expect(once.counts.posts).toBe(2);
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
