import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openParquet, parquetBatches } from "../lerobot/parquet";
import { buildLeRobotFixture, type LeRobotFixture } from "../testing/lerobot-fixtures";
import { das } from "../testing/pull-fixtures";
import { ApiClient, type ManifestDocument, type ManifestFile } from "./api";
import { ORIGINALS_DIR, PROVENANCE_FILE } from "./plan";
import { describeSummary, pull } from "./pull";

// `das pull` against a malicious service: the API and the store are served by the test itself on
// 127.0.0.1 and answer what an attacker would. Nothing they send may make the client write outside
// --dir, write an unbounded body, retitle the terminal, or leave behind metadata of episodes that
// were never delivered.

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
  episodes: Record<string, unknown>[];
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
): Promise<Hostile> {
  const hostile: Hostile = { url: "", downloads: [], episodes };
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
        files: resolved.map(({ file: { media_type: _, ...file } }) => ({
          ...file,
          url: `${hostile.url}/store/${files.findIndex((f) => f.file.path === file.path)}`,
        })),
        co_delivered_episode_ids: [],
      });
    }
    const stored = /^\/store\/(\d+)$/.exec(url.pathname);
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

/** A LeRobot dataset on disk as a manifest and a store would serve it (meta/ as files of the whole version). */
function servedDataset(fixture: LeRobotFixture, overrides: Record<string, Buffer> = {}): Served[] {
  const out: Served[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(path.join(fixture.root, relative), { withFileTypes: true })) {
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(child);
      else {
        const placed = fixture.files.find((f) => f.path === child);
        const body = overrides[child] ?? readFileSync(path.join(fixture.root, child));
        out.push(served(child, body, placed?.episodes.map(episodeId) ?? [], placed?.stream ?? null));
      }
    }
  };
  walk("");
  return out;
}

const formatOf = (fixture: LeRobotFixture): ManifestDocument["format"] => ({
  source: "lerobot",
  codebase_version: fixture.version,
  robot_type: null,
  fps: fixture.fps,
  total_frames: fixture.episodes.reduce((n, e) => n + e.length, 0),
  cameras: fixture.cameras.map((key) => ({ key, storage: "video", codec: null, height: null, width: null, fps: null })),
});

