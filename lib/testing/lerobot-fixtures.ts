import { execFile, execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rename, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import { brotliCompressSync, gzipSync } from "node:zlib";
import path from "node:path";
import { promisify } from "node:util";
import { parquetMetadata, type SchemaElement } from "hyparquet";
import { ByteWriter, parquetWriteFile } from "hyparquet-writer";
import { writeMetadata } from "hyparquet-writer/src/metadata.js";
import {
  INFO_PATH,
  STATS_PATH,
  SUBTASKS_PATH,
  V2_EPISODES_PATH,
  V2_EPISODES_STATS_PATH,
  V2_TASKS_PATH,
  V3_EPISODES_DIR,
  V3_TASKS_PATH,
  aggregateStats,
  chunksSizeOf,
  formatPathTemplate,
  plainValue,
  v3EpisodesPath,
  videoKeysOf,
  type CodebaseVersion,
  type Info,
  type StatsTree,
} from "../lerobot/format";
import { openParquet, parquetBatches } from "../lerobot/parquet";

/**
 * Small but real LeRobot datasets for tests, written the way LeRobot lays them out: info.json,
 * tasks, episodes (jsonl for v2, parquet for v3), per-episode and global stats, frame parquet with
 * LeRobot's columns (float32 timestamp, int64 indices, float32 list state and action, one row
 * group per episode) and real H.264 mp4s from ffmpeg. For v3 an mp4 holds several episodes back
 * to back. Videos are encoded once per length (cached in the temp directory) and copied, so a suite
 * can build many datasets.
 *
 * `simulateLeRobotLoad` replays, over the files, what LeRobot's `LeRobotDataset(root=D, episodes=E)`
 * requires of a directory before it serves a frame (docs/lerobot.md lists the source it mirrors).
 */

export type FixtureSubtaskSource = "language_persistent" | "language_events" | "subtask_index";

export type LeRobotFixtureOptions = {
  version: CodebaseVersion;
  /** Number of episodes, default 4. */
  episodes?: number;
  /** Default 10. */
  fps?: number;
  /** Video feature keys, default one front camera. */
  cameras?: string[];
  /** Files per chunk directory (info.json chunks_size), default 1000. */
  chunksSize?: number;
  /** v3: episodes per data/video file, default 2. */
  episodesPerFile?: number;
  /**
   * v3: episodes per file of one stream (`data` or a camera key), where it differs from
   * episodesPerFile. LeRobot rolls the data files and each camera's videos over at sizes of their
   * own (100 MB and 500 MB by default), so on real data they group episodes differently.
   */
  episodesPerFileOf?: Record<string, number>;
  /** v3: episodes per meta/episodes file, default all in one. */
  episodesPerMetaFile?: number;
  /** Frames of an episode, default 20, 25, 30, 20, ... */
  length?: (episode: number) => number;
  /** The episode's task text, default one of two instructions. */
  task?: (episode: number) => string;
  /** Owner fields on the episode record (outcome, environment, ...). */
  extra?: (episode: number) => Record<string, string | number | boolean>;
  /** Subtask annotations stored the way `source` stores them; labels default to reach/grasp/lift. */
  subtasks?: { source: FixtureSubtaskSource; labels?: (episode: number) => string[] };
  /** Files beside the dataset, e.g. README.md (default: a README). */
  extraFiles?: Record<string, string>;

  // Variations found in real datasets.
  /** The episode's tasks, several or none (overrides `task`); its frames take them in equal runs. */
  tasks?: (episode: number) => string[];
  /** Features of dtype `image`: frames embedded in the data parquet as HF Image structs ({bytes, path}). */
  imageCameras?: string[];
  /** Compression of every parquet file (pyarrow's default is Snappy; `compression="zstd"` is common too). */
  codec?: FixtureCodec;
  /** `file`: one row group per data file, as a v2.1 → v3.0 conversion (concat, then to_parquet) writes it. */
  rowGroups?: "episode" | "file";
  /** String columns dictionary-encoded, as pyarrow writes them by default. */
  dictionaryStrings?: boolean;
};

export type FixtureCodec = "SNAPPY" | "GZIP" | "BROTLI" | "ZSTD";

export type FixtureEpisode = {
  episode_index: number;
  tasks: string[];
  length: number;
  extra: Record<string, string | number | boolean>;
  /** Spans as LeRobot's semantics give them: until the next subtask, the last until the end (or the unannotated tail). */
  subtasks: { label: string; start_s: number; end_s: number }[];
};

export type FixtureFile = { path: string; stream: string; episodes: number[] };

export type LeRobotFixture = {
  root: string;
  version: CodebaseVersion;
  fps: number;
  cameras: string[];
  tasks: string[];
  episodes: FixtureEpisode[];
  /** Data and video files with the episodes each holds. */
  files: FixtureFile[];
  /** v3: each episode's [from, to) seconds in its video file of the first camera (every camera's, unless episodesPerFileOf groups them differently). */
  videoRanges: Map<number, { from: number; to: number }>;
};

const STATE_NAMES = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];
const DEFAULT_TASKS = ["Pick up the yellow bottle on the table.", "Place the cube in the green bowl."];
const HEIGHT = 48;
const WIDTH = 64;

