import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openLeRobotDataset } from "./dataset";
import {
  buildLeRobotFixture,
  simulateLeRobotLoad,
  videoDuration,
  type LeRobotFixture,
  type LeRobotFixtureOptions,
} from "../testing/lerobot-fixtures";
import { aggregateStats, formatPathTemplate, plainValue, statsFromColumns, type StatsTree } from "./format";
import { parquetWriteFile } from "hyparquet-writer";
import { openParquet, parquetBatches, rewriteParquet, writeParquet } from "./parquet";
import { rewriteDataRows } from "./data-rows";
import { rowTransformOf, SubsetError, writeSubsetMeta, type SubsetOptions } from "./subset";

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "das-lerobot-subset-"));
  roots.push(dir);
  return dir;
};

const LONG_300 =
  `Wipe the table with the blue cloth — start at the left edge ✨ ${"and keep going. ".repeat(20)}`.slice(0, 310);
const LONG_10K =
  `Überprüfe die Schublade 🤖 ${"open the drawer, take out the spoon, close the drawer; ".repeat(200)}`.slice(
    0,
    10_000,
  );
const options = (version: LeRobotFixtureOptions["version"]): LeRobotFixtureOptions => ({
  version,
  episodes: 5,
  cameras: ["observation.images.front", "observation.images.wrist"],
  chunksSize: 2,
  episodesPerFile: 2,
  episodesPerMetaFile: 2,
  task: (e) => [LONG_300, LONG_10K, "Stack the cups.", "Stack the cups.", LONG_10K][e]!,
  extra: (e) => ({ outcome: e % 2 ? "failure" : "success", contributor: `op-${e}` }),
});

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** What `das pull` delivers for a subset: every data and video file (of the streams asked for) holding one of its episodes, byte for byte. */
async function deliver(
  source: string,
  episodes: number[],
  streams?: string[],
): Promise<{ target: string; delivered: Map<string, string> }> {
  const target = tempDir();
  const delivered = new Map<string, string>();
  for await (const file of (await openLeRobotDataset(source)).files()) {
    if (
      file.stream === null ||
      !file.episodes.some((e) => episodes.includes(e.episode_index)) ||
      (streams && !streams.includes(file.stream))
    )
      continue;
    mkdirSync(path.dirname(path.join(target, file.path)), { recursive: true });
    cpSync(path.join(source, file.path), path.join(target, file.path));
    delivered.set(file.path, sha(path.join(target, file.path)));
  }
  return { target, delivered };
}

/**
 * A subset as a pull leaves it: meta/ by writeSubsetMeta (on the service), and each data file it
 * plans a rewrite of written from the one delivered (by the client), as the plan's transform says.
 */
async function writeSubset(options: SubsetOptions) {
  const result = await writeSubsetMeta(options);
  const dataFiles: { path: string; rows: number; dropped: number }[] = [];
  for (const layout of result.rewrite?.layout ?? []) {
    const target = path.join(options.targetRoot, layout.path);
    const { rows, dropped } = await rewriteDataRows(
      path.join(options.sourceRoot, layout.path),
      `${target}.tmp`,
      rowTransformOf(layout),
    );
    renameSync(`${target}.tmp`, target);
    dataFiles.push({ path: layout.path, rows, dropped });
  }
  return { ...result, dataFiles };
}