describe("das pull against a malicious server", () => {
  it("never writes a file that meta/info.json's data_path template places outside --dir", async () => {
    const fixture = await buildLeRobotFixture(newDir("das-hostile-src-"), { version: "v3.0", episodes: 4 });
    // The template names a file two levels above --dir; the manifest delivers a parquet file that
    // the rewrite would read (via the same template, from .das/original/) and write there.
    const info = JSON.parse(readFileSync(path.join(fixture.root, "meta/info.json"), "utf8"));
    info.data_path = "../../victim.parquet";
    const files = servedDataset(fixture, { "meta/info.json": Buffer.from(JSON.stringify(info, null, 4)) });
    files.push(served("victim.parquet", readFileSync(path.join(fixture.root, "data/chunk-000/file-001.parquet"))));
    const hostile = await hostileService(files, formatOf(fixture));

    const outside = newDir("das-hostile-victim-");
    const dir = path.join(outside, "a", "b");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(outside, "victim.parquet"), "the user's own file");

    await expect(
      pull({ api: api(hostile), datasetId: DATASET, version: "1.0.0", dir, episodeIds: [episodeId(2)], stderr: sink }),
    ).rejects.toThrow(/"\.\.\/\.\.\/victim\.parquet", which is not a safe relative path/);
    expect(readFileSync(path.join(outside, "victim.parquet"), "utf8")).toBe("the user's own file");
    expect(readdirSync(outside).sort()).toEqual(["a", "victim.parquet"]);
  });

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
      [served(`${retitle}.bin`, Buffer.from("x"), [episodeId(1)], "cam")],
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

  for (const version of ["v2.1", "v3.0"] as const) {
    it(`keeps no metadata of episodes it did not deliver (${version} subset)`, async () => {
      const fixture = await buildLeRobotFixture(newDir("das-hostile-src-"), {
        version,
        episodes: 6,
        task: (e) => `task of episode ${e}`,
      });
      const hostile = await hostileService(servedDataset(fixture), formatOf(fixture));
      const dir = newDir("das-hostile-subset-");
      const run = () =>
        pull({
          api: api(hostile),
          datasetId: DATASET,
          version: "1.0.0",
          dir,
          episodeIds: [episodeId(2)],
          stderr: sink,
        });
      const first = await run();
      expect(first.failed).toEqual([]);
      // v3.0 files hold two episodes each: episode 3 came along with 2.
      const delivered = version === "v3.0" ? [2, 3] : [2];
      expect(first.lerobot!.episode_indices).toEqual(delivered);

      // The originals kept under .das/ list the delivered episodes only, and meta/ (renumbered 0..k-1 in v3.0) as many.
      const mentioned = async () => ({
        originals: await episodesMentioned(path.join(dir, ORIGINALS_DIR, "meta")),
        meta: await episodesMentioned(path.join(dir, "meta")),
      });
      const expected = { originals: delivered, meta: version === "v3.0" ? [0, 1] : delivered };
      expect(await mentioned()).toEqual(expected);
      for (const meta of ["meta", `${ORIGINALS_DIR}/meta`])
        expect(JSON.parse(readFileSync(path.join(dir, meta, "info.json"), "utf8")).total_episodes).toBe(
          delivered.length,
        );
      // Nor their tasks: v2.x keeps the tasks used, v3.0 keeps every position of tasks.parquet
      // (LeRobot reads a task by it) with a placeholder for the text of a task not performed.
      const texts = `${everyText(dir)}\n${await tasksListed(dir)}`;
      for (const e of fixture.episodes)
        if (delivered.includes(e.episode_index)) expect(texts).toContain(`task of episode ${e.episode_index}`);
        else expect(texts).not.toContain(`task of episode ${e.episode_index}`);
      const provenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
      expect(provenance.meta_originals_trimmed.episode_indices).toEqual(delivered);

      // A second run finds everything verified: the cut-down originals stand for the delivered ones,
      // so nothing is requested again (which would be another disclosure).
      const requested = hostile.downloads.length;
      const second = await run();
      expect(second.failed).toEqual([]);
      expect(second.downloads).toEqual([]);
      expect(hostile.downloads.length).toBe(requested);
      expect(second.already_verified).toBe(second.files);
      expect(await mentioned()).toEqual(expected);
      // And so does every run after it: the provenance still describes what is kept.
      const third = await run();
      expect(third).toMatchObject({ failed: [], downloads: [], already_verified: third.files });
      expect(JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8")).meta_originals_trimmed).toEqual(
        provenance.meta_originals_trimmed,
      );
    });
  }
});

/** Every text file's content under a directory, concatenated (parquet files are binary, but their strings are plain). */
function everyText(dir: string): string {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (!entry.name.endsWith(".mp4")) out.push(readFileSync(full, "latin1"));
    }
  };
  walk(dir);
  return out.join("\n");
}

/** The task texts of every v3.0 tasks.parquet in the directory, decoded (the files are compressed). */
async function tasksListed(dir: string): Promise<string> {
  const out: unknown[] = [];
  for (const meta of ["meta", `${ORIGINALS_DIR}/meta`]) {
    const file = path.join(dir, meta, "tasks.parquet");
    if (existsSync(file))
      for await (const { rows } of parquetBatches(await openParquet(file))) out.push(...rows.map((r) => r.task));
  }
  return out.join("\n");
}

/** The episode indices every episode-metadata file of a meta/ directory lists. */
async function episodesMentioned(meta: string): Promise<number[]> {
  const found = new Set<number>();
  {
    for (const name of ["episodes.jsonl", "episodes_stats.jsonl"]) {
      const file = path.join(meta, name);
      if (!existsSync(file)) continue;
      for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean))
        found.add((JSON.parse(line) as { episode_index: number }).episode_index);
    }
    const episodes = path.join(meta, "episodes");
    if (existsSync(episodes))
      for (const chunk of readdirSync(episodes))
        for (const name of readdirSync(path.join(episodes, chunk)))
          for await (const { rows } of parquetBatches(await openParquet(path.join(episodes, chunk, name)), [
            "episode_index",
          ]))
            for (const row of rows) found.add(Number(row.episode_index));
  }
  return [...found].sort((a, b) => a - b);
}
