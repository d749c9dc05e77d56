import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { das } from "../testing/pull-fixtures";
import { ApiClient, type ManifestDocument, type ManifestFile, type PlanDocument } from "./api";
import { describeSummary, pull } from "./pull";

// `das pull` against a malicious service: the API and the store are served by the test itself on
// 127.0.0.1 and answer what an attacker would. Nothing they send may make the client write outside
// --dir, write an unbounded body, retitle the terminal, or leave behind metadata of episodes that
// were never delivered. The same service, honest, then changes what it plans between two pulls into
// one directory: what das says of the files it fetches again.

const dirs: string[] = [];
const newDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const sink = { write: () => true };
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const DATASET = "hostile";

/** A file the store serves: its bytes, or a handler that answers however it likes. */
type Served = { file: ManifestFile; body: Buffer | ((response: ServerResponse) => void) };

type Hostile = {
  url: string;
  /** Every POST /downloads body. */
  downloads: Record<string, unknown>[];
  /** Every request to the store, by path. */
  storeGets: string[];
  episodes: Record<string, unknown>[];
};

/** What the hostile service changes in the plan it would honestly send, and what a download answers beyond it. */
type Tampering = {
  plan?: (plan: PlanDocument) => PlanDocument;
  /** Files a download's answer lists besides those it resolves to (the client must take only the plan's). */
  extraInDownload?: { path: string; url: string; size_bytes: number; sha256: string }[];
};

/**
 * An API (manifest, episodes, downloads) and a store that serve `files` as their manifest says,
 * resolving a download's scope as the service does: the files holding a requested episode (or
 * every file), the version's own files with `include_version_files`.
 */
async function hostileService(
  files: Served[],
  format?: ManifestDocument["format"],
  episodes: Record<string, unknown>[] = [],
  tampering: Tampering = {},
): Promise<Hostile> {
  const hostile: Hostile = { url: "", downloads: [], storeGets: [], episodes };
  const storeUrl = (file: ManifestFile) => `${hostile.url}/store/${files.findIndex((f) => f.file.path === file.path)}`;
  // The plan an honest service would send for the whole version: a file of episodes through one
  // download, requested with its first episode; a file of none by its own URL.
  const honestPlan = (): PlanDocument => ({
    dataset_id: DATASET,
    version: "1.0.0",
    revision: "0".repeat(40),
    codebase_version: null,
    episode_ids: [...new Set(files.flatMap((f) => f.file.episode_ids))].sort(),
    downloads: [{ dataset_id: DATASET, version: "1.0.0" }],
    files: files.map(({ file }) => ({
      path: file.path,
      size_bytes: file.size_bytes,
      sha256: file.sha256,
      episode_ids: file.episode_ids,
      stream: file.stream,
      get: file.episode_ids.length ? { download: 0, episode_id: file.episode_ids[0]! } : { url: storeUrl(file) },
      transform: null,
    })),
    unplannable: [],
    expires_at: new Date(Date.now() + 900_000).toISOString(),
    lerobot: null,
  });
  const manifest: ManifestDocument = {
    dataset_id: DATASET,
    version: "1.0.0",
    released_at: "2026-01-01T00:00:00.000Z",
    episode_count: new Set(files.flatMap((f) => f.file.episode_ids)).size,
    total_bytes: files.reduce((n, f) => n + f.file.size_bytes, 0),
    streams: [...new Set(files.flatMap((f) => (f.file.stream ? [f.file.stream] : [])))].sort(),
    ...(format ? { format } : {}),
    files: files.map((f) => f.file),
  };
  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url!, "http://127.0.0.1");
    if (url.pathname === `/api/v1/datasets/${DATASET}/versions/1.0.0/manifest`) return json(response, 200, manifest);
    if (url.pathname === `/api/v1/datasets/${DATASET}/versions/1.0.0/episodes`)
      return json(response, 200, {
        dataset_id: DATASET,
        version: "1.0.0",
        total: episodes.length,
        episodes,
        next_cursor: null,
      });
    if (url.pathname === `/api/v1/datasets/${DATASET}/versions/1.0.0/plan` && request.method === "POST")
      return json(response, 200, (tampering.plan ?? ((p) => p))(honestPlan()));
    if (url.pathname === "/api/v1/downloads" && request.method === "POST") {
      let text = "";
      for await (const chunk of request) text += chunk;
      const body = JSON.parse(text) as { episode_ids?: string[]; include_version_files?: boolean };
      hostile.downloads.push(body);
      const chosen = body.episode_ids ? new Set(body.episode_ids) : null;
      const resolved = files.filter(({ file }) =>
        file.episode_ids.length === 0
          ? body.include_version_files || chosen === null
          : chosen === null || file.episode_ids.some((id) => chosen.has(id)),
      );
      return json(response, 201, {
        download_id: `dl_${hostile.downloads.length}`,
        dataset_id: DATASET,
        version: "1.0.0",
        expires_at: new Date(Date.now() + 900_000).toISOString(),
        file_count: resolved.length,
        total_bytes: resolved.reduce((n, f) => n + f.file.size_bytes, 0),
        files: [
          ...resolved.map(({ file: { media_type: _, ...file } }) => ({ ...file, url: storeUrl(file as ManifestFile) })),
          ...(tampering.extraInDownload ?? []).map((extra) => ({
            ...extra,
            episode_id: null,
            episode_ids: [],
            stream: null,
          })),
        ],
        co_delivered_episode_ids: [],
      });
    }
    const stored = /^\/store\/(\d+)$/.exec(url.pathname);
    if (url.pathname.startsWith("/store/")) hostile.storeGets.push(url.pathname);
    const served = stored ? files[Number(stored[1])] : undefined;
    if (served) {
      if (typeof served.body === "function") return served.body(response);
      response.writeHead(200, { "content-length": String(served.body.length) });
      return response.end(served.body);
    }
    json(response, 404, { error: { code: "not_found", message: "not found", request_id: "req_1" } });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  hostile.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return hostile;
}

