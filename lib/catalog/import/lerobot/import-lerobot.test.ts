import { createHash } from "node:crypto";
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { DeleteObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { GET as episodesRoute } from "@/app/api/[[...path]]/route";
import { GET as manifestRoute } from "@/app/api/[[...path]]/route";
import { GET as versionsRoute } from "@/app/api/[[...path]]/route";
import { GET as annotationsRoute } from "@/app/api/[[...path]]/route";
import { s3Client } from "@/lib/storage/client";
import { objectKey, storeLocation } from "@/lib/storage/config";
import { checkVersionStore } from "@/lib/catalog/store-check";
import {
  buildHuggingFaceSnapshot,
  buildLeRobotFixture,
  type LeRobotFixture,
  type LeRobotFixtureOptions,
} from "@/lib/testing/lerobot-fixtures";
import { createTestKey, createTestOrg, grant, operatorCtx, uniqueId } from "@/lib/testing/fixtures";
import { call } from "@/lib/testing/http";
import { openParquet, type ParquetFile } from "@/lib/lerobot/parquet";
import { ImportError } from "../problems";
import { importLeRobotVersion, type LeRobotImportOptions } from "./source";

const sql = () => getDb().$client;
const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

async function fixture(options: LeRobotFixtureOptions): Promise<LeRobotFixture> {
  const root = mkdtempSync(path.join(os.tmpdir(), "das-lerobot-import-"));
  roots.push(root);
  return buildLeRobotFixture(root, options);
}

/** Every regular file under a directory, relative with '/'. */
function filesOf(dir: string, prefix = ""): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      return entry.isDirectory() ? filesOf(dir, relative) : [relative];
    })
    .sort();
}

async function refused(options: LeRobotImportOptions): Promise<ImportError> {
  const error = await importLeRobotVersion(sql(), options).catch((e: unknown) => e);
  if (error instanceof ImportError) return error;
  throw error instanceof Error ? error : new Error(`expected a refusal, got ${JSON.stringify(error)}`);
}

/** Every catalog row of a dataset, file_episodes included. */
async function rowsOf(datasetId: string) {
  const [rows] = await sql()<
    { versions: number; episodes: number; annotations: number; files: number; file_episodes: number }[]
  >`
    select (select count(*)::int from dataset_versions where dataset_id = ${datasetId}) as versions,
           (select count(*)::int from episodes e join dataset_versions v on v.id = e.version_id where v.dataset_id = ${datasetId}) as episodes,
           (select count(*)::int from annotations a join dataset_versions v on v.id = a.version_id where v.dataset_id = ${datasetId}) as annotations,
           (select count(*)::int from files f join dataset_versions v on v.id = f.version_id where v.dataset_id = ${datasetId}) as files,
           (select count(*)::int from file_episodes f join dataset_versions v on v.id = f.version_id where v.dataset_id = ${datasetId}) as file_episodes`;
  return rows!;
}
const NOTHING = { versions: 0, episodes: 0, annotations: 0, files: 0, file_episodes: 0 };

// Multi-byte characters, so that "byte for byte" is tested, not only "same length".
const LONG_300 =
  `Pick up the blue mug by its handle — carefully — and place it on the coaster ☕ ${"then wait. ".repeat(25)}`.slice(
    0,
    320,
  );
const LONG_10K = `Ünïcödé instruction 🤖 ${"fold the towel in half, then in half again; ".repeat(240)}`.slice(
  0,
  10_000,
);
const cameras = ["observation.images.front", "observation.images.wrist"];
const extra = (e: number): Record<string, string> =>
  e === 0 ? {} : { outcome: e % 2 ? "failure" : "success", environment: `kitchen-${e % 2}`, contributor: `op-${e}` };

