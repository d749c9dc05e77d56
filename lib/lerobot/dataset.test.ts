import { execFileSync } from "node:child_process";
import { lstatSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parquetWriteFile } from "hyparquet-writer";
import { afterAll, describe, expect, it } from "vitest";
import {
  buildHuggingFaceSnapshot,
  buildLeRobotFixture,
  videoDuration,
  type LeRobotFixture,
  type LeRobotFixtureOptions,
} from "../testing/lerobot-fixtures";
import { openParquet } from "./parquet";
import {
  LeRobotFormatError,
  openLeRobotDataset,
  type LeRobotDataset,
  type LeRobotFile,
  type SubtaskSpan,
} from "./dataset";
import { UNSAFE_CHARACTERS_DESCRIPTION } from "@/lib/characters";

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

async function fixture(options: LeRobotFixtureOptions): Promise<LeRobotFixture> {
  const root = mkdtempSync(path.join(os.tmpdir(), "das-lerobot-reader-"));
  roots.push(root);
  return buildLeRobotFixture(root, options);
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

// Multi-byte characters, so that "byte for byte" is tested, not just "same length".
const LONG_300 =
  `Pick up the blue mug by its handle — carefully — and place it on the coaster ☕ ${"then wait. ".repeat(25)}`.slice(
    0,
    320,
  );
const LONG_10K = `Ünïcödé instruction 🤖 ${"fold the towel in half, then in half again; ".repeat(240)}`.slice(
  0,
  10_000,
);
const tasks = (e: number) => [LONG_300, LONG_10K, "Short task."][e % 3]!;
const extra = (e: number) => ({
  outcome: e % 2 ? "failure" : "success",
  environment: `kitchen-${e % 2}`,
  contributor: `op-${e}`,
  has_recovery: e === 3,
});
const cameras = ["observation.images.front", "observation.images.wrist"];

describe.each(["v2.0", "v2.1", "v3.0"] as const)("a LeRobot %s dataset", (version) => {
  const built = (async () => {
    const f = await fixture({
      version,
      episodes: 5,
      cameras,
      chunksSize: 2,
      episodesPerFile: 2,
      task: tasks,
      extra,
      subtasks: { source: "language_persistent", labels: (e) => ["reach", LONG_300, e === 2 ? LONG_10K : "lift"] },
    });
    return { f, dataset: await openLeRobotDataset(f.root) };
  })();

  it("gives the dataset's facts", async () => {
    const { f, dataset } = await built;
    expect(dataset.facts).toMatchObject({
      codebaseVersion: version,
      robotType: "so100",
      fps: 10,
      totalEpisodes: 5,
      totalFrames: f.episodes.reduce((n, e) => n + e.length, 0),
      totalTasks: 3,
      chunksSize: 2,
      splits: { train: "0:5" },
      subtaskSource: "language",
    });
    expect(dataset.facts.cameras).toEqual(
      cameras.map((key) => ({ key, storage: "video", codec: "h264", height: 48, width: 64, fps: 10 })),
    );
    expect(Object.keys(dataset.facts.features)).toContain("observation.state");
  });

  it("yields every episode with its tasks byte for byte, its duration and the owner's fields", async () => {
    const { f, dataset } = await built;
    const episodes = await all(dataset.episodes());
    expect(episodes).toEqual(
      f.episodes.map((e) => ({
        episode_index: e.episode_index,
        tasks: e.tasks,
        length: e.length,
        duration_s: e.length / 10,
        extra: extra(e.episode_index),
      })),
    );
    expect(Buffer.from(episodes[1]!.tasks[0]!)).toEqual(Buffer.from(LONG_10K));
    expect(episodes[1]!.tasks[0]!.length).toBe(10_000);
    expect(dataset.problems).toEqual([]);
  });

  it("lists every file with its stream and the episodes it holds, and the version-level files", async () => {
    const { f, dataset } = await built;
    const files = await all(dataset.files());
    const byPath = new Map(files.map((file) => [file.path, file]));
    expect(files.length).toBe(byPath.size);
    for (const expected of f.files) {
      const listed = byPath.get(expected.path);
      expect(listed, expected.path).toBeDefined();
      expect(listed!.stream).toBe(expected.stream);
      expect(listed!.episodes.map((e) => e.episode_index)).toEqual(expected.episodes);
      expect(listed!.size_bytes).toBe(statSync(path.join(f.root, expected.path)).size);
    }
    const episodeFiles = files.filter((file) => file.stream !== null);
    expect(episodeFiles.map((file) => file.path).sort()).toEqual(f.files.map((file) => file.path).sort());
    const versionLevel = files.filter((file) => file.stream === null);
    expect(versionLevel.every((file) => file.episodes.length === 0)).toBe(true);
    const metaFiles =
      version === "v3.0"
        ? ["meta/episodes/chunk-000/file-000.parquet", "meta/tasks.parquet"]
        : ["meta/episodes.jsonl", "meta/tasks.jsonl", ...(version === "v2.1" ? ["meta/episodes_stats.jsonl"] : [])];
    expect(versionLevel.map((file) => file.path).sort()).toEqual(
      ["README.md", "meta/info.json", "meta/stats.json", ...metaFiles].sort(),
    );
    if (version === "v3.0") {
      // Several episodes per file, each with its place in it.
      const video = byPath.get("videos/observation.images.wrist/chunk-000/file-001.mp4")!;
      expect(video.episodes).toEqual([
        { episode_index: 2, from_timestamp: f.videoRanges.get(2)!.from, to_timestamp: f.videoRanges.get(2)!.to },
        { episode_index: 3, from_timestamp: f.videoRanges.get(3)!.from, to_timestamp: f.videoRanges.get(3)!.to },
      ]);
      expect(video.episodes[1]!.from_timestamp).toBe(3);
      expect(video.episodes[1]!.to_timestamp).toBeLessThanOrEqual(
        (await videoDuration(path.join(f.root, video.path))) + 1e-6,
      );
      const data = byPath.get("data/chunk-001/file-000.parquet")!; // file 2 of chunks of 2
      expect(data.episodes).toEqual([{ episode_index: 4, dataset_from_index: 95, dataset_to_index: 120 }]);
    } else {
      expect(byPath.get("videos/chunk-002/observation.images.front/episode_000004.mp4")?.episodes).toEqual([
        { episode_index: 4 },
      ]);
    }
  });

  it("derives subtask spans: each runs until the next one starts, the last until the episode ends", async () => {
    const { f, dataset } = await built;
    const spans = await all(dataset.subtaskSpans());
    expect(spans).toEqual(f.episodes.flatMap((e) => e.subtasks.map((s) => ({ episode_index: e.episode_index, ...s }))));
    expect(spans.find((s) => s.episode_index === 2 && s.label.length === 10_000)?.label).toBe(LONG_10K);
    expect(spans.filter((s) => s.label === LONG_300)).toHaveLength(5);
  });
});

describe("subtask annotations", () => {
  it.each(["language_events", "subtask_index"] as const)("are read from %s", async (source) => {
    const f = await fixture({
      version: "v3.0",
      episodes: 3,
      cameras: [],
      subtasks: { source, labels: (e) => (e === 1 ? ["approach", LONG_300] : ["reach", "grasp", "lift"]) },
    });
    const dataset = await openLeRobotDataset(f.root);
    expect(dataset.facts.subtaskSource).toBe(source === "subtask_index" ? "subtask_index" : "language");
    const spans: SubtaskSpan[] = await all(dataset.subtaskSpans());
    expect(spans).toEqual(f.episodes.flatMap((e) => e.subtasks.map((s) => ({ episode_index: e.episode_index, ...s }))));
    if (source === "subtask_index") {
      // The last two frames carry -1 (no subtask): the last span ends where they begin, not at the episode's end.
      expect(spans.find((s) => s.episode_index === 0 && s.label === "lift")).toEqual({
        episode_index: 0,
        label: "lift",
        start_s: 1.3,
        end_s: 1.8,
      });
    }
    expect(dataset.problems).toEqual([]);
  });

  it("an index past meta/subtasks.parquet is reported at its row in the data file, and leaves a gap", async () => {
    const f = await fixture({ version: "v3.0", episodes: 2, cameras: [], subtasks: { source: "subtask_index" } });
    parquetWriteFile({
      filename: path.join(f.root, "meta/subtasks.parquet"),
      columnData: [
        { name: "subtask_index", data: [0n, 1n], type: "INT64" },
        { name: "__index_level_0__", data: ["reach", "grasp"], type: "STRING" },
      ],
      kvMetadata: [{ key: "pandas", value: JSON.stringify({ index_columns: ["__index_level_0__"] }) }],
    });
    const dataset = await openLeRobotDataset(f.root);
    const spans = await all(dataset.subtaskSpans());
    expect(spans.map((s) => s.label)).toEqual(["reach", "grasp", "reach", "grasp"]);
    // "lift" starts at frame 13 of episode 0 (row 14) and frame 16 of episode 1 (row 20 + 16 + 1), in the file's second row group.
    expect(dataset.problems).toEqual([
      { file: "data/chunk-000/file-000.parquet", line: 14, message: "subtask_index 2 is not in meta/subtasks.parquet" },
      { file: "data/chunk-000/file-000.parquet", line: 37, message: "subtask_index 2 is not in meta/subtasks.parquet" },
    ]);
  });

  it.each(["language_persistent", "language_events", "subtask_index"] as const)(
    "%s: a subtask without a label makes no span, ends the one before, and is a notice",
    async (source) => {
      const f = await fixture({
        version: "v3.0",
        episodes: 2,
        cameras: [],
        subtasks: { source, labels: (e) => (e === 0 ? ["reach", "", "lift"] : ["reach", "grasp"]) },
      });
      const dataset = await openLeRobotDataset(f.root);
      const spans = await all(dataset.subtaskSpans());
      expect(spans).toEqual(
        f.episodes.flatMap((e) =>
          e.subtasks.filter((s) => s.label !== "").map((s) => ({ episode_index: e.episode_index, ...s })),
        ),
      );
      // "reach" ends where the unlabelled subtask starts, not where "lift" does.
      expect(spans[0]).toEqual({
        episode_index: 0,
        label: "reach",
        start_s: 0,
        end_s: f.episodes[0]!.subtasks[1]!.start_s,
      });
      expect(dataset.problems).toEqual([]);
      expect(dataset.notices).toEqual([
        {
          message: expect.stringMatching(/^subtask rows without a label/),
          count: 1,
          examples: [`episode 0 at ${f.episodes[0]!.subtasks[1]!.start_s} s`],
        },
      ]);
    },
  );

  it("is empty when the dataset declares none", async () => {
    const f = await fixture({ version: "v2.1", episodes: 2, cameras: [] });
    const dataset = await openLeRobotDataset(f.root);
    expect(dataset.facts.subtaskSource).toBeNull();
    expect(await all(dataset.subtaskSpans())).toEqual([]);
  });
});

describe("missing files", () => {
  it.each(["v2.1", "v3.0"] as const)(
    "are the files a %s dataset's metadata names that are not in the directory",
    async (version) => {
      const f = await fixture({ version, episodes: 4, cameras });
      const gone = [
        f.files.find((file) => file.stream === "data" && file.episodes.includes(1))!.path,
        f.files.find((file) => file.stream === cameras[1] && file.episodes.includes(3))!.path,
      ];
      gone.forEach((relative) => rmSync(path.join(f.root, relative)));
      rmSync(path.join(f.root, "meta/stats.json")); // optional: not missing
      const dataset = await openLeRobotDataset(f.root);
      expect((await dataset.missingFiles()).sort()).toEqual(gone.sort());
      const listed: LeRobotFile[] = await all(dataset.files());
      expect(
        listed
          .filter((file) => file.size_bytes === null)
          .map((file) => file.path)
          .sort(),
      ).toEqual(gone.sort());
    },
  );

  it("include the metadata files LeRobot needs", async () => {
    const f = await fixture({ version: "v2.1", episodes: 2, cameras: [] });
    rmSync(path.join(f.root, "meta/episodes_stats.jsonl"));
    rmSync(path.join(f.root, "meta/tasks.jsonl"));
    expect((await (await openLeRobotDataset(f.root)).missingFiles()).sort()).toEqual([
      "meta/episodes_stats.jsonl",
      "meta/tasks.jsonl",
    ]);
  });
});

describe("info.json", () => {
  async function withInfo(edit: (text: string) => string): Promise<string> {
    const f = await fixture({ version: "v2.1", episodes: 2, cameras: [] });
    const file = path.join(f.root, "meta/info.json");
    writeFileSync(file, edit(readFileSync(file, "utf8")));
    return f.root;
  }
  async function refusal(root: string): Promise<LeRobotFormatError> {
    const error = await openLeRobotDataset(root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeRobotFormatError);
    return error as LeRobotFormatError;
  }
  const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split("\n").length;

  it("of an unsupported version is refused, naming the version at its line", async () => {
    const root = await withInfo((t) => t.replace('"codebase_version": "v2.1"', '"codebase_version": "v1.6"'));
    const text = readFileSync(path.join(root, "meta/info.json"), "utf8");
    expect((await refusal(root)).problems).toEqual([
      {
        file: "meta/info.json",
        line: lineOf(text, "codebase_version"),
        message: expect.stringMatching(
          /codebase_version: codebase_version "v1.6" is not supported; supported versions are v2.0, v2.1, v3.0/,
        ),
      },
    ]);
  });

  it("that is not JSON is refused with the line of the error", async () => {
    const root = await withInfo((t) => t.replace('"fps": 10,', '"fps": 10,,'));
    const text = readFileSync(path.join(root, "meta/info.json"), "utf8");
    const [problem] = (await refusal(root)).problems;
    expect(problem).toMatchObject({
      file: "meta/info.json",
      line: lineOf(text, ",,"),
      message: expect.stringMatching(/^invalid JSON/),
    });
  });

  it("with a wrong field is refused at that field's line", async () => {
    const root = await withInfo((t) =>
      t.replace('"fps": 10', '"fps": "ten"').replace('"total_frames": 45', '"total_frames": -1'),
    );
    const text = readFileSync(path.join(root, "meta/info.json"), "utf8");
    expect((await refusal(root)).problems).toEqual([
      { file: "meta/info.json", line: lineOf(text, '"fps"'), message: "fps: fps must be a number" },
      {
        file: "meta/info.json",
        line: lineOf(text, '"total_frames"'),
        message: "total_frames: total_frames must be at least 0",
      },
    ]);
  });

  it("with a path template LeRobot could not format is refused", async () => {
    const root = await withInfo((t) =>
      t.replace("episode_{episode_index:06d}.parquet", "episode_{episode_idx:06d}.parquet"),
    );
    expect((await refusal(root)).problems[0]!.message).toMatch(/data_path: .*unknown field 'episode_idx'/);
  });

  it("with a feature name, robot_type or codec holding an unsafe character is refused at its line, the character escaped", async () => {
    const root = await withInfo((t) => {
      const info = JSON.parse(t) as Record<string, unknown> & { features: Record<string, unknown> };
      info.robot_type = "so100\u202e";
      info.features["observation.images.fro\u202ent"] = {
        dtype: "image",
        shape: [48, 64, 3],
        names: ["height", "width", "channels"],
      };
      info.features["observation.bad\u0007state"] = { dtype: "float32", shape: [1] };
      info.features["observation.images.top"] = {
        dtype: "video",
        shape: [48, 64, 3],
        info: { "video.codec": "h264\u2028" },
      };
      info.features[""] = { dtype: "float32", shape: [1] };
      return JSON.stringify(info, null, 4);
    });
    const text = readFileSync(path.join(root, "meta/info.json"), "utf8");
    const problems = (await refusal(root)).problems;
    expect(problems).toEqual([
      {
        file: "meta/info.json",
        line: lineOf(text, '"robot_type"'),
        message: `robot_type: robot_type must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`,
      },
      {
        file: "meta/info.json",
        line: lineOf(text, '"observation.images.fro\u202ent"'),
        message: `features.observation.images.fro\\u202ent: a feature name must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`,
      },
      {
        file: "meta/info.json",
        line: lineOf(text, '"observation.bad\\u0007state"'),
        message: `features.observation.bad\\u0007state: a feature name must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`,
      },
      {
        file: "meta/info.json",
        line: lineOf(text, '"video.codec"'),
        message: `features.observation.images.top.info.video.codec: video.codec must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`,
      },
      { file: "meta/info.json", line: lineOf(text, '"": {'), message: "features.: a feature name must not be empty" },
    ]);
    // Nothing of the refused values reaches the problems unescaped.
    for (const p of problems) expect(p.message).not.toMatch(/[\u0007\u2028\u202e]/);
  });

  it("that is not valid UTF-8 is refused at the line, never read with replacement characters", async () => {
    const f = await fixture({ version: "v2.1", episodes: 2, cameras: [] });
    const file = path.join(f.root, "meta/info.json");
    const text = readFileSync(file, "utf8").replace('"robot_type": "so100"', '"robot_type": "so100-XX"');
    const at = Buffer.from(text).indexOf("XX");
    const bytes = Buffer.from(text);
    bytes[at] = 0xc3; // a lead byte followed by 'X': not UTF-8
    writeFileSync(file, bytes);
    expect((await refusal(f.root)).problems).toEqual([
      { file: "meta/info.json", line: lineOf(text, '"robot_type"'), message: "line is not valid UTF-8" },
    ]);
  });

  it("longer than 8 MiB is refused at the line that crosses the limit", async () => {
    const root = await withInfo((t) => t.replace("{", `{\n${`${" ".repeat(1023)}\n`.repeat(8 * 1024)}`));
    expect((await refusal(root)).problems).toEqual([
      {
        file: "meta/info.json",
        line: 8 * 1024 + 1,
        message: "file is longer than 8,388,608 bytes, the limit for meta/info.json",
      },
    ]);
  });

  it("that is missing is refused", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "das-lerobot-reader-"));
    roots.push(root);
    expect((await refusal(root)).problems).toEqual([{ file: "meta/info.json", line: 0, message: "file is missing" }]);
  });

  it("whose totals disagree with the episodes is a notice, not a problem: the episodes listed are what counts", async () => {
    const root = await withInfo((t) =>
      t.replace('"total_episodes": 2', '"total_episodes": 3').replace('"total_frames": 45', '"total_frames": 50'),
    );
    const text = readFileSync(path.join(root, "meta/info.json"), "utf8");
    const dataset = await openLeRobotDataset(root);
    expect((await all(dataset.episodes())).map((e) => e.episode_index)).toEqual([0, 1]);
    await all(dataset.files());
    expect(await dataset.totals()).toEqual({ episodes: 2, frames: 45 });
    expect(dataset.problems).toEqual([]);
    // Counted once, however many passes read the episodes.
    expect(dataset.notices).toEqual([
      {
        message: "info.json's total_episodes is 3, but the episode metadata lists 2 episodes: imported as listed",
        count: 1,
        examples: [`meta/info.json:${lineOf(text, '"total_episodes"')}`],
      },
      {
        message: "info.json's total_frames is 50, but the episodes' lengths add up to 45: the version counts 45",
        count: 1,
        examples: [`meta/info.json:${lineOf(text, '"total_frames"')}`],
      },
    ]);
  });
});