async function episodeStats(f: LeRobotFixture, episodes: number[]): Promise<StatsTree[]> {
  if (f.version === "v2.1") {
    return readFileSync(path.join(f.root, "meta/episodes_stats.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { episode_index: number; stats: StatsTree })
      .filter((l) => episodes.includes(l.episode_index))
      .map((l) => l.stats);
  }
  const out: StatsTree[] = [];
  for (const file of [
    "meta/episodes/chunk-000/file-000.parquet",
    "meta/episodes/chunk-000/file-001.parquet",
    "meta/episodes/chunk-000/file-002.parquet",
  ]) {
    for await (const { rows } of parquetBatches(await openParquet(path.join(f.root, file))))
      for (const row of rows) if (episodes.includes(Number(row.episode_index))) out.push(statsFromColumns(row));
  }
  return out;
}

describe.each(["v2.0", "v2.1", "v3.0"] as const)("a %s subset", (version) => {
  const source = (async () => {
    const f = await buildLeRobotFixture(tempDir(), options(version));
    return f;
  })();
  const subset = [1, 3, 4];

  it("the fixture itself loads as LeRobot would load it", async () => {
    const f = await source;
    expect(await simulateLeRobotLoad(f.root)).toEqual({
      ok: true,
      frames: f.episodes.reduce((n, e) => n + e.length, 0),
    });
  });

  it("writes meta/ that agrees with the delivered files: totals, episodes, files, tasks byte for byte", async () => {
    const f = await source;
    const { target, delivered } = await deliver(f.root, subset);
    const result = await writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: [4, 1, 3, 1] });
    const frames = subset.reduce((n, e) => n + f.episodes[e]!.length, 0);
    expect(result).toMatchObject({
      codebaseVersion: version,
      episodes: subset,
      totalFrames: frames,
      removed: [],
      leftOut: [],
    });
    // v2 keeps the tasks the subset uses; v3 keeps tasks.parquet whole (LeRobot reads it by position).
    expect(result.totalTasks).toBe(version === "v3.0" ? 3 : 2);
    expect(result.referencedFiles).toEqual([...delivered.keys()].sort());

    const info = JSON.parse(readFileSync(path.join(target, "meta/info.json"), "utf8")) as Record<string, unknown>;
    expect(info).toMatchObject({
      total_episodes: 3,
      total_frames: frames,
      total_tasks: result.totalTasks,
      splits: { train: "1:2,3:5" },
      fps: 10,
      robot_type: "so100",
    });
    if (version !== "v3.0") expect(info).toMatchObject({ total_videos: 6, total_chunks: 3 });

    const dataset = await openLeRobotDataset(target);
    const episodes = await all(dataset.episodes());
    expect(episodes.map((e) => e.episode_index)).toEqual(subset);
    expect(episodes.map((e) => e.tasks[0])).toEqual([LONG_10K, "Stack the cups.", LONG_10K]);
    expect(Buffer.from(episodes[0]!.tasks[0]!)).toEqual(Buffer.from(LONG_10K));
    expect(episodes.map((e) => e.extra)).toEqual(
      subset.map((e) => ({ outcome: e % 2 ? "failure" : "success", contributor: `op-${e}` })),
    );
    expect(dataset.problems).toEqual([]); // totals agree with the episode records
    expect(await dataset.missingFiles()).toEqual([]); // every listed episode has its files
    const files = await all(dataset.files());
    const episodeFiles = files.filter((file) => file.stream !== null);
    // No file of an unlisted episode is referenced.
    for (const file of episodeFiles)
      for (const range of file.episodes) expect(subset, file.path).toContain(range.episode_index);
    expect(episodeFiles.map((file) => file.path).sort()).toEqual([...delivered.keys()].sort());
    // The data and video files are untouched.
    for (const [relative, hash] of delivered) expect(sha(path.join(target, relative)), relative).toBe(hash);

    if (version !== "v3.0") {
      // Selected lines verbatim, tasks the subset uses (the 10,000-character one byte for byte).
      const lines = (file: string, root: string) =>
        readFileSync(path.join(root, file), "utf8").split("\n").filter(Boolean);
      expect(lines("meta/episodes.jsonl", target)).toEqual(
        lines("meta/episodes.jsonl", f.root).filter((_, i) => subset.includes(i)),
      );
      expect(lines("meta/tasks.jsonl", target)).toEqual(
        lines("meta/tasks.jsonl", f.root).filter((l) => !l.includes(LONG_300)),
      );
    }
  });

  it("writes stats.json for the subset where LeRobot can, and keeps it where it cannot", async () => {
    const f = await source;
    const { target } = await deliver(f.root, subset);
    await writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: subset });
    const stats = JSON.parse(readFileSync(path.join(target, "meta/stats.json"), "utf8")) as StatsTree;
    if (version === "v2.0") {
      expect(readFileSync(path.join(target, "meta/stats.json"))).toEqual(
        readFileSync(path.join(f.root, "meta/stats.json")),
      );
      return;
    }
    expect(stats).toEqual(aggregateStats(await episodeStats(f, subset)));
    // Checked without the aggregation: `index` runs over the subset's global frame indices.
    const frames = subset.reduce((n, e) => n + f.episodes[e]!.length, 0);
    const firstIndex = f.episodes.slice(0, 1).reduce((n, e) => n + e.length, 0);
    const lastIndex = f.episodes.reduce((n, e) => n + e.length, 0) - 1;
    expect(stats.index).toMatchObject({ count: [frames], min: [firstIndex], max: [lastIndex] });
  });

  it("opens in LeRobot with the episode list where the version allows it, and says so", async () => {
    const f = await source;
    const { target } = await deliver(f.root, subset);
    const result = await writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: subset });
    expect(result.loader.loadsAsIs).toBe(false);
    expect(await simulateLeRobotLoad(target)).toMatchObject({ ok: false });
    const withList = await simulateLeRobotLoad(target, subset);
    if (version === "v3.0") {
      expect(result.loader).toMatchObject({ loadsWithEpisodeList: false, note: expect.stringMatching(/by position/) });
      expect(withList).toEqual({ ok: false, reason: expect.stringMatching(/out of range|by position/) });
    } else {
      expect(result.loader.loadsWithEpisodeList).toBe(true);
      expect(withList).toEqual({ ok: true, frames: subset.reduce((n, e) => n + f.episodes[e]!.length, 0) });
    }
  });

  it("a subset of episodes 0..k-1 opens in LeRobot as it is", async () => {
    const f = await source;
    const prefix = [0, 1, 2];
    const frames = prefix.reduce((n, e) => n + f.episodes[e]!.length, 0);
    const { target } = await deliver(f.root, prefix);
    const result = await writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: prefix });
    if (version === "v3.0") {
      // Episode 2's data file also holds episode 3: as delivered, data/ holds frames meta/ does not list, so it opens with the list.
      expect(result).toMatchObject({
        sharedDataFiles: [{ path: "data/chunk-000/file-001.parquet", otherEpisodes: [3] }],
        loader: { loadsAsIs: false, loadsWithEpisodeList: true },
      });
      expect(await simulateLeRobotLoad(target, prefix)).toEqual({ ok: true, frames });
      // With those frames dropped, as das pull does, it opens as it is.
      const { target: rewritten } = await deliver(f.root, prefix);
      const again = await writeSubset({
        sourceRoot: f.root,
        targetRoot: rewritten,
        episodes: prefix,
        rewriteData: true,
      });
      expect(again).toMatchObject({
        sharedDataFiles: [],
        rewrite: { renumbered: false },
        loader: { loadsAsIs: true, loadsWithEpisodeList: true, note: null },
      });
      expect(await simulateLeRobotLoad(rewritten)).toEqual({ ok: true, frames });
      return;
    }
    expect(result.loader).toEqual({ loadsAsIs: true, loadsWithEpisodeList: true, note: null });
    expect(await simulateLeRobotLoad(target)).toEqual({ ok: true, frames });
    expect(await simulateLeRobotLoad(target, prefix)).toMatchObject({ ok: true });
  });

  it("leaves out the cameras not kept, as LeRobot's remove_feature does: info.json's features, stats.json, the files meta/ points at", async () => {
    const f = await source;
    const [front, wrist] = ["observation.images.front", "observation.images.wrist"];
    const { target, delivered } = await deliver(f.root, subset, ["data", front]);
    const result = await writeSubset({
      sourceRoot: f.root,
      targetRoot: target,
      episodes: subset,
      videoKeys: [front],
      rewriteData: version === "v3.0",
    });
    expect(result.droppedVideoKeys).toEqual([wrist]);
    expect(result.referencedFiles).toEqual([...delivered.keys()].sort());
    const info = JSON.parse(readFileSync(path.join(target, "meta/info.json"), "utf8")) as {
      features: Record<string, unknown>;
      total_videos?: number;
    };
    expect(Object.keys(info.features)).toContain(front);
    expect(Object.keys(info.features)).not.toContain(wrist);
    if (version !== "v3.0") expect(info.total_videos).toBe(3);
    const stats = JSON.parse(readFileSync(path.join(target, "meta/stats.json"), "utf8")) as StatsTree;
    expect(Object.keys(stats)).toContain(front);
    expect(Object.keys(stats)).not.toContain(wrist);
    if (version !== "v2.0") {
      const kept = (await episodeStats(f, subset)).map(({ [wrist]: _, ...rest }) => rest);
      expect(stats).toEqual(aggregateStats(kept));
    }
    if (version === "v2.1")
      for (const line of readFileSync(path.join(target, "meta/episodes_stats.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean))
        expect(Object.keys(JSON.parse(line).stats)).not.toContain(wrist);
    const dataset = await openLeRobotDataset(target);
    expect(dataset.problems).toEqual([]);
    expect(await dataset.missingFiles()).toEqual([]);
    expect(await simulateLeRobotLoad(target, version === "v3.0" ? undefined : subset)).toEqual({
      ok: true,
      frames: subset.reduce((n, e) => n + f.episodes[e]!.length, 0),
    });
    await expect(
      writeSubsetMeta({
        sourceRoot: f.root,
        targetRoot: tempDir(),
        episodes: subset,
        videoKeys: ["observation.images.top"],
      }),
    ).rejects.toThrow(/no video feature observation.images.top/);
  });

  it("refuses episodes the version does not have, and writes nothing", async () => {
    const f = await source;
    const target = tempDir();
    await expect(writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: [1, 7] })).rejects.toThrow(
      SubsetError,
    );
    await expect(writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: [] })).rejects.toThrow(
      /at least one episode/,
    );
    await expect(writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: [-1] })).rejects.toThrow(
      /whole numbers/,
    );
    expect(existsSync(path.join(target, "meta"))).toBe(false);
  });
});