describe.each(["v2.1", "v3.0"] as const)("importing a LeRobot %s dataset", (version) => {
  let f: LeRobotFixture;
  const datasetId = uniqueId("lr");
  let key: string;
  const options = (): LeRobotImportOptions => ({
    dir: f.root,
    datasetId,
    version: "1.0.0",
    title: "LeRobot fixture",
    releasedAt: "2026-03-01T09:00:00Z",
    defaults: { environment: "lab" },
  });

  beforeAll(async () => {
    f = await fixture({
      version,
      episodes: 5,
      cameras,
      episodesPerFile: 2,
      task: (e) => (e === 1 ? LONG_10K : "Pick up the yellow bottle."),
      extra,
      subtasks: { source: "language_persistent", labels: (e) => ["reach", LONG_300, e === 2 ? LONG_10K : "lift"] },
    });
    const org = await createTestOrg();
    key = (await createTestKey(org.id)).secret;
    const result = await importLeRobotVersion(sql(), options());
    expect(result).toMatchObject({
      status: "imported",
      datasetId,
      version: "1.0.0",
      episodes: 5,
      annotations: 15,
      files: filesOf(f.root).length,
      skippedCount: 0,
    });
    await grant(org.id, datasetId, "1.0.0");
  });

  const api = {
    episodes: () =>
      call(episodesRoute, `/api/v1/datasets/${datasetId}/versions/1.0.0/episodes?limit=500`, {
        key,
        params: { id: datasetId, version: "1.0.0" },
      }),
    manifest: () =>
      call(manifestRoute, `/api/v1/datasets/${datasetId}/versions/1.0.0/manifest`, {
        key,
        params: { id: datasetId, version: "1.0.0" },
      }),
    versions: () => call(versionsRoute, `/api/v1/datasets/${datasetId}/versions`, { key, params: { id: datasetId } }),
    annotations: (episodeId: string) =>
      call(annotationsRoute, `/api/v1/episodes/${episodeId}/annotations?limit=500`, { key, params: { episodeId } }),
  };
  const id = (e: number) => `${datasetId}-${String(e).padStart(6, "0")}`;

  it("gives each episode an id from its index, its tasks, its duration, the cameras and data as streams, and the owner's fields or defaults", async () => {
    const res = await api.episodes();
    expect(res.status).toBe(200);
    expect(res.json.total).toBe(5);
    expect(res.json.episodes).toEqual(
      f.episodes.map((e) => ({
        episode_id: id(e.episode_index),
        task: e.tasks.join("; "),
        environment: e.episode_index === 0 ? "lab" : `kitchen-${e.episode_index % 2}`,
        duration_s: e.length / f.fps,
        outcome: e.episode_index === 0 ? "unknown" : e.episode_index % 2 ? "failure" : "success",
        has_recovery: false,
        contributor: e.episode_index === 0 ? "unknown" : `op-${e.episode_index}`,
        streams: [...cameras, "data"].sort(),
      })),
    );
    // The 10,000-character instruction, byte for byte.
    expect(Buffer.from(res.json.episodes[1].task)).toEqual(Buffer.from(LONG_10K));
  });

  it("lists every file of the directory at its path, with its size, sha256, media type, stream and episodes", async () => {
    const res = await api.manifest();
    expect(res.status).toBe(200);
    const byPath = new Map<
      string,
      {
        episode_id: string | null;
        episode_ids: string[];
        stream: string | null;
        size_bytes: number;
        sha256: string;
        media_type: string;
      }
    >(res.json.files.map((file: { path: string }) => [file.path, file]));
    expect([...byPath.keys()].sort()).toEqual(filesOf(f.root));
    for (const [p, file] of byPath) {
      expect(file.size_bytes, p).toBe(statSync(path.join(f.root, p)).size);
      expect(file.sha256, p).toBe(sha256(path.join(f.root, p)));
    }
    for (const expected of f.files) {
      const file = byPath.get(expected.path)!;
      expect(file.stream).toBe(expected.stream);
      expect(file.episode_ids).toEqual(expected.episodes.map(id));
      expect(file.episode_id).toBe(expected.episodes.length === 1 ? id(expected.episodes[0]!) : null);
      expect(file.media_type).toBe(expected.path.endsWith(".mp4") ? "video/mp4" : "application/vnd.apache.parquet");
    }
    // meta/ and the README are files of the whole version.
    for (const p of [...byPath.keys()].filter((p) => p.startsWith("meta/") || p === "README.md"))
      expect(byPath.get(p)).toMatchObject({ episode_id: null, episode_ids: [], stream: null });
    expect(byPath.get("meta/info.json")!.media_type).toBe("application/json");
  });

  it("records where each episode lies in a shared file", async () => {
    const [v] = await sql()<{ id: number }[]>`select id from dataset_versions where dataset_id = ${datasetId}`;
    const rows = await sql()<
      {
        path: string;
        episode_id: string;
        start_s: number | null;
        end_s: number | null;
        from_frame: number | null;
        to_frame: number | null;
      }[]
    >`
      select path, episode_id, start_s, end_s, from_frame::float8 as from_frame, to_frame::float8 as to_frame from file_episodes where version_id = ${v!.id} order by path, episode_id`;
    const video = rows.filter((r) => r.path.includes("observation.images.front") && r.episode_id === id(3))[0]!;
    const data = rows.filter((r) => r.path.startsWith("data/") && r.episode_id === id(3))[0]!;
    const duration = f.episodes[3]!.length / f.fps;
    if (version === "v3.0") {
      expect(video).toMatchObject({ start_s: f.videoRanges.get(3)!.from, end_s: f.videoRanges.get(3)!.to });
      const from = f.episodes.slice(0, 3).reduce((n, e) => n + e.length, 0);
      expect(data).toMatchObject({
        start_s: null,
        end_s: null,
        from_frame: from,
        to_frame: from + f.episodes[3]!.length,
      });
    } else {
      // A file of its own: from 0 to the episode's end.
      expect(video).toMatchObject({ start_s: 0, end_s: duration, from_frame: null, to_frame: null });
      expect(data).toMatchObject({ start_s: 0, end_s: duration });
    }
  });

  it("turns LeRobot's subtask annotations into spans, labels of 300 and 10,000 characters byte for byte", async () => {
    for (const e of f.episodes) {
      const res = await api.annotations(id(e.episode_index));
      expect(res.status).toBe(200);
      expect(res.json.annotations.map(({ annotation_id: _, ...a }: { annotation_id: string }) => a)).toEqual(
        e.subtasks.map((s) => ({ ...s, attributes: {} })),
      );
    }
    const second = await api.annotations(id(2));
    expect(Buffer.from(second.json.annotations[1].label)).toEqual(Buffer.from(LONG_300));
    expect(Buffer.from(second.json.annotations[2].label)).toEqual(Buffer.from(LONG_10K));
  });

  it("gives the version's LeRobot facts in the versions list and the manifest", async () => {
    const res = await api.versions();
    expect(res.status).toBe(200);
    expect((await api.manifest()).json.format).toEqual(res.json.versions[0].format);
    expect(res.json.versions[0].format).toEqual({
      source: "lerobot",
      codebase_version: version,
      robot_type: "so100",
      fps: 10,
      total_frames: f.episodes.reduce((n, e) => n + e.length, 0),
      cameras: cameras.map((key) => ({ key, storage: "video", codec: "h264", height: 48, width: 64, fps: 10 })),
    });
  });

  it("re-imports the same directory as unchanged, and refuses a changed file", async () => {
    const before = await sql()`select * from dataset_versions where dataset_id = ${datasetId}`;
    const again = await importLeRobotVersion(sql(), { ...options(), releasedAt: undefined, title: "LeRobot fixture" });
    expect(again.status).toBe("unchanged");
    expect(await sql()`select * from dataset_versions where dataset_id = ${datasetId}`).toEqual(before);
    // Without --title the dataset keeps its title: that is not a change either.
    expect((await importLeRobotVersion(sql(), { ...options(), title: undefined })).status).toBe("unchanged");

    const readme = path.join(f.root, "README.md");
    const original = readFileSync(readme);
    writeFileSync(readme, "# changed\n");
    try {
      const error = await refused(options());
      expect(error.problems).toEqual([
        { file: "version.json", line: 1, message: expect.stringContaining("already released with different content") },
      ]);
    } finally {
      writeFileSync(readme, original);
    }
  });
});