describe("hostile input", () => {
  it("a bad episode line is reported at its line and left out", async () => {
    const f = await fixture({ version: "v2.1", episodes: 3, cameras: [] });
    const file = path.join(f.root, "meta/episodes.jsonl");
    const lines = readFileSync(file, "utf8").split("\n");
    lines[1] = lines[1]!.replace(/"length":\d+/, '"length":-4');
    writeFileSync(file, lines.join("\n"));
    const dataset: LeRobotDataset = await openLeRobotDataset(f.root);
    expect((await all(dataset.episodes())).map((e) => e.episode_index)).toEqual([0, 2]);
    expect(dataset.problems).toContainEqual({
      file: "meta/episodes.jsonl",
      line: 2,
      message: "length must be at least 0",
    });
  });

  it("an episode index read again is reported with where it was first, and the line not valid UTF-8 at its line", async () => {
    const f = await fixture({ version: "v2.1", episodes: 3, cameras: [] });
    const file = path.join(f.root, "meta/episodes.jsonl");
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    writeFileSync(
      file,
      Buffer.concat([Buffer.from([...lines, lines[1]!].join("\n") + "\n"), Buffer.from([0x7b, 0xff, 0x7d, 0x0a])]),
    );
    const dataset = await openLeRobotDataset(f.root);
    expect((await all(dataset.episodes())).map((e) => e.episode_index)).toEqual([0, 1, 2]);
    expect(dataset.problems).toContainEqual({
      file: "meta/episodes.jsonl",
      line: 4,
      message: "episode_index 1 appears again (first at meta/episodes.jsonl:2)",
    });
    expect(dataset.problems).toContainEqual({
      file: "meta/episodes.jsonl",
      line: 5,
      message: "line is not valid UTF-8",
    });
  });

  it("paths that leave the directory are refused, links and control characters are not listed", async () => {
    const f = await fixture({ version: "v2.1", episodes: 2, cameras: [] });
    const file = path.join(f.root, "meta/info.json");
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(
        '"data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"',
        '"../../outside/{episode_index}.parquet"',
      ),
    );
    symlinkSync("/etc/passwd", path.join(f.root, "passwd"));
    writeFileSync(path.join(f.root, "bad\u0007name.txt"), "x");
    const dataset = await openLeRobotDataset(f.root);
    const files = await all(dataset.files());
    expect(
      files.map((file) => file.path).filter((p) => p.includes("outside") || p === "passwd" || p.includes("\u0007")),
    ).toEqual([]);
    expect(dataset.problems).toContainEqual(
      expect.objectContaining({
        file: "meta/episodes.jsonl",
        line: 1,
        message: expect.stringMatching(/not a safe relative path/),
      }),
    );
    expect(dataset.problems).toContainEqual({
      file: "passwd",
      line: 0,
      message: expect.stringMatching(/^not imported: a symbolic link on its path leads outside the dataset directory/),
    });
    expect(dataset.problems).toContainEqual({
      file: "bad\\u0007name.txt",
      line: 0,
      message: `not imported: it contains ${UNSAFE_CHARACTERS_DESCRIPTION}`,
    });
  });
});