export async function buildLeRobotFixture(root: string, options: LeRobotFixtureOptions): Promise<LeRobotFixture> {
  const version = options.version;
  const v3 = version === "v3.0";
  const count = options.episodes ?? 4;
  const fps = options.fps ?? 10;
  const cameras = options.cameras ?? ["observation.images.front"];
  const chunksSize = options.chunksSize ?? 1000;
  const perFile = options.episodesPerFile ?? 2;
  const lengthOf = options.length ?? ((e: number) => 20 + (e % 3) * 5);
  const taskOf = options.task ?? ((e: number) => DEFAULT_TASKS[e % DEFAULT_TASKS.length]!);
  const tasksOf = options.tasks ?? ((e: number) => [taskOf(e)]);
  const imageCameras = options.imageCameras ?? [];
  const written = parquetOptions(options);
  const labelsOf = options.subtasks?.labels ?? (() => ["reach", "grasp", "lift"]);
  const source = options.subtasks?.source;

  const taskIndex = new Map<string, number>();
  const episodes: FixtureEpisode[] = [];
  let globalIndex = 0;
  const frames: { episode: FixtureEpisode; from: number; subtaskFrames: number[] }[] = [];
  for (let e = 0; e < count; e++) {
    const length = lengthOf(e);
    // An episode without tasks still has frames, and each frame a task_index: LeRobot records "" then.
    const episodeTasks = tasksOf(e);
    for (const task of episodeTasks.length ? episodeTasks : [""])
      if (!taskIndex.has(task)) taskIndex.set(task, taskIndex.size);
    const labels = source ? labelsOf(e) : [];
    // subtask i starts at frame floor(i * length / n); with subtask_index the last two frames stay unannotated (-1).
    const starts = labels.map((_, i) => Math.floor((i * length) / labels.length));
    const annotatedEnd = source === "subtask_index" ? length - 2 : length;
    const subtasks = labels.map((label, i) => ({
      label,
      start_s: starts[i]! / fps,
      end_s: (starts[i + 1] ?? annotatedEnd) / fps,
    }));
    const episode: FixtureEpisode = {
      episode_index: e,
      tasks: episodeTasks,
      length,
      extra: options.extra?.(e) ?? {},
      subtasks,
    };
    episodes.push(episode);
    frames.push({ episode, from: globalIndex, subtaskFrames: starts });
    globalIndex += length;
  }
  const tasks = [...taskIndex.keys()];
  const subtaskLabels = [...new Set(episodes.flatMap((e) => e.subtasks.map((s) => s.label)))];

  await mkdir(path.join(root, "meta"), { recursive: true });
  const features: Info["features"] = {
    action: { dtype: "float32", shape: [6], names: STATE_NAMES },
    "observation.state": { dtype: "float32", shape: [6], names: STATE_NAMES },
    ...Object.fromEntries(
      imageCameras.map((key) => [
        key,
        { dtype: "image", shape: [HEIGHT, WIDTH, 3], names: ["height", "width", "channels"], info: null },
      ]),
    ),
    ...Object.fromEntries(
      cameras.map((key) => {
        const videoInfo = {
          "video.fps": fps,
          "video.codec": "h264",
          "video.pix_fmt": "yuv420p",
          "video.is_depth_map": false,
          has_audio: false,
        };
        return [
          key,
          version === "v2.0"
            ? {
                dtype: "video",
                shape: [HEIGHT, WIDTH, 3],
                names: ["height", "width", "channels"],
                video_info: videoInfo,
              }
            : {
                dtype: "video",
                shape: [HEIGHT, WIDTH, 3],
                names: ["height", "width", "channels"],
                info: { ...videoInfo, "video.height": HEIGHT, "video.width": WIDTH, "video.channels": 3 },
              },
        ];
      }),
    ),
    timestamp: { dtype: "float32", shape: [1], names: null },
    frame_index: { dtype: "int64", shape: [1], names: null },
    episode_index: { dtype: "int64", shape: [1], names: null },
    index: { dtype: "int64", shape: [1], names: null },
    task_index: { dtype: "int64", shape: [1], names: null },
    ...(source === "subtask_index" ? { subtask_index: { dtype: "int64", shape: [1], names: null } } : {}),
    ...(source === "language_persistent" || source === "language_events"
      ? {
          language_persistent: { dtype: "language", shape: [1], names: null },
          language_events: { dtype: "language", shape: [1], names: null },
        }
      : {}),
  };

  // Frame rows and per-episode stats.
  const frameRows = new Map<number, Record<string, unknown>[]>();
  const episodeStats = new Map<number, StatsTree>();
  for (const { episode, from, subtaskFrames } of frames) {
    const rows: Record<string, unknown>[] = [];
    const persistent = episode.subtasks.map((s) => languageRow(s.label, s.start_s, true));
    for (let f = 0; f < episode.length; f++) {
      const state = STATE_NAMES.map((_, j) => Math.fround(Math.sin(episode.episode_index + f / 10 + j)));
      const row: Record<string, unknown> = {
        "observation.state": state,
        action: state.map((v) => Math.fround(v * 0.5)),
        timestamp: Math.fround(f / fps),
        frame_index: BigInt(f),
        episode_index: BigInt(episode.episode_index),
        index: BigInt(from + f),
        task_index: BigInt(
          taskIndex.get(episode.tasks[Math.floor((f * episode.tasks.length) / episode.length)] ?? "")!,
        ),
      };
      for (const key of imageCameras) row[key] = { bytes: PNG_1X1, path: null };
      if (source === "subtask_index") {
        const current = f >= episode.length - 2 ? -1 : subtaskFrames.filter((start) => start <= f).length - 1;
        row.subtask_index = BigInt(current < 0 ? -1 : subtaskLabels.indexOf(episode.subtasks[current]!.label));
      }
      if (source === "language_persistent" || source === "language_events") {
        row.language_persistent = source === "language_persistent" ? persistent : [];
        const starting = subtaskFrames
          .map((start, i) => (start === f ? episode.subtasks[i]! : null))
          .filter((s) => s !== null);
        row.language_events =
          source === "language_events" ? starting.map((s) => languageRow(s.label, s.start_s, false)) : [];
      }
      rows.push(row);
    }
    frameRows.set(episode.episode_index, rows);
    episodeStats.set(episode.episode_index, statsOf(rows, [...imageCameras, ...cameras], episode.episode_index));
  }
  const frameSchema = dataSchema(source, imageCameras);

  const files: FixtureFile[] = [];
  const videoRanges = new Map<number, { from: number; to: number }>();
  let info: Record<string, unknown>;
  if (!v3) {
    const dataPath = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet";
    const videoPath = "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4";
    for (const episode of episodes) {
      const values = {
        episode_chunk: Math.floor(episode.episode_index / chunksSize),
        episode_index: episode.episode_index,
      };
      const data = formatPathTemplate(dataPath, values);
      writeFrames(path.join(root, data), frameRows.get(episode.episode_index)!, frameSchema, [episode.length], written);
      files.push({ path: data, stream: "data", episodes: [episode.episode_index] });
      for (const key of cameras) {
        const video = formatPathTemplate(videoPath, { ...values, video_key: key });
        await placeVideo(path.join(root, video), episode.length, fps);
        files.push({ path: video, stream: key, episodes: [episode.episode_index] });
      }
    }
    await writeLines(
      path.join(root, V2_EPISODES_PATH),
      episodes.map((e) => ({ episode_index: e.episode_index, tasks: e.tasks, length: e.length, ...e.extra })),
    );
    await writeLines(
      path.join(root, V2_TASKS_PATH),
      tasks.map((task, i) => ({ task_index: i, task })),
    );
    if (version === "v2.1")
      await writeLines(
        path.join(root, V2_EPISODES_STATS_PATH),
        episodes.map((e) => ({ episode_index: e.episode_index, stats: episodeStats.get(e.episode_index) })),
      );
    info = {
      codebase_version: version,
      robot_type: "so100",
      total_episodes: count,
      total_frames: globalIndex,
      total_tasks: tasks.length,
      total_videos: count * cameras.length,
      total_chunks: Math.floor((count - 1) / chunksSize) + 1,
      chunks_size: chunksSize,
      fps,
      splits: { train: `0:${count}` },
      data_path: dataPath,
      video_path: cameras.length ? videoPath : null,
      features,
    };
  } else {
    const dataPath = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
    const videoPath = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4";
    const locate = (k: number) => ({ chunk_index: Math.floor(k / chunksSize), file_index: k % chunksSize });
    const metaRows: Record<string, unknown>[] = [];
    // Each stream (the data, every camera) groups the episodes into files of its own size; where
    // each episode lies: its file's chunk and index, and for a camera its seconds in the video.
    const placed = new Map<
      string,
      Map<number, { chunk_index: number; file_index: number; from: number; to: number }>
    >();
    const groupsOf = (stream: string) => {
      const n = options.episodesPerFileOf?.[stream] ?? perFile;
      return Array.from({ length: Math.ceil(count / n) }, (_, k) => episodes.slice(k * n, (k + 1) * n));
    };
    const streams = ["data", ...cameras];
    const grouped = new Map(streams.map((stream) => [stream, groupsOf(stream)]));
    // Files listed group by group, the data before the cameras, as with one grouping for all.
    for (let k = 0; streams.some((stream) => k < grouped.get(stream)!.length); k++) {
      const where = locate(k);
      for (const stream of streams) {
        const group = grouped.get(stream)![k];
        if (!group) continue;
        const places = placed.get(stream) ?? new Map();
        placed.set(stream, places);
        let seconds = 0;
        for (const episode of group) {
          places.set(episode.episode_index, { ...where, from: seconds, to: seconds + episode.length / fps });
          seconds += episode.length / fps;
        }
        if (stream === "data") {
          const data = formatPathTemplate(dataPath, where);
          writeFrames(
            path.join(root, data),
            group.flatMap((e) => frameRows.get(e.episode_index)!),
            frameSchema,
            options.rowGroups === "file" ? [group.reduce((n, e) => n + e.length, 0)] : group.map((e) => e.length),
            written,
          );
          files.push({ path: data, stream: "data", episodes: group.map((e) => e.episode_index) });
        } else {
          const video = formatPathTemplate(videoPath, { ...where, video_key: stream });
          await placeVideo(
            path.join(root, video),
            group.reduce((n, e) => n + e.length, 0),
            fps,
          );
          files.push({ path: video, stream, episodes: group.map((e) => e.episode_index) });
        }
      }
    }
    for (const episode of episodes) {
      const from = frames[episode.episode_index]!.from;
      const data = placed.get("data")!.get(episode.episode_index)!;
      const { from: start, to } = placed.get(cameras[0] ?? "data")!.get(episode.episode_index)!;
      videoRanges.set(episode.episode_index, { from: start, to });
      const row: Record<string, unknown> = {
        episode_index: BigInt(episode.episode_index),
        tasks: episode.tasks,
        length: BigInt(episode.length),
        "data/chunk_index": BigInt(data.chunk_index),
        "data/file_index": BigInt(data.file_index),
        dataset_from_index: BigInt(from),
        dataset_to_index: BigInt(from + episode.length),
      };
      for (const key of cameras) {
        const video = placed.get(key)!.get(episode.episode_index)!;
        row[`videos/${key}/chunk_index`] = BigInt(video.chunk_index);
        row[`videos/${key}/file_index`] = BigInt(video.file_index);
        row[`videos/${key}/from_timestamp`] = video.from;
        row[`videos/${key}/to_timestamp`] = video.to;
      }
      for (const [feature, stats] of Object.entries(episodeStats.get(episode.episode_index)!)) {
        for (const [name, value] of Object.entries(stats))
          row[`stats/${feature}/${name}`] = name === "count" ? (value as number[]).map(BigInt) : value;
      }
      Object.assign(row, episode.extra);
      metaRows.push(row);
    }
    const perMeta = options.episodesPerMetaFile ?? count;
    for (let m = 0; m * perMeta < count; m++) {
      const rows = metaRows
        .slice(m * perMeta, (m + 1) * perMeta)
        .map((row) => ({ ...row, "meta/episodes/chunk_index": 0n, "meta/episodes/file_index": BigInt(m) }));
      const target = path.join(root, v3EpisodesPath(0, m));
      await mkdir(path.dirname(target), { recursive: true });
      writeFixtureParquet({ filename: target, ...episodesColumns(rows, episodes, written), ...written.codec });
    }
    writeFixtureParquet({
      filename: path.join(root, V3_TASKS_PATH),
      columnData: [
        { name: "task_index", data: tasks.map((_, i) => BigInt(i)), type: "INT64", nullable: true },
        { name: "task", data: tasks, type: "STRING", nullable: true, ...written.strings },
      ],
      ...written.codec,
      kvMetadata: [
        {
          key: "pandas",
          value: pandasMetadata(
            ["task"],
            [
              ["task_index", "int64", "int64"],
              ["task", "unicode", "object"],
            ],
          ),
        },
      ],
    });
    info = {
      codebase_version: version,
      robot_type: "so100",
      total_episodes: count,
      total_frames: globalIndex,
      total_tasks: tasks.length,
      chunks_size: chunksSize,
      data_files_size_in_mb: 100,
      video_files_size_in_mb: 500,
      fps,
      splits: { train: `0:${count}` },
      data_path: dataPath,
      video_path: cameras.length ? videoPath : null,
      features,
    };
  }
  if (source === "subtask_index") {
    // pandas keeps the label as the (unnamed) index, as LeRobot's subtasks.parquet does.
    writeFixtureParquet({
      filename: path.join(root, SUBTASKS_PATH),
      columnData: [
        { name: "subtask_index", data: subtaskLabels.map((_, i) => BigInt(i)), type: "INT64", nullable: true },
        { name: "__index_level_0__", data: subtaskLabels, type: "STRING", nullable: true, ...written.strings },
      ],
      ...written.codec,
      kvMetadata: [
        {
          key: "pandas",
          value: pandasMetadata(
            ["__index_level_0__"],
            [
              ["subtask_index", "int64", "int64"],
              [null, "unicode", "object", "__index_level_0__"],
            ],
          ),
        },
      ],
    });
  }
  await writeFile(path.join(root, INFO_PATH), JSON.stringify(info, null, 4));
  await writeFile(path.join(root, STATS_PATH), JSON.stringify(aggregateStats([...episodeStats.values()]), null, 4));
  for (const [name, text] of Object.entries(options.extraFiles ?? { "README.md": "# A LeRobot fixture\n" })) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), text);
  }
  return { root, version, fps, cameras, tasks, episodes, files, videoRanges };
}