const served = (p: string, body: Buffer, episodeIds: string[] = [], stream: string | null = null): Served => ({
  file: {
    path: p,
    episode_id: episodeIds.length === 1 ? episodeIds[0]! : null,
    episode_ids: episodeIds,
    stream,
    size_bytes: body.length,
    sha256: sha256(body),
    media_type: "application/octet-stream",
  },
  body,
});

const api = (hostile: Hostile) => new ApiClient({ baseUrl: hostile.url, key: "das_test", maxAttempts: 1 });
const episodeId = (index: number) => `${DATASET}-${String(index).padStart(6, "0")}`;

describe("das pull against a malicious server", () => {
  it("stops reading a body at size_bytes + 1 and reports it, however much the store sends", async () => {
    let sent = 0;
    let closedAfter: number | undefined;
    const chunk = Buffer.alloc(64 * 1024, 7);
    const endless: Served = {
      file: { ...served("big.bin", Buffer.alloc(1000, 7), ["hostile-000001"], "cam").file },
      // Chunked, with no length, and on and on (up to 1 GB) for as long as the client reads.
      body: (response) => {
        response.writeHead(200, { "content-type": "application/octet-stream" });
        response.on("close", () => (closedAfter ??= sent));
        const more = () => {
          while (sent < 1e9 && !response.destroyed) {
            sent += chunk.length;
            if (!response.write(chunk)) return void response.once("drain", more);
          }
          response.end();
        };
        more();
      },
    };
    const hostile = await hostileService([endless]);
    const dir = newDir("das-hostile-long-");
    const rssBefore = process.memoryUsage().rss;
    const summary = await pull({ api: api(hostile), datasetId: DATASET, version: "1.0.0", dir, stderr: sink });
    expect(summary.failed).toEqual([
      { path: "big.bin", reason: "the store sent more than the manifest's 1000 bytes (stopped after 1001)" },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The connection was dropped once the body ran past the size: what the store got rid of is
    // what the sockets' buffers hold, not the gigabyte it meant to send.
    expect(closedAfter).toBeDefined();
    expect(closedAfter!).toBeLessThan(16 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("prints paths and texts from the server escaped, never as terminal control sequences", async () => {
    const retitle = "clip\u001b]0;owned\u0007\u202e4pm.exe";
    const hostile = await hostileService(
      [served("x.bin", Buffer.from("x"), [episodeId(1)], "cam")],
      undefined,
      [
        {
          episode_id: episodeId(1),
          task: `pick\u001b[2J\u009b31m the cup\u001b]0;owned\u0007`,
          environment: "lab\u001b[31m",
          duration_s: 1,
          outcome: "success",
          has_recovery: false,
          contributor: "op\u202e",
          streams: ["cam"],
        },
      ],
      // A path the plan says it cannot deliver, and why: both shown to the user, never obeyed by the terminal.
      { plan: (plan) => ({ ...plan, unplannable: [{ path: `${retitle}.bin`, reason: "too big\u001b[2J" }] }) },
    );
    const dir = newDir("das-hostile-escape-");
    const summary = await pull({ api: api(hostile), datasetId: DATASET, version: "1.0.0", dir, stderr: sink });
    expect(summary.failed.map((f) => f.path)).toEqual([`${retitle}.bin`]);
    const printed = describeSummary(summary);
    expect(printed).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
    expect(printed).toContain("clip\\u001b]0;owned\\u0007\\u202e4pm.exe.bin");

    // The command line, as a user runs it: the summary on stderr, the table of `das episodes`.
    const env = { DAS_API_URL: hostile.url, DAS_API_KEY: `das_${"a".repeat(43)}` };
    const pulled = await das(["pull", `${DATASET}@1.0.0`, "--dir", newDir("das-hostile-cli-")], env);
    expect(pulled.code, pulled.stderr).toBe(1);
    expect(pulled.stderr).toContain("clip\\u001b]0;owned\\u0007\\u202e4pm.exe.bin");
    expect(pulled.stderr).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
    const listed = await das(["episodes", `${DATASET}@1.0.0`], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("pick\\u001b[2J\\u009b31m the cup");
    expect(listed.stdout + listed.stderr).not.toMatch(/[\u001b\u0007\u009b\u202e]/);

    // `das manifest`: its header line is made of the server's words as well as its table.
    const described = await hostileService(
      [served(`${retitle}.bin`, Buffer.from("x"), [episodeId(1)], "cam\u001b[2J")],
      {
        source: "lerobot",
        codebase_version: "v3.0\u001b]0;owned\u0007",
        robot_type: "arm\u202e",
        fps: 30,
        total_frames: 1,
        cameras: [],
      },
    );
    const shown = await das(["manifest", `${DATASET}@1.0.0`], { ...env, DAS_API_URL: described.url });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("streams: cam\\u001b[2J; LeRobot v3.0\\u001b]0;owned\\u0007, arm\\u202e, 30 fps");
    expect(shown.stdout).toContain("clip\\u001b]0;owned\\u0007\\u202e4pm.exe.bin");
    expect(shown.stdout + shown.stderr).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
  });

  // The plan: the service's word on what a pull writes, which a hostile service can bend.
  const honest = () => [
    served("data/chunk-000/a.bin", Buffer.from("the frames of episode one"), [episodeId(1)], "data"),
    served("README.md", Buffer.from("a card")),
  ];
  /** A directory two levels below one that must stay as it is. */
  const nested = () => {
    const outside = newDir("das-hostile-victim-");
    const dir = path.join(outside, "a", "b");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(outside, "victim.bin"), "the user's own file");
    return { outside, dir };
  };
  const untouched = (outside: string) => {
    expect(readFileSync(path.join(outside, "victim.bin"), "utf8")).toBe("the user's own file");
    expect(readdirSync(outside).sort()).toEqual(["a", "victim.bin"]);
  };

  const escapes: [string, (outside: string) => string][] = [
    ["a parent directory", () => "../../victim.bin"],
    ["'..' inside the path", () => "data/../../../victim.bin"],
    ["an absolute path", (outside) => path.join(outside, "victim.bin")],
    ["a backslash", () => "..\\..\\victim.bin"],
    ["a control character", () => "data/\u001b]0;owned\u0007.bin"],
    ["das's own records", () => "das-provenance.json"],
    ["a partial transfer", () => "README.md.das-partial"],
  ];
  it.each(escapes)("refuses a plan naming %s before it fetches or discloses anything", async (_, bad) => {
    const { outside, dir } = nested();
    const hostile = await hostileService(honest(), undefined, [], {
      plan: (plan) => ({ ...plan, files: plan.files.map((f, i) => (i === 0 ? { ...f, path: bad(outside) } : f)) }),
    });
    const run = pull({ api: api(hostile), datasetId: DATASET, version: "1.0.0", dir, stderr: sink });
    await expect(run).rejects.toThrow(/The service's plan for hostile@1\.0\.0 names .*: nothing was fetched\./);
    await run.catch((error: Error) => expect(error.message).not.toMatch(/[\u001b\u0007]/));
    expect(hostile.downloads).toEqual([]);
    expect(hostile.storeGets).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
    untouched(outside);
  });

  it("writes nothing through a symbolic link at the destination that leads out of it, and asks for nothing behind it", async () => {
    const { outside, dir } = nested();
    mkdirSync(path.join(outside, "elsewhere"));
    // data/ leads to another directory; README.md is a link to the user's file.
    symlinkSync(path.join(outside, "elsewhere"), path.join(dir, "data"));
    symlinkSync(path.join(outside, "victim.bin"), path.join(dir, "README.md"));
    const hostile = await hostileService(honest());
    const summary = await pull({ api: api(hostile), datasetId: DATASET, version: "1.0.0", dir, stderr: sink });
    expect(summary.failed.map((f) => [f.path, f.reason]).sort()).toEqual([
      ["README.md", expect.stringContaining("a symbolic link on its way leads out of the directory")],
      ["data/chunk-000/a.bin", expect.stringContaining("a symbolic link on its way leads out of the directory")],
    ]);
    // Refused when the disk was checked: no download (no disclosure), no store request.
    expect(hostile.downloads).toEqual([]);
    expect(hostile.storeGets).toEqual([]);
    expect(readdirSync(path.join(outside, "elsewhere"))).toEqual([]);
    expect(readFileSync(path.join(outside, "victim.bin"), "utf8")).toBe("the user's own file");
    expect(lstatSync(path.join(dir, "README.md")).isSymbolicLink()).toBe(true);
    expect(existsSync(path.join(dir, "das-provenance.json"))).toBe(false);
  });

  it("keeps only the plan's files when a download lists more, however they are named", async () => {
    const { outside, dir } = nested();
    const stray = Buffer.from("not in the plan");
    const hostile = await hostileService(honest(), undefined, [], {
      extraInDownload: ["../../victim.bin", "extra.bin", "das-provenance.json"].map((p) => ({
        path: p,
        url: "http://127.0.0.1:9/never",
        size_bytes: stray.length,
        sha256: sha256(stray),
      })),
    });
    const summary = await pull({ api: api(hostile), datasetId: DATASET, version: "1.0.0", dir, stderr: sink });
    expect(summary).toMatchObject({ failed: [], files: 2, downloaded: 2 });
    expect(readdirSync(dir).sort()).toEqual(["README.md", "das-provenance.json", "data"]);
    expect(hostile.storeGets.sort()).toEqual(["/store/0", "/store/1"]);
    untouched(outside);
  });

  it("fails a file whose bytes do not match the plan's sha256, and leaves nothing at its path", async () => {
    const dir = newDir("das-hostile-sha-");
    const hostile = await hostileService(honest(), undefined, [], {
      plan: (plan) => ({ ...plan, files: plan.files.map((f, i) => (i === 0 ? { ...f, sha256: "0".repeat(64) } : f)) }),
    });
    const summary = await pull({ api: api(hostile), datasetId: DATASET, version: "1.0.0", dir, stderr: sink });
    expect(summary.failed).toEqual([
      {
        path: "data/chunk-000/a.bin",
        reason: expect.stringMatching(/^verification failed: sha256 [0-9a-f]{64} instead of 0{64}$/),
      },
    ]);
    expect(existsSync(path.join(dir, "data/chunk-000/a.bin"))).toBe(false);
    expect(readdirSync(path.join(dir, "data/chunk-000"))).toEqual([]);
    // Nothing das writes about a pull that did not finish.
    expect(existsSync(path.join(dir, "das-provenance.json"))).toBe(false);
  });

  it("fails a file the plan gives an absurd size, in bounded time and memory, and writes no more than the store sent", async () => {
    const dir = newDir("das-hostile-size-");
    const hostile = await hostileService(honest(), undefined, [], {
      plan: (plan) => ({ ...plan, files: plan.files.map((f, i) => (i === 0 ? { ...f, size_bytes: 2 ** 52 } : f)) }),
    });
    const rssBefore = process.memoryUsage().rss;
    const summary = await pull({ api: api(hostile), datasetId: DATASET, version: "1.0.0", dir, stderr: sink });
    expect(summary.bytes).toBe(2 ** 52 + Buffer.byteLength("a card"));
    expect(summary.failed).toEqual([
      { path: "data/chunk-000/a.bin", reason: expect.stringContaining(`the store sent 25 of ${2 ** 52} bytes`) },
    ]);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
    expect(existsSync(path.join(dir, "data/chunk-000/a.bin"))).toBe(false);
    expect(existsSync(path.join(dir, "das-provenance.json"))).toBe(false);
  });
});

describe("das pull into a directory an earlier pull filled", () => {
  it("tells files the plan changed since (an update) from files damaged on disk (corruption)", async () => {
    const frames = served("data/chunk-000/a.bin", Buffer.from("the frames of episode one"), [episodeId(1)], "data");
    const files = [
      frames,
      served("meta/info.json", Buffer.from('{"total_episodes":2}')),
      served("meta/stats.json", Buffer.from('{"mean":[1,2]}')),
      served("README.md", Buffer.from("a card")),
    ];
    let revision = "a".repeat(40);
    const hostile = await hostileService(files, undefined, [], { plan: (plan) => ({ ...plan, revision }) });
    const dir = newDir("das-update-");
    const first = await pull({ api: api(hostile), datasetId: DATASET, version: "1.0.0", dir, stderr: sink });
    expect(first).toMatchObject({ failed: [], downloaded: 4 });

    // On the server, a withdrawal renders meta/ again: info.json and stats.json get new bytes and
    // the view a new revision. On disk, stats.json was also edited by hand since the first pull,
    // and the frames were damaged: only info.json is the update it looks like.
    revision = "b".repeat(40);
    files[1] = served("meta/info.json", Buffer.from('{"total_episodes":1}'));
    files[2] = served("meta/stats.json", Buffer.from('{"mean":[1,3]}'));
    writeFileSync(path.join(dir, "meta/stats.json"), '{"mean":[9,9]}');
    writeFileSync(path.join(dir, "data/chunk-000/a.bin"), "the frames of episode 0ne");
    const printed: string[] = [];
    const second = await pull({
      api: api(hostile),
      datasetId: DATASET,
      version: "1.0.0",
      dir,
      stderr: { write: (text: string) => printed.push(text) },
    });
    expect(second).toMatchObject({
      failed: [],
      already_verified: 1,
      downloaded: 3,
      refetched_changed: 1,
      refetched_corrupt: 2,
    });
    const said = printed.join("");
    expect(said).toContain(
      "1 file(s) changed since the last pull (revision aaaaaaaaaaaa then, bbbbbbbbbbbb now) will be fetched: meta/info.json.\n",
    );
    expect(said).toContain(
      "2 file(s) on disk match neither the plan nor what the last pull fetched (damaged or edited since) and will be fetched again.\n",
    );
    expect(said).not.toContain("do not match the plan");
    expect(describeSummary(second)).toContain(
      "1 fetched again because the plan changed them since the last pull, 2 re-fetched because the copy on disk was damaged or edited.",
    );
    for (const { file } of files) expect(sha256(readFileSync(path.join(dir, file.path)))).toBe(file.sha256);

    // A third pull finds everything as the plan has it and says nothing of either.
    printed.length = 0;
    const third = await pull({
      api: api(hostile),
      datasetId: DATASET,
      version: "1.0.0",
      dir,
      stderr: { write: (text: string) => printed.push(text) },
    });
    expect(third).toMatchObject({ already_verified: 4, downloaded: 0, refetched_changed: 0, refetched_corrupt: 0 });
    expect(printed.join("")).not.toMatch(/changed since|match neither/);
  });
});