describe("the fixture builder", () => {
  it("writes real videos: a v3 file holds its episodes back to back", async () => {
    const f = await fixture({ version: "v3.0", episodes: 3, episodesPerFile: 3, cameras: ["observation.images.top"] });
    const seconds = await videoDuration(path.join(f.root, "videos/observation.images.top/chunk-000/file-000.mp4"));
    expect(seconds).toBeCloseTo(f.episodes.reduce((n, e) => n + e.length, 0) / f.fps, 2);
    expect(f.videoRanges.get(2)!.to).toBeCloseTo(seconds, 2);
  });
});

describe("compressed parquet", () => {
  // pyarrow writes Snappy unless told otherwise; datasets saved with compression="zstd" (or gzip,
  // brotli) are as valid, and hyparquet alone reads none of them.
  it.each(["GZIP", "BROTLI", "ZSTD"] as const)(
    "a v3.0 dataset written with %s is read whole: episodes, files and subtask spans",
    async (codec) => {
      const f = await fixture({
        version: "v3.0",
        episodes: 3,
        cameras: [],
        codec,
        subtasks: { source: "language_persistent" },
      });
      for (const relative of [
        "data/chunk-000/file-000.parquet",
        "meta/episodes/chunk-000/file-000.parquet",
        "meta/tasks.parquet",
      ]) {
        const parquet = await openParquet(path.join(f.root, relative));
        expect(
          parquet.metadata.row_groups.flatMap((g) => g.columns.map((c) => c.meta_data?.codec)),
          relative,
        ).toEqual(expect.arrayContaining([codec]));
        expect(new Set(parquet.metadata.row_groups.flatMap((g) => g.columns.map((c) => c.meta_data?.codec)))).toEqual(
          new Set([codec]),
        );
      }
      const dataset = await openLeRobotDataset(f.root);
      expect((await all(dataset.episodes())).map((e) => [e.episode_index, e.tasks, e.length])).toEqual(
        f.episodes.map((e) => [e.episode_index, e.tasks, e.length]),
      );
      expect(await all(dataset.subtaskSpans())).toEqual(
        f.episodes.flatMap((e) => e.subtasks.map((s) => ({ episode_index: e.episode_index, ...s }))),
      );
      expect(await dataset.missingFiles()).toEqual([]);
      expect(dataset.problems).toEqual([]);
    },
  );
});