describe("importing a LeRobot dataset: what the owner adds", () => {
  it("takes outcome, environment, contributor and has_recovery from the sidecar, the records, the options or the fallback, and counts each", async () => {
    const f = await fixture({
      version: "v3.0",
      episodes: 4,
      cameras: [],
      extra: (e): Record<string, string> => (e >= 2 ? { outcome: "success", contributor: `rec-${e}` } : {}),
    });
    const sidecar = path.join(f.root, "..", `${path.basename(f.root)}-meta.jsonl`);
    roots.push(sidecar);
    writeFileSync(
      sidecar,
      [
        { episode_index: 0, outcome: "failure", has_recovery: true },
        { episode_index: 2, contributor: "side-2" },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n"),
    );
    const datasetId = uniqueId("lr");
    const result = await importLeRobotVersion(sql(), {
      dir: f.root,
      datasetId,
      version: "1.0.0",
      episodeMetadataFile: sidecar,
      defaults: { environment: "lab", contributor: "op-default" },
    });
    expect(result.defaults).toEqual({
      outcome: { metadata: 1, record: 2, option: 0, fallback: 1 },
      environment: { metadata: 0, record: 0, option: 4, fallback: 0 },
      contributor: { metadata: 1, record: 1, option: 2, fallback: 0 },
      has_recovery: { metadata: 1, record: 0, option: 0, fallback: 3 },
    });
    const rows =
      await sql()`select episode_id, outcome, environment, contributor, has_recovery from episodes e join dataset_versions v on v.id = e.version_id
      where v.dataset_id = ${datasetId} order by episode_id`;
    expect(rows.map((r) => [r.outcome, r.environment, r.contributor, r.has_recovery])).toEqual([
      ["failure", "lab", "op-default", true],
      ["unknown", "lab", "op-default", false],
      ["success", "lab", "side-2", false],
      ["success", "lab", "rec-3", false],
    ]);
  });

  it("refuses sidecar lines that break the episode rules, name no episode, or repeat one, at their line", async () => {
    const f = await fixture({ version: "v2.1", episodes: 2, cameras: [] });
    const sidecar = path.join(os.tmpdir(), `${uniqueId("meta")}.jsonl`);
    roots.push(sidecar);
    writeFileSync(
      sidecar,
      [
        '{"episode_index":0,"environment":"lab\\nx"}',
        '{"episode_index":7}',
        '{"episode_index":1,"colour":"red"}',
        '{"episode_index":1}',
        '{"episode_index":1}',
      ].join("\n"),
    );
    const datasetId = uniqueId("lr");
    const error = await refused({ dir: f.root, datasetId, version: "1.0.0", episodeMetadataFile: sidecar });
    const name = path.basename(sidecar);
    expect(error.problems).toEqual([
      { file: name, line: 1, message: expect.stringContaining("environment must not contain control characters") },
      { file: name, line: 2, message: "episode_index 7 is not an episode of the dataset" },
      { file: name, line: 3, message: "unknown field 'colour'" },
      { file: name, line: 5, message: "episode_index 1 appears again (first on line 4)" },
    ]);
    expect(await rowsOf(datasetId)).toEqual(NOTHING);
  });

  it("reads --changelog as version.json is read: invalid UTF-8 is refused at its line, and nothing is written", async () => {
    const f = await fixture({ version: "v2.1", episodes: 1, cameras: [] });
    const changelog = path.join(os.tmpdir(), `${uniqueId("changelog")}.json`);
    roots.push(changelog);
    writeFileSync(
      changelog,
      Buffer.concat([
        Buffer.from('[\n  {"type": "added", "description": "caf'),
        Buffer.from([0xe9]),
        Buffer.from('"}\n]\n'),
      ]),
    );
    const datasetId = uniqueId("lr");
    const error = await refused({ dir: f.root, datasetId, version: "1.0.0", changelogFile: changelog });
    expect(error.problems).toEqual([{ file: path.basename(changelog), line: 2, message: "line is not valid UTF-8" }]);
    expect(await rowsOf(datasetId)).toEqual(NOTHING);
    // The same text in UTF-8 is taken byte for byte.
    writeFileSync(changelog, '[\n  {"type": "added", "description": "café"}\n]\n');
    await importLeRobotVersion(sql(), { dir: f.root, datasetId, version: "1.0.0", changelogFile: changelog });
    const rows =
      await sql()`select c.type, c.description from changelog_entries c join dataset_versions v on v.id = c.version_id where v.dataset_id = ${datasetId}`;
    expect([...rows]).toEqual([{ type: "added", description: "café" }]);
  });

  it("adds spans from an annotations.jsonl keyed by episode_index or episode_id", async () => {
    const f = await fixture({ version: "v2.1", episodes: 2, cameras: [] });
    const datasetId = uniqueId("lr");
    const file = path.join(os.tmpdir(), `${uniqueId("ann")}.jsonl`);
    roots.push(file);
    writeFileSync(
      file,
      [
        { episode_index: 0, label: LONG_300, start_s: 0, end_s: 1, attributes: { by: "index" } },
        { episode_id: `${datasetId}-000001`, label: "grasp", start_s: 0.5, end_s: 1.5 },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n"),
    );
    const result = await importLeRobotVersion(sql(), {
      dir: f.root,
      datasetId,
      version: "1.0.0",
      annotationsFile: file,
    });
    expect(result.annotations).toBe(2);
    const rows =
      await sql()`select a.episode_id, a.label, a.attributes from annotations a join dataset_versions v on v.id = a.version_id where v.dataset_id = ${datasetId} order by a.episode_id`;
    expect([...rows]).toEqual([
      { episode_id: `${datasetId}-000000`, label: LONG_300, attributes: { by: "index" } },
      { episode_id: `${datasetId}-000001`, label: "grasp", attributes: {} },
    ]);
    // A span past its episode's end is the same problem as in any import.
    writeFileSync(file, JSON.stringify({ episode_index: 1, label: "late", start_s: 0, end_s: 99 }));
    const error = await refused({ dir: f.root, datasetId, version: "2.0.0", annotationsFile: file });
    expect(error.problems).toEqual([
      {
        file: path.basename(file),
        line: 1,
        message: `span ends at 99 s, after the end of episode '${datasetId}-000001' (duration_s 2.5)`,
      },
    ]);
  });
});

describe("importing a LeRobot dataset with files missing", () => {
  it.each(["v2.1", "v3.0"] as const)(
    "%s: refuses the version with the missing paths and writes nothing",
    async (version) => {
      const f = await fixture({ version, episodes: 4, cameras, episodesPerFile: 2 });
      const missing = f.files.filter((file) => file.stream === cameras[1] && file.episodes.includes(2))[0]!.path;
      rmSync(path.join(f.root, missing));
      const datasetId = uniqueId("lr");
      const error = await refused({ dir: f.root, datasetId, version: "1.0.0" });
      expect(error.problems).toEqual([
        {
          file: missing,
          line: 0,
          message: "file is missing: the metadata names it, but the directory does not hold it",
        },
      ]);
      expect(await rowsOf(datasetId)).toEqual(NOTHING);
    },
  );

  it.each(["v2.1", "v3.0"] as const)(
    "%s: --skip-incomplete-episodes leaves out those episodes, every file holding one of them, and reports them",
    async (version) => {
      const f = await fixture({
        version,
        episodes: 6,
        cameras,
        episodesPerFile: 2,
        subtasks: { source: "language_persistent" },
      });
      const missing = f.files.filter((file) => file.stream === cameras[1] && file.episodes.includes(2))[0]!;
      rmSync(path.join(f.root, missing.path));
      const datasetId = uniqueId("lr");
      const result = await importLeRobotVersion(sql(), {
        dir: f.root,
        datasetId,
        version: "1.0.0",
        skipIncompleteEpisodes: true,
      });
      const skipped = missing.episodes; // v2.1: episode 2; v3.0: episodes 2 and 3 share the file
      expect(result.skippedCount).toBe(skipped.length);
      expect(result.skipped.map((s) => s.episode_id)).toEqual(
        skipped.map((e) => `${datasetId}-${String(e).padStart(6, "0")}`),
      );
      expect(result.skipped[0]!.reason).toBe(`${missing.path} is missing`);
      expect(result).toMatchObject({
        missingFiles: [missing.path],
        missingCount: 1,
        episodes: 6 - skipped.length,
        annotations: (6 - skipped.length) * 3,
      });
      // No file of a skipped episode is listed: not the missing one, not the others that hold it.
      const files = await sql()<
        { path: string }[]
      >`select path from files f join dataset_versions v on v.id = f.version_id where v.dataset_id = ${datasetId} order by path`;
      const left = new Set(files.map((r) => r.path));
      for (const file of f.files)
        expect(left.has(file.path), file.path).toBe(!file.episodes.some((e) => skipped.includes(e)));
      expect(left.has("meta/info.json")).toBe(true);
    },
  );
});

describe("importing a LeRobot dataset into the object store (--upload)", () => {
  const store = () => {
    const location = storeLocation();
    return { location, client: s3Client(location) };
  };

  it("uploads every file, resumes an interrupted upload without sending again what arrived, and the store check agrees", async () => {
    const f = await fixture({ version: "v3.0", episodes: 4, cameras, episodesPerFile: 2 });
    const datasetId = uniqueId("lr");
    const { location, client } = store();
    const target = { client, bucket: location.bucket, keyOf: (p: string) => objectKey(datasetId, "1.0.0", p) };
    const all = filesOf(f.root);

    // Interrupted after three files: nothing in the catalog, three objects in the store.
    const controller = new AbortController();
    let stored = 0;
    const interrupted = await importLeRobotVersion(sql(), {
      dir: f.root,
      datasetId,
      version: "1.0.0",
      upload: target,
      concurrency: 1,
      signal: controller.signal,
      onFile: () => ++stored === 3 && controller.abort(new Error("interrupted")),
    }).catch((e: unknown) => e);
    expect(String(interrupted)).toContain("interrupted");
    expect(await rowsOf(datasetId)).toEqual(NOTHING);

    const resumed = await importLeRobotVersion(sql(), { dir: f.root, datasetId, version: "1.0.0", upload: target });
    expect(resumed.status).toBe("imported");
    expect(resumed.transfer).toMatchObject({ files: all.length, skipped: 3, uploaded: all.length - 3 });
    // Each object holds the file's bytes.
    for (const p of all) {
      const object = await client.send(
        new (await import("@aws-sdk/client-s3")).GetObjectCommand({ Bucket: location.bucket, Key: target.keyOf(p) }),
      );
      expect(
        createHash("sha256")
          .update(Buffer.from(await object.Body!.transformToByteArray()))
          .digest("hex"),
        p,
      ).toBe(sha256(path.join(f.root, p)));
      expect(object.Metadata?.sha256).toBe(sha256(path.join(f.root, p)));
    }
    const ctx = operatorCtx();
    expect(await checkVersionStore(ctx, { datasetId, version: "1.0.0" }, target)).toEqual({
      files: all.length,
      missing: [],
      wrongSize: [],
      dataTable: "data/chunk-000/file-000.parquet",
    });

    // A second run sends nothing.
    const again = await importLeRobotVersion(sql(), { dir: f.root, datasetId, version: "1.0.0", upload: target });
    expect(again).toMatchObject({ status: "unchanged", transfer: { uploaded: 0, skipped: all.length } });

    // The store check finds an object gone and one of the wrong size.
    await client.send(new DeleteObjectCommand({ Bucket: location.bucket, Key: target.keyOf("meta/info.json") }));
    await client.send(new PutObjectCommand({ Bucket: location.bucket, Key: target.keyOf("README.md"), Body: "short" }));
    expect(await checkVersionStore(ctx, { datasetId, version: "1.0.0" }, target)).toEqual({
      files: all.length,
      missing: ["meta/info.json"],
      wrongSize: [{ path: "README.md", expected: statSync(path.join(f.root, "README.md")).size, actual: 5 }],
      dataTable: "data/chunk-000/file-000.parquet",
    });
    client.destroy();
  });

  it("sends a large file in parts", async () => {
    const f = await fixture({ version: "v2.1", episodes: 1, cameras: [], extraFiles: { "README.md": "big\n" } });
    // 70 MiB: over the multipart threshold, five parts.
    const big = path.join(f.root, "extra.bin");
    writeFileSync(big, Buffer.alloc(70 * 1024 * 1024, 7));
    const datasetId = uniqueId("lr");
    const { location, client } = store();
    const target = { client, bucket: location.bucket, keyOf: (p: string) => objectKey(datasetId, "1.0.0", p) };
    const result = await importLeRobotVersion(sql(), { dir: f.root, datasetId, version: "1.0.0", upload: target });
    expect(result.status).toBe("imported");
    const head = await client.send(
      new (await import("@aws-sdk/client-s3")).HeadObjectCommand({
        Bucket: location.bucket,
        Key: target.keyOf("extra.bin"),
      }),
    );
    expect(head.ContentLength).toBe(70 * 1024 * 1024);
    expect(head.Metadata?.sha256).toBe(sha256(big));
    expect(await checkVersionStore(operatorCtx(), { datasetId, version: "1.0.0" }, target)).toMatchObject({
      missing: [],
      wrongSize: [],
    });
    client.destroy();
  }, 120_000);
});

describe("importing a Hugging Face cache snapshot", () => {
  it("imports every file through its symbolic link, at the link's path, with the blob's size and sha256, and leaves out .gitattributes", async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), "das-lerobot-hf-"));
    roots.push(base);
    const f = await buildHuggingFaceSnapshot(base, {
      version: "v3.0",
      episodes: 3,
      cameras: ["observation.images.front"],
      episodesPerFile: 2,
    });
    const datasetId = uniqueId("lr");
    const result = await importLeRobotVersion(sql(), { dir: f.root, datasetId, version: "1.0.0" });
    expect(result).toMatchObject({ status: "imported", episodes: 3, files: f.linked.length - 1 });
    expect(result.notices).toEqual([
      { message: expect.stringMatching(/^left out: hidden files/), count: 1, examples: [".gitattributes"] },
    ]);
    const files = await sql()<{ path: string; size_bytes: string; sha256: string }[]>`
      select f.path, f.size_bytes::text, f.sha256 from files f join dataset_versions v on v.id = f.version_id where v.dataset_id = ${datasetId} order by f.path`;
    expect(files.map((r) => r.path)).toEqual(f.linked.filter((p) => p !== ".gitattributes"));
    for (const row of files) {
      // The blob is named by its sha256, as the hub cache names it.
      const blob = realpathSync(path.join(f.root, row.path));
      expect(path.dirname(blob)).toBe(realpathSync(path.join(f.repo, "blobs")));
      expect(row.sha256, row.path).toBe(path.basename(blob));
      expect(Number(row.size_bytes)).toBe(statSync(blob).size);
    }
  });

  it("refuses a link that leads out of the snapshot and its blobs/, naming it, and writes nothing", async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), "das-lerobot-hf-"));
    roots.push(base);
    const f = await buildHuggingFaceSnapshot(base, { version: "v2.1", episodes: 1, cameras: [] });
    writeFileSync(path.join(base, "id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    symlinkSync(path.join(base, "id_ed25519"), path.join(f.root, "notes.txt"));
    const datasetId = uniqueId("lr");
    const error = await refused({ dir: f.root, datasetId, version: "1.0.0" });
    expect(error.problems).toEqual([
      {
        file: "notes.txt",
        line: 0,
        message: expect.stringMatching(
          /^not imported: a symbolic link on its path leads outside the dataset directory/,
        ),
      },
    ]);
    expect(await rowsOf(datasetId)).toEqual(NOTHING);
  });
});