describe("a v3.0 subset", () => {
  it("keeps each episode file's columns, types and key/value metadata, and the rows' file places and time ranges", async () => {
    const f = await buildLeRobotFixture(tempDir(), options("v3.0"));
    const subset = [1, 2];
    const { target } = await deliver(f.root, subset);
    const result = await writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: subset });
    // meta/episodes files 000 (episodes 0-1) and 001 (2-3) keep their subset rows; 002 (episode 4) has none.
    expect(result.written.filter((w) => w.startsWith("meta/episodes/"))).toEqual([
      "meta/episodes/chunk-000/file-000.parquet",
      "meta/episodes/chunk-000/file-001.parquet",
    ]);
    // tasks.parquet keeps every position (LeRobot reads a task by it), but only the texts of the
    // tasks the subset performs: episode 0's task, which neither 1 nor 2 performs, is not carried.
    const taskRows = async (root: string) =>
      (await all(parquetBatches(await openParquet(path.join(root, "meta/tasks.parquet"))))).flatMap((b) =>
        b.rows.map((r) => plainValue(r)),
      );
    const tasks = await taskRows(target);
    expect(tasks).toEqual(
      (await taskRows(f.root)).map((row, i) =>
        i === 0 ? { ...(row as object), task: "(task 0: not in this subset)" } : row,
      ),
    );
    expect(JSON.stringify(tasks)).not.toContain(LONG_300.slice(0, 40));
    expect(result.totalTasks).toBe(3);
    const pandas = async (root: string) =>
      (await openParquet(path.join(root, "meta/tasks.parquet"))).metadata.key_value_metadata;
    expect(await pandas(target)).toEqual(await pandas(f.root));
    for (const file of ["meta/episodes/chunk-000/file-000.parquet", "meta/episodes/chunk-000/file-001.parquet"]) {
      const before = await openParquet(path.join(f.root, file));
      const after = await openParquet(path.join(target, file));
      expect(after.metadata.schema).toEqual(before.metadata.schema);
      expect(after.metadata.key_value_metadata ?? []).toEqual(before.metadata.key_value_metadata ?? []);
      const original = new Map<number, unknown>();
      for await (const { rows } of parquetBatches(before))
        for (const row of rows) original.set(Number(row.episode_index), row);
      for await (const { rows } of parquetBatches(after)) {
        for (const row of rows) {
          expect(subset).toContain(Number(row.episode_index));
          expect(row).toEqual(original.get(Number(row.episode_index)));
        }
      }
    }
    // Each row's video range lies inside the video file it names, which was delivered.
    const dataset = await openLeRobotDataset(target);
    for await (const file of dataset.files()) {
      if (file.stream === null || file.stream === "data") continue;
      const seconds = await videoDuration(path.join(target, file.path));
      for (const range of file.episodes) {
        expect(range.from_timestamp).toBe(f.videoRanges.get(range.episode_index)!.from);
        expect(range.to_timestamp!).toBeLessThanOrEqual(seconds + 1e-6);
      }
    }
  });

  it("can be written in place, over the original meta/ the client fetched, removing episode files left without rows", async () => {
    const f = await buildLeRobotFixture(tempDir(), options("v3.0"));
    const subset = [0, 1];
    const { target, delivered } = await deliver(f.root, subset);
    cpSync(path.join(f.root, "meta"), path.join(target, "meta"), { recursive: true });
    const result = await writeSubsetMeta({ sourceRoot: target, targetRoot: target, episodes: subset });
    expect(result.removed).toEqual([
      "meta/episodes/chunk-000/file-001.parquet",
      "meta/episodes/chunk-000/file-002.parquet",
    ]);
    expect(await simulateLeRobotLoad(target)).toEqual({
      ok: true,
      frames: f.episodes[0]!.length + f.episodes[1]!.length,
    });
    for (const [relative, hash] of delivered) expect(sha(path.join(target, relative))).toBe(hash);
    const dataset = await openLeRobotDataset(target);
    expect((await all(dataset.episodes())).map((e) => e.episode_index)).toEqual(subset);
    expect(dataset.problems).toEqual([]);
  });

  it("keeps meta/subtasks.parquet whole, so subtask_index still resolves", async () => {
    const f = await buildLeRobotFixture(tempDir(), {
      ...options("v3.0"),
      subtasks: { source: "subtask_index", labels: (e) => (e === 3 ? ["only in episode 3"] : ["reach", LONG_300]) },
    });
    const { target } = await deliver(f.root, [0, 1]);
    const result = await writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: [0, 1] });
    expect(result.written).toContain("meta/subtasks.parquet");
    const spans = await all((await openLeRobotDataset(target)).subtaskSpans());
    expect(spans).toEqual(
      f.episodes.slice(0, 2).flatMap((e) => e.subtasks.map((s) => ({ episode_index: e.episode_index, ...s }))),
    );
  });
});