describe("a Hugging Face cache snapshot (every file a symbolic link into blobs/)", () => {
  async function snapshotFixture(options: LeRobotFixtureOptions) {
    const base = mkdtempSync(path.join(os.tmpdir(), "das-lerobot-hf-"));
    roots.push(base);
    return buildHuggingFaceSnapshot(base, options);
  }

  it.each(["v2.1", "v3.0"] as const)(
    "%s: is read through its links, each file at the link's path with its target's size",
    async (version) => {
      const f = await snapshotFixture({
        version,
        episodes: 3,
        cameras: ["observation.images.front"],
        subtasks: { source: "language_persistent" },
      });
      const dataset = await openLeRobotDataset(f.root);
      const files = await all(dataset.files());
      expect(files.map((file) => file.path).sort()).toEqual(f.linked.filter((p) => p !== ".gitattributes").sort());
      for (const file of files) {
        expect(lstatSync(path.join(f.root, file.path)).isSymbolicLink(), file.path).toBe(true);
        expect(file.size_bytes, file.path).toBe(statSync(path.join(f.root, file.path)).size);
      }
      expect((await all(dataset.episodes())).map((e) => e.episode_index)).toEqual([0, 1, 2]);
      expect(await all(dataset.subtaskSpans())).toHaveLength(9);
      expect(await dataset.missingFiles()).toEqual([]);
      expect(dataset.problems).toEqual([]);
      // The snapshot's .gitattributes is hidden metadata, left out with a notice.
      expect(dataset.notices).toEqual([
        { message: expect.stringMatching(/^left out: hidden files/), count: 1, examples: [".gitattributes"] },
      ]);
    },
  );

  it("refuses links it must not follow: outside the directory and the snapshot's blobs/, to a directory, dangling, looping, to a FIFO", async () => {
    const f = await snapshotFixture({ version: "v2.1", episodes: 1, cameras: [] });
    const outside = path.join(path.dirname(f.repo), "secret.txt");
    writeFileSync(outside, "not the dataset's\n");
    symlinkSync(outside, path.join(f.root, "notes.txt"));
    symlinkSync("meta", path.join(f.root, "meta-again"));
    symlinkSync("nowhere.txt", path.join(f.root, "dangling.txt"));
    symlinkSync("loop-b", path.join(f.root, "loop-a"));
    symlinkSync("loop-a", path.join(f.root, "loop-b"));
    execFileSync("mkfifo", [path.join(f.root, "pipe-target")]);
    symlinkSync("pipe-target", path.join(f.root, "pipe"));
    const dataset = await openLeRobotDataset(f.root);
    const listed = (await all(dataset.files())).map((file) => file.path);
    expect(listed.filter((p) => !f.linked.includes(p))).toEqual([]);
    expect(dataset.problems.sort((a, b) => (a.file < b.file ? -1 : 1))).toEqual([
      { file: "dangling.txt", line: 0, message: "not imported: a symbolic link whose target does not exist" },
      { file: "loop-a", line: 0, message: "not imported: a symbolic link that loops" },
      { file: "loop-b", line: 0, message: "not imported: a symbolic link that loops" },
      {
        file: "meta-again",
        line: 0,
        message: "not imported: a symbolic link to a directory (links are followed to files only)",
      },
      {
        file: "notes.txt",
        line: 0,
        message: expect.stringMatching(
          /^not imported: a symbolic link on its path leads outside the dataset directory/,
        ),
      },
      { file: "pipe", line: 0, message: "not imported: a symbolic link to something that is not a regular file" },
      { file: "pipe-target", line: 0, message: "not imported: not a regular file" },
    ]);
  });
});