describe.each(["v2.1", "v3.0"] as const)("importing a LeRobot %s dataset shaped as real ones are", (version) => {
  const FIVE_K = (word: string) => `${word} `.repeat(5_000 / (word.length + 1)).trimEnd();
  const tasksOf = (e: number) =>
    [[], ["Pick the cube.", "Place it in the bowl."], [" "], [FIVE_K("fold"), FIVE_K("stack"), FIVE_K("sort")]][e]!;
  let f: LeRobotFixture;
  let key: string;
  let result: Awaited<ReturnType<typeof importLeRobotVersion>>;
  const datasetId = uniqueId("lr");

  beforeAll(async () => {
    // No video at all (video_path null), an image camera inside the frames, episodes with no
    // task, several, and several long ones, an unlabelled subtask, dictionary-encoded strings,
    // compressed parquet with one row group per file, and info.json totals left stale.
    f = await fixture({
      version,
      episodes: 4,
      cameras: [],
      imageCameras: ["observation.images.wrist"],
      tasks: tasksOf,
      subtasks: { source: "language_persistent", labels: (e) => (e === 1 ? ["reach", "", "lift"] : ["reach"]) },
      dictionaryStrings: true,
      codec: version === "v3.0" ? "ZSTD" : "GZIP",
      rowGroups: "file",
      episodesPerFile: 4,
    });
    const infoFile = path.join(f.root, "meta/info.json");
    const info = JSON.parse(readFileSync(infoFile, "utf8")) as {
      total_frames: number;
      video_path: unknown;
      features: Record<string, { dtype: string }>;
    };
    expect(info.video_path).toBeNull();
    expect(info.features["observation.images.wrist"]!.dtype).toBe("image");
    info.total_frames += 7;
    writeFileSync(infoFile, JSON.stringify(info, null, 4));
    const org = await createTestOrg();
    key = (await createTestKey(org.id)).secret;
    result = await importLeRobotVersion(sql(), { dir: f.root, datasetId, version: "1.0.0" });
    await grant(org.id, datasetId, "1.0.0");
  });
  const params = { id: datasetId, version: "1.0.0" };
  const frames = () => f.episodes.reduce((n, e) => n + e.length, 0);

  it("imports, and says what it took as it is", async () => {
    // The fixture is what it says: strings dictionary-encoded, one row group for the data file.
    const data = await openParquet(path.join(f.root, f.files[0]!.path));
    expect(data.metadata.row_groups).toHaveLength(1);
    const encodings = (parquet: ParquetFile, column: string) =>
      parquet.metadata.row_groups[0]!.columns.find((c) => c.meta_data!.path_in_schema[0] === column)!.meta_data!
        .encodings;
    expect(encodings(data, "language_persistent")).toContain("RLE_DICTIONARY");
    if (version === "v3.0")
      expect(encodings(await openParquet(path.join(f.root, "meta/tasks.parquet")), "task")).toContain("RLE_DICTIONARY");
    expect(result).toMatchObject({ status: "imported", episodes: 4, annotations: 5 });
    expect(result.notices).toEqual([
      {
        message: `info.json's total_frames is ${frames() + 7}, but the episodes' lengths add up to ${frames()}: the version counts ${frames()}`,
        count: 1,
        examples: [expect.stringMatching(/^meta\/info.json:\d+$/)],
      },
      {
        message: expect.stringMatching(/^subtask rows without a label/),
        count: 1,
        examples: [`episode 1 at ${f.episodes[1]!.subtasks[1]!.start_s} s`],
      },
      {
        message: "episodes without a task (their tasks are none or blank): imported with an empty task",
        count: 2,
        examples: expect.any(Array),
      },
    ]);
  });

  it("serves the episodes: no task is an empty task, several are joined however long, data is the only stream", async () => {
    const res = await call(episodesRoute, `/api/v1/datasets/${datasetId}/versions/1.0.0/episodes?limit=500`, {
      key,
      params,
    });
    expect(res.status).toBe(200);
    expect(res.json.episodes.map((e: { task: string; streams: string[] }) => [e.task, e.streams])).toEqual([
      ["", ["data"]],
      ["Pick the cube.; Place it in the bowl.", ["data"]],
      ["", ["data"]],
      [tasksOf(3).join("; "), ["data"]],
    ]);
    expect(res.json.episodes[3].task.length).toBeGreaterThan(10_000);
  });

  it("gives the image camera in the facts, and the frames the episodes hold", async () => {
    const res = await call(versionsRoute, `/api/v1/datasets/${datasetId}/versions`, { key, params: { id: datasetId } });
    expect(res.json.versions[0].format).toEqual({
      source: "lerobot",
      codebase_version: version,
      robot_type: "so100",
      fps: 10,
      total_frames: frames(),
      cameras: [{ key: "observation.images.wrist", storage: "image", codec: null, height: 48, width: 64, fps: null }],
    });
    const manifest = await call(manifestRoute, `/api/v1/datasets/${datasetId}/versions/1.0.0/manifest`, {
      key,
      params,
    });
    expect(
      manifest.json.files
        .filter((file: { stream: string | null }) => file.stream !== null)
        .map((file: { stream: string }) => file.stream),
    ).toEqual(f.files.map(() => "data"));
  });

  it("annotates the unlabelled subtask's episode with the spans around it", async () => {
    const res = await call(annotationsRoute, `/api/v1/episodes/${datasetId}-000001/annotations?limit=500`, {
      key,
      params: { episodeId: `${datasetId}-000001` },
    });
    const [reach, , lift] = f.episodes[1]!.subtasks;
    expect(
      res.json.annotations.map(({ label, start_s, end_s }: { label: string; start_s: number; end_s: number }) => ({
        label,
        start_s,
        end_s,
      })),
    ).toEqual([reach, lift]);
  });

  it("refuses one task over 10,000 characters at its line, and writes nothing", async () => {
    const g = await fixture({
      version,
      episodes: 2,
      cameras: [],
      tasks: (e) => (e === 1 ? ["short", "x".repeat(10_001)] : ["short"]),
    });
    const other = uniqueId("lr");
    const error = await refused({ dir: g.root, datasetId: other, version: "1.0.0" });
    expect(error.problems).toEqual([
      {
        file: version === "v3.0" ? "meta/episodes/chunk-000/file-000.parquet" : "meta/episodes.jsonl",
        line: 2,
        message: "tasks[1] must be at most 10,000 characters",
      },
    ]);
    expect(await rowsOf(other)).toEqual(NOTHING);
  });
});