/** Every row of the parquet files under `dir` (LeRobot's `<dir>/*\/*.parquet`), files in path order, as plain values. */
async function rowsUnder(root: string, dir: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const chunk of readdirSync(path.join(root, dir)).sort()) {
    for (const file of readdirSync(path.join(root, dir, chunk))
      .filter((n) => n.endsWith(".parquet"))
      .sort()) {
      for await (const { rows } of parquetBatches(await openParquet(path.join(root, dir, chunk, file))))
        out.push(...rows.map((r) => plainValue(r) as Record<string, unknown>));
    }
  }
  return out;
}

describe("a renumbered v3.0 subset", () => {
  // Files of two episodes: data/chunk-000/file-000 (0, 1), chunk-000/file-001 (2, 3), chunk-001/file-000 (4).
  const source = buildLeRobotFixture(tempDir(), { ...options("v3.0"), subtasks: { source: "language_persistent" } });
  const subset = [2, 3, 4];
  const renumberedData = ["data/chunk-000/file-001.parquet", "data/chunk-001/file-000.parquet"];

  it("opens in LeRobot with no episode list: episodes 0..k-1, frames with their values but episode_index and index, files' schemas kept", async () => {
    const f = await source;
    const { target, delivered } = await deliver(f.root, subset);
    const result = await writeSubset({
      sourceRoot: f.root,
      targetRoot: target,
      episodes: subset,
      rewriteData: true,
    });
    // Lengths 30, 20, 25; originally frames 45..75, 75..95, 95..120.
    const renumberedEpisodes = [
      { originalEpisodeIndex: 2, episodeIndex: 0, originalFrom: 45, originalTo: 75, from: 0, to: 30 },
      { originalEpisodeIndex: 3, episodeIndex: 1, originalFrom: 75, originalTo: 95, from: 30, to: 50 },
      { originalEpisodeIndex: 4, episodeIndex: 2, originalFrom: 95, originalTo: 120, from: 50, to: 75 },
    ];
    expect(result.rewrite).toEqual({
      episodes: renumberedEpisodes,
      renumbered: true,
      // What each file becomes, for the client that fetched it to write (the service's pull plan).
      layout: [
        {
          path: renumberedData[0],
          episodes: renumberedEpisodes.slice(0, 2).map((e, i) => ({ ...e, length: [30, 20][i] })),
          dropped: [],
        },
        { path: renumberedData[1], episodes: [{ ...renumberedEpisodes[2]!, length: 25 }], dropped: [] },
      ],
    });
    expect(result.dataFiles).toEqual(renumberedData.map((p, i) => ({ path: p, rows: [50, 25][i], dropped: 0 })));
    // The metadata only: no data file is written where the subset is planned.
    expect(result.written.filter((p) => p.startsWith("data/"))).toEqual([]);
    expect(result.loader).toEqual({ loadsAsIs: true, loadsWithEpisodeList: true, note: null });
    expect(await simulateLeRobotLoad(target)).toEqual({ ok: true, frames: 75 });

    // Every frame of every episode, in order, with its original values but episode_index and index.
    const original = (await rowsUnder(f.root, "data")).filter((r) => subset.includes(r.episode_index as number));
    expect(original).toHaveLength(75);
    const renumbered = await rowsUnder(target, "data");
    expect(renumbered).toEqual(
      original.map((row, i) => ({ ...row, episode_index: subset.indexOf(row.episode_index as number), index: i })),
    );
    expect(renumbered.some((r) => Array.isArray(r.language_persistent) && r.language_persistent.length)).toBe(true);
    for (const file of renumberedData) {
      const before = await openParquet(path.join(f.root, file));
      const after = await openParquet(path.join(target, file));
      expect(after.metadata.schema).toEqual(before.metadata.schema);
      expect(after.metadata.key_value_metadata ?? []).toEqual(before.metadata.key_value_metadata ?? []);
      expect(after.metadata.row_groups.map((g) => g.num_rows)).toEqual(
        before.metadata.row_groups.map((g) => g.num_rows),
      );
    }
    // The videos are untouched; the episode rows still point at them with the same time ranges.
    for (const [relative, hash] of delivered)
      if (relative.startsWith("videos/")) expect(sha(path.join(target, relative)), relative).toBe(hash);
    const originalRows = new Map((await rowsUnder(f.root, "meta/episodes")).map((r) => [r.episode_index as number, r]));
    const rows = (await rowsUnder(target, "meta/episodes")).sort(
      (a, b) => (a.episode_index as number) - (b.episode_index as number),
    );
    expect(rows).toEqual(
      result.rewrite!.episodes.map((e) => ({
        ...originalRows.get(e.originalEpisodeIndex),
        episode_index: e.episodeIndex,
        dataset_from_index: e.from,
        dataset_to_index: e.to,
      })),
    );
    for (const file of ["meta/episodes/chunk-000/file-001.parquet", "meta/episodes/chunk-000/file-002.parquet"]) {
      expect((await openParquet(path.join(target, file))).metadata.schema).toEqual(
        (await openParquet(path.join(f.root, file))).metadata.schema,
      );
    }

    const info = JSON.parse(readFileSync(path.join(target, "meta/info.json"), "utf8")) as Record<string, unknown>;
    expect(info).toMatchObject({ total_episodes: 3, total_frames: 75, splits: { train: "0:3" } });
    // Episode statistics are carried over (as dataset_tools.py does), and stats.json aggregated from them.
    expect(JSON.parse(readFileSync(path.join(target, "meta/stats.json"), "utf8"))).toEqual(
      aggregateStats(await episodeStats(f, subset)),
    );
    // The reader sees the same episodes under their new indices, with their tasks and owner fields.
    const dataset = await openLeRobotDataset(target);
    const episodes = await all(dataset.episodes());
    expect(episodes.map((e) => [e.episode_index, e.tasks[0], e.extra.contributor])).toEqual([
      [0, "Stack the cups.", "op-2"],
      [1, "Stack the cups.", "op-3"],
      [2, LONG_10K, "op-4"],
    ]);
    expect(dataset.problems).toEqual([]);
  });

  it("renumbers nothing for a subset of episodes 0..k-1", async () => {
    const f = await source;
    const { target, delivered } = await deliver(f.root, [0, 1]);
    const result = await writeSubset({
      sourceRoot: f.root,
      targetRoot: target,
      episodes: [0, 1],
      rewriteData: true,
    });
    expect(result.rewrite).toBeNull();
    expect(result.written.filter((w) => w.startsWith("data/"))).toEqual([]);
    for (const [relative, hash] of delivered) expect(sha(path.join(target, relative))).toBe(hash);
    expect(await simulateLeRobotLoad(target)).toEqual({ ok: true, frames: 45 });
  });

  it("drops from the data files the frames of episodes outside the subset, as LeRobot's delete_episodes does", async () => {
    const f = await source;
    // Episodes 1, 3 and 4 of files (0, 1), (2, 3), (4): the frames of 0 and 2 come along in the files and are left out.
    const kept = [1, 3, 4];
    const { target, delivered } = await deliver(f.root, kept);
    const result = await writeSubset({ sourceRoot: f.root, targetRoot: target, episodes: kept, rewriteData: true });
    const files = ["data/chunk-000/file-000.parquet", ...renumberedData];
    expect(result.rewrite).toMatchObject({ renumbered: true });
    expect(result.rewrite!.layout.map((l) => l.dropped)).toEqual([[0], [2], []]);
    expect(result.dataFiles).toEqual(
      files.map((p, i) => ({ path: p, dropped: [20, 30, 0][i], rows: [25, 20, 25][i] })),
    );
    expect(result.sharedDataFiles).toEqual([]);
    expect(result.loader).toEqual({ loadsAsIs: true, loadsWithEpisodeList: true, note: null });
    expect(await simulateLeRobotLoad(target)).toEqual({ ok: true, frames: 70 });
    const original = (await rowsUnder(f.root, "data")).filter((r) => kept.includes(r.episode_index as number));
    expect(await rowsUnder(target, "data")).toEqual(
      original.map((row, i) => ({ ...row, episode_index: kept.indexOf(row.episode_index as number), index: i })),
    );
    // Each row group (one per episode) keeps its rows; the groups of dropped episodes are gone.
    for (const [i, file] of files.entries())
      expect(
        (await openParquet(path.join(target, file))).metadata.row_groups.map((g) => Number(g.num_rows)),
        file,
      ).toEqual([[25], [20], [25]][i]);
    for (const [relative, hash] of delivered)
      if (relative.startsWith("videos/")) expect(sha(path.join(target, relative)), relative).toBe(hash);

    // Episodes 0..k-1 need no renumbering, but a shared data file is still rewritten: without it
    // the frames of episode 1 would sit in data/ with no episode row.
    const { target: prefix } = await deliver(f.root, [0]);
    const pruned = await writeSubset({ sourceRoot: f.root, targetRoot: prefix, episodes: [0], rewriteData: true });
    expect(pruned.rewrite).toMatchObject({ renumbered: false, layout: [{ dropped: [1] }] });
    expect(pruned.dataFiles).toEqual([{ path: "data/chunk-000/file-000.parquet", dropped: 25, rows: 20 }]);
    expect((await rowsUnder(prefix, "data")).map((r) => r.episode_index)).toEqual(Array(20).fill(0));
    expect(await simulateLeRobotLoad(prefix)).toEqual({ ok: true, frames: 20 });
    // Without rewriteData the data file stays as delivered, and the result says LeRobot needs the episode list.
    const { target: asIs } = await deliver(f.root, [0]);
    const shared = await writeSubsetMeta({ sourceRoot: f.root, targetRoot: asIs, episodes: [0] });
    expect(shared).toMatchObject({
      rewrite: null,
      sharedDataFiles: [{ path: "data/chunk-000/file-000.parquet", otherEpisodes: [1] }],
      loader: { loadsAsIs: false, loadsWithEpisodeList: true },
    });
    expect(shared.loader.note).toMatch(/data files also hold frames of episodes the metadata does not list/);
    expect(await simulateLeRobotLoad(asIs, [0])).toEqual({ ok: true, frames: 20 });
  });

  it("refuses to plan a v2.x subset's data files, and writes nothing", async () => {
    const v2 = await buildLeRobotFixture(tempDir(), { ...options("v2.1"), episodes: 3 });
    const target = tempDir();
    await expect(
      writeSubsetMeta({ sourceRoot: v2.root, targetRoot: target, episodes: [2], rewriteData: true }),
    ).rejects.toThrow(SubsetError);
    expect(existsSync(path.join(target, "meta"))).toBe(false);
  });

  it("is what LeRobot needs: episode_index renumbered alone, with each frame's index kept, does not open", async () => {
    const f = await source;
    const { target } = await deliver(f.root, subset);
    const result = await writeSubset({
      sourceRoot: f.root,
      targetRoot: target,
      episodes: subset,
      rewriteData: true,
    });
    // Undo the index half: frames keep their original index, and the episode rows their original ranges.
    for (const relative of renumberedData) {
      const temporary = path.join(target, `${relative}.undo`);
      await rewriteParquet(await openParquet(path.join(f.root, relative)), temporary, (rows) =>
        rows.map((r) => ({ ...r, episode_index: BigInt(subset.indexOf(Number(r.episode_index))) })),
      );
      cpSync(temporary, path.join(target, relative));
      rmSync(temporary);
    }
    const byNew = new Map(result.rewrite!.episodes.map((e) => [e.episodeIndex, e]));
    for (const relative of ["meta/episodes/chunk-000/file-001.parquet", "meta/episodes/chunk-000/file-002.parquet"]) {
      const parquet = await openParquet(path.join(target, relative));
      const rows: Record<string, unknown>[] = [];
      for await (const batch of parquetBatches(parquet)) rows.push(...batch.rows);
      const undone: Record<string, unknown>[] = rows.map((r) => ({
        ...r,
        dataset_from_index: BigInt(byNew.get(Number(r.episode_index))!.originalFrom),
        dataset_to_index: BigInt(byNew.get(Number(r.episode_index))!.originalTo),
      }));
      parquetWriteFile({
        filename: path.join(target, relative),
        schema: parquet.metadata.schema,
        kvMetadata: parquet.metadata.key_value_metadata,
        columnData: Object.keys(undone[0]!).map((name) => ({ name, data: undone.map((r) => r[name] ?? null) })),
      });
    }
    expect(await simulateLeRobotLoad(target)).toEqual({
      ok: false,
      reason: expect.stringMatching(/^row 0 of data\/ holds frame index 45/),
    });
  });
});