function languageRow(label: string, start: number, persistent: boolean) {
  const row: Record<string, unknown> = {
    role: "assistant",
    content: label,
    style: "subtask",
    camera: null,
    tool_calls: null,
  };
  if (persistent) row.timestamp = Math.fround(start);
  return row;
}

const nullable = (element: SchemaElement): SchemaElement => ({ repetition_type: "OPTIONAL", ...element });
const list = (name: string, element: SchemaElement[]): SchemaElement[] => [
  { name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  ...element,
];
const string = (name: string, required = false): SchemaElement => ({
  name,
  type: "BYTE_ARRAY",
  converted_type: "UTF8",
  repetition_type: required ? "REQUIRED" : "OPTIONAL",
});

/** The frame schema pyarrow gives LeRobot's columns (HF `datasets` features). */
function dataSchema(source: FixtureSubtaskSource | undefined, imageCameras: string[]): SchemaElement[] {
  const columns: SchemaElement[][] = [
    list("observation.state", [nullable({ name: "element", type: "FLOAT" })]),
    list("action", [nullable({ name: "element", type: "FLOAT" })]),
    [nullable({ name: "timestamp", type: "FLOAT" })],
    [nullable({ name: "frame_index", type: "INT64" })],
    [nullable({ name: "episode_index", type: "INT64" })],
    [nullable({ name: "index", type: "INT64" })],
    [nullable({ name: "task_index", type: "INT64" })],
  ];
  if (source === "subtask_index") columns.push([nullable({ name: "subtask_index", type: "INT64" })]);
  // HF `datasets` stores an Image feature as a struct of the encoded bytes and a path.
  for (const key of imageCameras)
    columns.push([
      { name: key, repetition_type: "OPTIONAL", num_children: 2 },
      nullable({ name: "bytes", type: "BYTE_ARRAY" }),
      string("path"),
    ]);
  if (source === "language_persistent" || source === "language_events") {
    const toolCalls = list("tool_calls", [string("element")]);
    columns.push(
      list("language_persistent", [
        { name: "element", repetition_type: "OPTIONAL", num_children: 6 },
        string("role", true),
        string("content"),
        string("style"),
        { name: "timestamp", type: "FLOAT", repetition_type: "REQUIRED" },
        string("camera"),
        ...toolCalls,
      ]),
      list("language_events", [
        { name: "element", repetition_type: "OPTIONAL", num_children: 5 },
        string("role", true),
        string("content"),
        string("style"),
        string("camera"),
        ...toolCalls,
      ]),
    );
  }
  return [{ name: "schema", num_children: columns.length }, ...columns.flat()];
}

function writeFrames(
  file: string,
  rows: Record<string, unknown>[],
  schema: SchemaElement[],
  rowGroups: number[],
  written: WrittenAs,
): void {
  const names = [
    "observation.state",
    "action",
    "timestamp",
    "frame_index",
    "episode_index",
    "index",
    "task_index",
    "subtask_index",
    "language_persistent",
    "language_events",
  ].filter((n) => schema.some((e) => e.name === n));
  // Image columns (structs) follow the fixed ones, in the schema's order.
  const images = schema
    .filter((e) => e.num_children === 2 && !names.includes(e.name) && e.name !== "schema")
    .map((e) => e.name);
  mkdirSyncFor(file);
  writeFixtureParquet({
    filename: file,
    schema,
    rowGroupSize: rowGroups,
    columnData: [...names, ...images].map((name) => ({
      name,
      data: rows.map((r) => r[name] ?? null),
      ...(name.startsWith("language_") ? written.strings : {}),
    })),
    ...written.codec,
  });
}

function episodesColumns(rows: Record<string, unknown>[], episodes: FixtureEpisode[], written: WrittenAs) {
  // Every row's keys: an owner field may be on some episodes only (null on the others).
  const names = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const extraTypes = new Map<string, "STRING" | "BOOLEAN" | "DOUBLE">();
  for (const e of episodes)
    for (const [k, v] of Object.entries(e.extra))
      extraTypes.set(k, typeof v === "string" ? "STRING" : typeof v === "boolean" ? "BOOLEAN" : "DOUBLE");
  const schema: SchemaElement[] = [{ name: "schema", num_children: names.length }];
  for (const name of names) {
    const sample = rows.find((r) => r[name] !== null && r[name] !== undefined)?.[name];
    if (name === "tasks") schema.push(...list(name, [string("element")]));
    else if (extraTypes.has(name))
      schema.push(
        extraTypes.get(name) === "STRING"
          ? string(name)
          : nullable({ name, type: extraTypes.get(name) === "BOOLEAN" ? "BOOLEAN" : "DOUBLE" }),
      );
    else if (typeof sample === "bigint") schema.push(nullable({ name, type: "INT64" }));
    else if (typeof sample === "number") schema.push(nullable({ name, type: "DOUBLE" }));
    else if (Array.isArray(sample)) {
      // stats: list<double>, list<int64> for count, list<list<list<double>>> for cameras
      let depth = 0;
      let leaf: unknown = sample;
      while (Array.isArray(leaf)) {
        depth++;
        leaf = leaf[0];
      }
      let element: SchemaElement[] = [
        nullable({ name: "element", type: typeof leaf === "bigint" ? "INT64" : "DOUBLE" }),
      ];
      for (let d = 1; d < depth; d++) element = list("element", element);
      schema.push(...list(name, element));
    } else throw new Error(`fixture: no parquet type for episodes column ${name}`);
  }
  const strings = new Set(["tasks", ...[...extraTypes].filter(([, type]) => type === "STRING").map(([name]) => name)]);
  return {
    schema,
    columnData: names.map((name) => ({
      name,
      data: rows.map((r) => r[name] ?? null),
      ...(strings.has(name) ? written.strings : {}),
    })),
  };
}

type Compressors = Partial<Record<FixtureCodec, (bytes: Uint8Array) => Uint8Array>>;
type WrittenAs = {
  codec: { codec?: FixtureCodec; compressors?: Compressors };
  strings: { encoding?: "RLE_DICTIONARY" };
};

/** Compressors for hyparquet-writer: Node's zlib for GZIP and BROTLI (ZSTD: writeFixtureParquet). */
const FIXTURE_COMPRESSORS: Compressors = {
  GZIP: (bytes) => new Uint8Array(gzipSync(bytes)),
  BROTLI: (bytes) => new Uint8Array(brotliCompressSync(bytes)),
};

/**
 * parquetWriteFile, with ZSTD pages compressed by Debian's zstd (Node 20's zlib has none). The
 * writer wants each page compressed at once, and a zstd process per page costs seconds over a
 * dataset, so the file is written twice: once to collect its pages, then with the pages zstd
 * compressed in one run. The writer is deterministic, so the second run asks for the same pages.
 */
function writeFixtureParquet(options: Parameters<typeof parquetWriteFile>[0]): void {
  if (options.codec !== "ZSTD") {
    parquetWriteFile(options);
    return;
  }
  const pages: Uint8Array[] = [];
  parquetWriteFile({ ...options, compressors: { ZSTD: (bytes) => (pages.push(bytes.slice()), bytes) } });
  const dir = mkdtempSync(path.join(os.tmpdir(), "das-fixture-zstd-"));
  try {
    const names = pages.map((page, i) => {
      writeFileSync(path.join(dir, `${i}`), page);
      return `${i}`;
    });
    execFileSync("zstd", ["-q", "-3", ...names], { cwd: dir });
    const compressed = names.map((name) => new Uint8Array(readFileSync(path.join(dir, `${name}.zst`))));
    let next = 0;
    parquetWriteFile({
      ...options,
      compressors: {
        ZSTD: (bytes) => {
          const i = next++;
          if (!Buffer.from(bytes).equals(Buffer.from(pages[i]!)))
            throw new Error("fixture: the second write asked for another page");
          return compressed[i]!;
        },
      },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function parquetOptions(options: LeRobotFixtureOptions): WrittenAs {
  return {
    codec: options.codec ? { codec: options.codec, compressors: FIXTURE_COMPRESSORS } : {},
    strings: options.dictionaryStrings ? { encoding: "RLE_DICTIONARY" } : {},
  };
}

/** A 1x1 PNG: what an image feature's `bytes` hold (never decoded here). */
const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  "base64",
);

function statsOf(rows: Record<string, unknown>[], cameras: string[], episode: number): StatsTree {
  const stats: StatsTree = {};
  for (const feature of [
    "observation.state",
    "action",
    "timestamp",
    "frame_index",
    "episode_index",
    "index",
    "task_index",
  ]) {
    const vectors = rows.map((r) => {
      const v = r[feature];
      return (Array.isArray(v) ? v : [v]).map((x) => Number(x));
    });
    const dims = vectors[0]!.length;
    const column = (j: number) => vectors.map((v) => v[j]!);
    const mean = Array.from({ length: dims }, (_, j) => column(j).reduce((a, b) => a + b, 0) / rows.length);
    stats[feature] = {
      min: Array.from({ length: dims }, (_, j) => Math.min(...column(j))),
      max: Array.from({ length: dims }, (_, j) => Math.max(...column(j))),
      mean,
      std: Array.from({ length: dims }, (_, j) =>
        Math.sqrt(column(j).reduce((a, b) => a + (b - mean[j]!) ** 2, 0) / rows.length),
      ),
      count: [rows.length],
    };
  }
  for (const key of cameras) {
    const v = (x: number) => [[[x]], [[x / 2]], [[x / 3]]];
    stats[key] = {
      min: v(0),
      max: v(1),
      mean: v(0.4 + episode / 100),
      std: v(0.2),
      count: [Math.min(rows.length, 100)],
    };
  }
  return stats;
}

async function writeLines(file: string, records: unknown[]): Promise<void> {
  await writeFile(file, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
}

function mkdirSyncFor(file: string): void {
  // parquetWriteFile writes synchronously, so the directory must exist first.
  mkdirSync(path.dirname(file), { recursive: true });
}

const exec = promisify(execFile);
// Shared by every run and worker, so it holds one file per video shape however often tests run.
const VIDEO_CACHE = path.join(os.tmpdir(), "das-lerobot-fixture-videos");
const encoded = new Map<string, Promise<string>>();

/** An H.264 mp4 of exactly `frameCount` frames at `fps`, encoded once per shape and copied. */
async function placeVideo(target: string, frameCount: number, fps: number): Promise<void> {
  const file = path.join(VIDEO_CACHE, `testsrc-${WIDTH}x${HEIGHT}-${fps}fps-${frameCount}.mp4`);
  if (!encoded.has(file)) {
    encoded.set(
      file,
      (async () => {
        if (await stat(file).catch(() => null)) return file;
        await mkdir(VIDEO_CACHE, { recursive: true });
        // Encoded beside the cache entry and renamed, so a concurrent worker never copies half a file.
        const partial = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
        await exec("ffmpeg", [
          "-v",
          "error",
          "-y",
          "-f",
          "lavfi",
          "-i",
          `testsrc=size=${WIDTH}x${HEIGHT}:rate=${fps}`,
          "-frames:v",
          String(frameCount),
          "-c:v",
          "libx264",
          "-preset",
          "ultrafast",
          "-pix_fmt",
          "yuv420p",
          "-f",
          "mp4",
          partial,
        ]);
        await rename(partial, file);
        return file;
      })(),
    );
  }
  await mkdir(path.dirname(target), { recursive: true });
  await copyFile(await encoded.get(file)!, target);
}

/** Seconds of video in an mp4, from ffprobe. */
export async function videoDuration(file: string): Promise<number> {
  const { stdout } = await exec("ffprobe", [
    "-v",
    "error",
    "-show_entries",
    "format=duration",
    "-of",
    "default=noprint_wrappers=1:nokey=1",
    file,
  ]);
  return Number(stdout.trim());
}

export type LoadCheck = { ok: true; frames: number } | { ok: false; reason: string };

/**
 * What `LeRobotDataset(repo_id, root=D, episodes=E)` needs of D before it serves frames, checked
 * over the files without LeRobot (no Python here). v2.x follows LeRobot 0.3 (the last to read
 * v2.1), v3.0 follows the current loader: see docs/lerobot.md for the source files.
 */
export async function simulateLeRobotLoad(root: string, episodes?: number[]): Promise<LoadCheck> {
  const info = JSON.parse(await readFile(path.join(root, INFO_PATH), "utf8")) as Info;
  const fail = (reason: string): LoadCheck => ({ ok: false, reason });
  const exists = async (relative: string) => !!(await stat(path.join(root, relative)).catch(() => null));
  const requested = episodes ?? Array.from({ length: info.total_episodes }, (_, i) => i);
  const videoKeys = videoKeysOf(info);
  // A video frame is decoded at its time in the file; one past the end of the file is not there.
  const durations = new Map<string, Promise<number>>();
  const secondsOf = (relative: string) => {
    if (!durations.has(relative)) durations.set(relative, videoDuration(path.join(root, relative)));
    return durations.get(relative)!;
  };
  // HF datasets reads the frame files cast to info.json's features (all but the videos): a column
  // on one side only fails the cast.
  const declared = Object.keys(info.features)
    .filter((key) => info.features[key]!.dtype !== "video")
    .sort();
  for (const file of (await walkFiles(root, "data")).filter((f) => f.endsWith(".parquet"))) {
    const columns = [...(await openParquet(path.join(root, file))).columns].sort();
    if (JSON.stringify(columns) !== JSON.stringify(declared))
      return fail(
        `${file} has the columns ${columns.join(", ")}, info.json's features declare ${declared.join(", ")}: the cast to the features fails`,
      );
  }
  if (info.codebase_version !== "v3.0") {
    const lines = async (relative: string) =>
      (await readFile(path.join(root, relative), "utf8"))
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const tasks = new Map((await lines(V2_TASKS_PATH)).map((t) => [t.task_index as number, t.task as string]));
    const metaEpisodes = new Map((await lines(V2_EPISODES_PATH)).map((e) => [e.episode_index as number, e]));
    if (info.codebase_version === "v2.1") {
      const stats = new Set((await lines(V2_EPISODES_STATS_PATH)).map((s) => s.episode_index as number));
      if (episodes)
        for (const e of episodes) if (!stats.has(e)) return fail(`episodes_stats has no episode ${e} (KeyError)`);
    }
    const values = (e: number) => ({ episode_chunk: Math.floor(e / chunksSizeOf(info)), episode_index: e });
    for (const e of requested) {
      const videos = videoKeys.map((key) => formatPathTemplate(info.video_path!, { ...values(e), video_key: key }));
      for (const p of [formatPathTemplate(info.data_path, values(e)), ...videos])
        if (!(await exists(p))) return fail(`${p} is missing: LeRobot would try to download it from the Hub`);
      // Frame f of the episode is decoded at f / fps in its own video.
      const length = metaEpisodes.get(e)?.length as number | undefined;
      for (const p of videos)
        if (length !== undefined && (length - 1) / info.fps >= (await secondsOf(p)) - 1e-6)
          return fail(`${p} ends before frame ${length - 1} of episode ${e}`);
    }
    // hf_dataset: the requested episodes' files, or every parquet under data/ in name order.
    const files = episodes
      ? requested.map((e) => formatPathTemplate(info.data_path, values(e)))
      : (await walkFiles(root, "data")).filter((f) => f.endsWith(".parquet")).sort();
    const rows = await frameRows(root, files);
    // episode_data_index: cumulative lengths over the metadata's episodes (sorted by index), filtered to E.
    const order = [...metaEpisodes.keys()].sort((a, b) => a - b).filter((e) => !episodes || episodes.includes(e));
    let at = 0;
    for (const e of order) {
      const length = metaEpisodes.get(e)!.length as number;
      for (let f = 0; f < length; f++) {
        const row = rows[at + f];
        if (!row || row.episode_index !== e || row.frame_index !== f)
          return fail(
            `frame ${at + f} of the loaded data is not frame ${f} of episode ${e} (episode_data_index out of step)`,
          );
      }
      at += length;
    }
    if (at !== rows.length) return fail(`the data holds ${rows.length} frames, the episodes' lengths ${at}`);
    for (const row of rows)
      if (!tasks.has(row.task_index as number))
        return fail(`task_index ${row.task_index} is not in tasks.jsonl (KeyError)`);
    return { ok: true, frames: rows.length };
  }
  // v3.0: meta.episodes is a table sorted by episode_index and looked up by position.
  const metaFiles = (await walkFiles(root, V3_EPISODES_DIR)).filter((f) => f.endsWith(".parquet")).sort();
  const meta = (await frameRows(root, metaFiles)).sort(
    (a, b) => (a.episode_index as number) - (b.episode_index as number),
  );
  const taskCount = Number((await openParquet(path.join(root, V3_TASKS_PATH))).metadata.num_rows);
  const dataFiles = (await walkFiles(root, "data")).filter((f) => f.endsWith(".parquet")).sort();
  const all = await frameRows(root, dataFiles);
  const rows = episodes ? all.filter((r) => episodes.includes(r.episode_index as number)) : all;
  const available = new Set(rows.map((r) => r.episode_index as number));
  for (const e of requested) {
    if (!available.has(e))
      return fail(`episode ${e} is not in the data: LeRobot would try to download it from the Hub`);
    if (e >= meta.length)
      return fail(`episode ${e}: meta.episodes[${e}] is out of range (${meta.length} rows): IndexError`);
    const row = meta[e]!;
    if (row.episode_index !== e)
      return fail(`meta.episodes[${e}] is episode ${row.episode_index}: LeRobot looks episodes up by position`);
    for (const key of videoKeys) {
      const columns = ["chunk_index", "file_index", "from_timestamp", "to_timestamp"].map((c) => `videos/${key}/${c}`);
      const absent = columns.find((c) => typeof row[c] !== "number");
      if (absent)
        return fail(`meta.episodes[${e}] has no ${absent}, which LeRobot reads for the camera ${key} (KeyError)`);
      const p = formatPathTemplate(info.video_path!, {
        video_key: key,
        chunk_index: row[columns[0]!] as number,
        file_index: row[columns[1]!] as number,
      });
      if (!(await exists(p))) return fail(`${p} is missing: LeRobot would try to download it from the Hub`);
      if ((row[columns[3]!] as number) > (await secondsOf(p)) + 1e-4)
        return fail(`episode ${e}'s ${columns[3]} is past the end of ${p}`);
    }
  }
  const served = episodes ? rows : rows.slice(0, info.total_frames);
  if (!episodes && rows.length < info.total_frames)
    return fail(`total_frames is ${info.total_frames}, but data/ holds ${rows.length} frames`);
  // Frames are fetched by `index`: with no episode list it is taken for the row in data/ (files in
  // path order), with one it is mapped to the row (dict(zip(index, range)), strict: no repeats).
  if (!episodes) {
    const at = served.findIndex((frame, row) => frame.index !== row);
    if (at >= 0)
      return fail(
        `row ${at} of data/ holds frame index ${served[at]!.index}: with no episode list LeRobot reads frame index i from row i`,
      );
  } else if (new Set(served.map((frame) => frame.index)).size !== served.length)
    return fail("frame indices repeat in the loaded data (the absolute-to-relative index map is strict)");
  // An episode's frames are dataset_from_index..dataset_to_index of its row, in order (delta
  // timestamps and the sampler work in those bounds), frame_index 0..length-1.
  const framesOf = new Map<number, Record<string, unknown>[]>();
  for (const frame of served)
    framesOf.set(frame.episode_index as number, [...(framesOf.get(frame.episode_index as number) ?? []), frame]);
  for (const e of requested) {
    const row = meta[e]!;
    const frames = framesOf.get(e) ?? [];
    const from = row.dataset_from_index as number;
    if ((row.dataset_to_index as number) - from !== row.length || frames.length !== row.length) {
      return fail(
        `episode ${e} has ${frames.length} frames, its row says length ${row.length} and dataset_from_index..dataset_to_index ${from}..${row.dataset_to_index}`,
      );
    }
    const wrong = frames.findIndex((frame, i) => frame.index !== from + i || frame.frame_index !== i);
    if (wrong >= 0)
      return fail(
        `frame ${wrong} of episode ${e} has index ${frames[wrong]!.index} and frame_index ${frames[wrong]!.frame_index}, not ${from + wrong} and ${wrong}`,
      );
  }
  for (const frame of served) {
    const e = frame.episode_index as number;
    if (!requested.includes(e))
      return fail(`frame ${frame.index} of episode ${e} is served, but episode ${e} is not in the dataset`);
    const row = meta[e];
    if (!row || row.episode_index !== e) return fail(`meta.episodes[${e}] is not episode ${e}`);
    const index = frame.index as number;
    if (index < (row.dataset_from_index as number) || index >= (row.dataset_to_index as number))
      return fail(`frame index ${index} is outside episode ${e}'s dataset_from_index..dataset_to_index`);
    if ((frame.task_index as number) >= taskCount)
      return fail(`task_index ${frame.task_index} is past the end of tasks.parquet (iloc)`);
    for (const key of videoKeys) {
      const at = (row[`videos/${key}/from_timestamp`] as number) + (frame.timestamp as number);
      if (at > (row[`videos/${key}/to_timestamp`] as number) + 1e-4)
        return fail(`frame ${frame.frame_index} of episode ${e} is past the episode's video range`);
      const p = formatPathTemplate(info.video_path!, {
        video_key: key,
        chunk_index: row[`videos/${key}/chunk_index`] as number,
        file_index: row[`videos/${key}/file_index`] as number,
      });
      if (at >= (await secondsOf(p)) - 1e-6)
        return fail(`frame ${frame.frame_index} of episode ${e} would be decoded at ${at} s, past the end of ${p}`);
    }
  }
  return { ok: true, frames: served.length };
}

async function frameRows(root: string, files: string[]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const file of files) {
    const parquet = await openParquet(path.join(root, file));
    const columns = parquet.columns.filter(
      (c) =>
        !c.startsWith("stats/") &&
        !["observation.state", "action", "language_persistent", "language_events"].includes(c),
    );
    for await (const { rows } of parquetBatches(parquet, columns))
      for (const row of rows) out.push(plainValue(row) as Record<string, unknown>);
  }
  return out;
}

async function walkFiles(root: string, relative: string): Promise<string[]> {
  const entries = await readdir(path.join(root, relative), { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const entry of entries) {
    const child = `${relative}/${entry.name}`;
    if (entry.isDirectory()) out.push(...(await walkFiles(root, child)));
    else if (entry.isFile()) out.push(child);
  }
  return out;
}

/**
 * A fixture laid out as `huggingface_hub.snapshot_download` leaves it in the hub cache:
 * `<base>/hub/datasets--lerobot--fixture/snapshots/<revision>/<path>` is a relative symbolic link
 * to `.../blobs/<sha256 of the file>`, the repository's .gitattributes among them. `root` is the
 * snapshot directory, `linked` every file's path in it.
 */
export async function buildHuggingFaceSnapshot(
  base: string,
  options: LeRobotFixtureOptions,
): Promise<LeRobotFixture & { repo: string; linked: string[] }> {
  const repo = path.join(base, "hub", "datasets--lerobot--fixture");
  const root = path.join(repo, "snapshots", "0123456789abcdef0123456789abcdef01234567");
  await mkdir(root, { recursive: true });
  const fixture = await buildLeRobotFixture(root, {
    ...options,
    extraFiles: {
      "README.md": "# fixture\n",
      ".gitattributes": "*.parquet filter=lfs diff=lfs merge=lfs -text\n",
      ...options.extraFiles,
    },
  });
  await mkdir(path.join(repo, "blobs"));
  const linked = await walkFiles(root, "").then((files) => files.map((f) => f.replace(/^\//, "")));
  for (const relative of linked) {
    const file = path.join(root, relative);
    const blob = path.join(
      repo,
      "blobs",
      createHash("sha256")
        .update(await readFile(file))
        .digest("hex"),
    );
    await rename(file, blob);
    await symlink(path.relative(path.dirname(file), blob), file);
  }
  return { ...fixture, repo, linked: linked.sort() };
}

/**
 * Rewrites a parquet file's footer as a hostile dataset can: its first row group and the file
 * declare `rows` rows, and with `values` every column chunk of that group as many values too,
 * while the pages stay as they were.
 */
export function forgeParquetRowCount(file: string, rows: bigint, options: { values?: boolean } = {}): void {
  const bytes = readFileSync(file);
  const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const footer = bytes.readUInt32LE(bytes.length - 8);
  const body = bytes.subarray(0, bytes.length - 8 - footer);
  const group = metadata.row_groups[0]!;
  metadata.num_rows += rows - group.num_rows;
  group.num_rows = rows;
  if (options.values) for (const chunk of group.columns) if (chunk.meta_data) chunk.meta_data.num_values = rows;
  const writer = new ByteWriter();
  writeMetadata(writer, metadata);
  const forged = Buffer.from(writer.getBuffer());
  const length = Buffer.alloc(4);
  length.writeUInt32LE(forged.length);
  writeFileSync(file, Buffer.concat([body, forged, length, Buffer.from("PAR1")]));
}

/**
 * The `pandas` key pyarrow writes for a DataFrame, which pandas (and so LeRobot's loader) reads back
 * to restore the index: every column named with its pandas and numpy types, as pyarrow writes them.
 * Each column is [name, pandas_type, numpy_type, field_name (when it differs from the name)].
 */
function pandasMetadata(indexColumns: string[], columns: [string | null, string, string, string?][]): string {
  return JSON.stringify({
    index_columns: indexColumns,
    column_indexes: [
      { name: null, field_name: null, pandas_type: "unicode", numpy_type: "object", metadata: { encoding: "UTF-8" } },
    ],
    columns: columns.map(([name, pandasType, numpyType, fieldName]) => ({
      name,
      field_name: fieldName ?? name,
      pandas_type: pandasType,
      numpy_type: numpyType,
      metadata: null,
    })),
    creator: { library: "pyarrow", version: "18.1.0" },
    pandas_version: "2.2.3",
  });
}