describe("files that are no part of the dataset", () => {
  it("hidden files and directories and a leftover images/ are left out with notices, not problems", async () => {
    const f = await fixture({
      version: "v3.0",
      episodes: 2,
      cameras: [],
      extraFiles: {
        "README.md": "# readme\n",
        ".gitattributes": "*.parquet filter=lfs diff=lfs merge=lfs -text\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".git/lfs/objects/ab/cd/abcd": "x".repeat(100),
        ".cache/huggingface/download/meta/info.json.metadata": "abc\n",
        ".DS_Store": "\0\0",
        "data/.DS_Store": "\0\0",
        "images/observation.images.front/episode_000000/frame_000000.png": "png",
        "docs/images/figure.png": "png",
      },
    });
    const dataset = await openLeRobotDataset(f.root);
    const listed = (await all(dataset.files())).map((file) => file.path);
    expect(listed.filter((p) => p.startsWith(".") || p.includes("/.") || p.startsWith("images/"))).toEqual([]);
    // Only a top-level images/ is LeRobot's: an images folder elsewhere is the owner's.
    expect(listed).toEqual(expect.arrayContaining(["README.md", "docs/images/figure.png"]));
    expect(dataset.problems).toEqual([]);
    expect(dataset.notices).toEqual([
      {
        message: expect.stringMatching(/^left out: hidden files/),
        count: 5,
        examples: [".DS_Store", ".cache/", ".git/", ".gitattributes", "data/.DS_Store"],
      },
      { message: expect.stringMatching(/^left out: images\//), count: 1, examples: ["images/"] },
    ]);
  });
});