describe("a v3.0 dataset whose data and each camera's videos group episodes differently", () => {
  // As LeRobot rolls files over by size: data files of 5 episodes, front videos of 2, wrist videos of 3.
  const grouping = { data: 5, "observation.images.front": 2, "observation.images.wrist": 3 };
  const source = buildLeRobotFixture(tempDir(), {
    ...options("v3.0"),
    episodes: 12,
    chunksSize: 1000,
    task: (e) => (e % 2 ? LONG_300 : "Stack the cups."),
    episodesPerFileOf: grouping,
  });
  const groups = (n: number) =>
    Array.from({ length: Math.ceil(12 / n) }, (_, k) =>
      Array.from({ length: 12 }, (_, e) => e).slice(k * n, (k + 1) * n),
    );

  it("is written with each stream's own grouping and loads as LeRobot would load it", async () => {
    const f = await source;
    for (const [stream, n] of Object.entries(grouping))
      expect(
        f.files.filter((file) => file.stream === stream).map((file) => file.episodes),
        stream,
      ).toEqual(groups(n));
    expect(await simulateLeRobotLoad(f.root)).toEqual({
      ok: true,
      frames: f.episodes.reduce((n, e) => n + e.length, 0),
    });
  });

  it("does not load, in the replay, when an episode's range runs past the end of its video", async () => {
    const f = await source;
    const broken = tempDir();
    cpSync(f.root, broken, { recursive: true });
    // The wrist file of episodes 9-11 (7.5 s) replaced by the front file of 10-11 (5.5 s): the file is there, episode 11's seconds are not.
    cpSync(
      path.join(f.root, "videos/observation.images.front/chunk-000/file-005.mp4"),
      path.join(broken, "videos/observation.images.wrist/chunk-000/file-003.mp4"),
    );
    expect(await simulateLeRobotLoad(broken)).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^episode 11's videos\/observation.images.wrist\/to_timestamp is past the end of videos\/observation.images.wrist\/chunk-000\/file-003.mp4/,
      ),
    });
  });
});

describe("a v2.1 subset", () => {
  it("leaves out meta files LeRobot does not read, and reports them", async () => {
    const f = await buildLeRobotFixture(tempDir(), {
      ...options("v2.1"),
      extraFiles: { "README.md": "# x\n", "meta/modality.json": "{}" },
    });
    const { target } = await deliver(f.root, [2]);
    const result = await writeSubsetMeta({ sourceRoot: f.root, targetRoot: target, episodes: [2] });
    expect(result.leftOut).toEqual(["meta/modality.json"]);
    expect(existsSync(path.join(target, "meta/modality.json"))).toBe(false);
    expect(await simulateLeRobotLoad(target, [2])).toMatchObject({ ok: true });
  });
});

describe("format helpers", () => {
  it("aggregates stats as LeRobot's aggregate_stats does", () => {
    // Episode A: values 1, 3 (mean 2, std 1); episode B: values 5, 7, 9 (mean 7, std sqrt(8/3)).
    const a = {
      x: { min: [1], max: [3], mean: [2], std: [1], count: [2] },
      cam: {
        mean: [[[0.5]], [[0.2]], [[0]]],
        std: [[[0]], [[0]], [[0]]],
        min: [[[0]], [[0]], [[0]]],
        max: [[[1]], [[1]], [[1]]],
        count: [2],
      },
    };
    const b = {
      x: { min: [5], max: [9], mean: [7], std: [Math.sqrt(8 / 3)], count: [3] },
      cam: {
        mean: [[[1]], [[0.2]], [[1]]],
        std: [[[0]], [[0]], [[0]]],
        min: [[[0]], [[0]], [[0]]],
        max: [[[1]], [[1]], [[1]]],
        count: [3],
      },
    };
    const out = aggregateStats([a, b]);
    // All five values 1, 3, 5, 7, 9: mean 5, population std sqrt(8).
    expect(out.x!.min).toEqual([1]);
    expect(out.x!.max).toEqual([9]);
    expect(out.x!.count).toEqual([5]);
    expect((out.x!.mean as number[])[0]).toBeCloseTo(5, 12);
    expect((out.x!.std as number[])[0]).toBeCloseTo(Math.sqrt(8), 12);
    expect(out.cam!.mean).toEqual(
      [[[0.8]], [[0.2]], [[0.6]]].map((c) => c.map((r) => r.map((v) => expect.closeTo(v, 12)))),
    );
  });

  it("formats LeRobot's path templates as Python's str.format does", () => {
    expect(
      formatPathTemplate("videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4", {
        episode_chunk: 2,
        video_key: "observation.images.top",
        episode_index: 2042,
      }),
    ).toBe("videos/chunk-002/observation.images.top/episode_002042.mp4");
    expect(formatPathTemplate("{{literal}}/{n:4d}/{n:d}", { n: 7 })).toBe("{literal}/   7/7");
    expect(() => formatPathTemplate("{episode}", { episode_index: 1 })).toThrow(/unknown field 'episode'/);
    expect(() => formatPathTemplate("{episode_index:.2f}", { episode_index: 1 })).toThrow(/unsupported format/);
  });

  it("reads parquet INT64 as plain numbers", () => {
    expect(plainValue({ a: 3n, b: [1n, { c: 2n }] })).toEqual({ a: 3, b: [1, { c: 2 }] });
  });
});
