// Writes a synthetic LeRobot dataset for `npm run bench:import`, in a process of its own so that
// the importing process's peak memory is the import's alone.
//
//   tsx scripts/bench/generate-lerobot.ts <dir> v3.0 <episodes>           metadata at scale, small files
//   tsx scripts/bench/generate-lerobot.ts <dir> v2.1 <episodes> <bytes>   files of real (random) bytes
//
// The metadata is what LeRobot writes (info.json, tasks, episodes with their files and ranges);
// the data and video files are placeholders of the given size: the importer reads their bytes
// (size, sha256, upload) but not their content.
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { SchemaElement } from "hyparquet";
import { parquetWriteFile } from "hyparquet-writer";
import { formatPathTemplate, v3EpisodesPath } from "@/lib/lerobot/format";

const [dir, version, episodesText, bytesText] = process.argv.slice(2);
if (!dir || (version !== "v3.0" && version !== "v2.1") || !episodesText) {
  process.stderr.write("usage: generate-lerobot.ts <dir> v3.0|v2.1 <episodes> [file bytes]\n");
  process.exit(2);
}
const EPISODES = Number(episodesText);
const FILE_BYTES = Number(bytesText ?? 64);
const FPS = 30;
const CAMERA = "observation.images.front";
const TASKS = ["Pick up the cube and place it in the bowl.", "Open the drawer, then close it again."];
const PER_FILE = 1000; // v3.0: episodes per data/video file and per meta/episodes file
const CHUNKS_SIZE = 1000;
const lengthOf = (e: number) => 150 + (e % 7) * 10;
const outcomeOf = (e: number) => (e % 5 === 0 ? "failure" : "success");

const write = (relative: string, content: string | Buffer) => {
  const file = path.join(dir, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
};
const placeholder = (seed: number) =>
  FILE_BYTES <= 64 ? Buffer.from(`placeholder ${seed}\n`.padEnd(FILE_BYTES, ".")) : randomBytes(FILE_BYTES);

let totalFrames = 0;
for (let e = 0; e < EPISODES; e++) totalFrames += lengthOf(e);
const videoFeature = {
  dtype: "video",
  shape: [480, 640, 3],
  names: ["height", "width", "channels"],
  info: {
    "video.height": 480,
    "video.width": 640,
    "video.codec": "av1",
    "video.pix_fmt": "yuv420p",
    "video.fps": FPS,
    "video.channels": 3,
    has_audio: false,
  },
};
const features = {
  action: { dtype: "float32", shape: [6], names: null },
  "observation.state": { dtype: "float32", shape: [6], names: null },
  [CAMERA]: videoFeature,
  timestamp: { dtype: "float32", shape: [1], names: null },
  frame_index: { dtype: "int64", shape: [1], names: null },
  episode_index: { dtype: "int64", shape: [1], names: null },
  index: { dtype: "int64", shape: [1], names: null },
  task_index: { dtype: "int64", shape: [1], names: null },
};

if (version === "v3.0") {
  const dataPath = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
  const videoPath = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4";
  const opt = (name: string, type: "INT64" | "DOUBLE"): SchemaElement => ({ name, type, repetition_type: "OPTIONAL" });
  const str = (name: string): SchemaElement => ({
    name,
    type: "BYTE_ARRAY",
    converted_type: "UTF8",
    repetition_type: "OPTIONAL",
  });
  const schema: SchemaElement[] = [
    { name: "schema", num_children: 14 },
    opt("episode_index", "INT64"),
    { name: "tasks", repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
    { name: "list", repetition_type: "REPEATED", num_children: 1 },
    str("element"),
    opt("length", "INT64"),
    opt("data/chunk_index", "INT64"),
    opt("data/file_index", "INT64"),
    opt("dataset_from_index", "INT64"),
    opt("dataset_to_index", "INT64"),
    opt(`videos/${CAMERA}/chunk_index`, "INT64"),
    opt(`videos/${CAMERA}/file_index`, "INT64"),
    opt(`videos/${CAMERA}/from_timestamp`, "DOUBLE"),
    opt(`videos/${CAMERA}/to_timestamp`, "DOUBLE"),
    str("outcome"),
    str("environment"),
    str("contributor"),
  ];
  let from = 0;
  for (let m = 0; m * PER_FILE < EPISODES; m++) {
    const rows = Array.from({ length: Math.min(PER_FILE, EPISODES - m * PER_FILE) }, (_, i) => m * PER_FILE + i);
    const where = { chunk_index: Math.floor(m / CHUNKS_SIZE), file_index: m % CHUNKS_SIZE };
    write(formatPathTemplate(dataPath, where), placeholder(m));
    write(formatPathTemplate(videoPath, { ...where, video_key: CAMERA }), placeholder(-m - 1));
    const froms: number[] = [];
    const seconds: number[] = [];
    let t = 0;
    for (const e of rows) {
      froms.push(from);
      from += lengthOf(e);
      seconds.push(t);
      t += lengthOf(e) / FPS;
    }
    const column = (name: string, data: unknown[]) => ({ name, data });
    const target = path.join(dir, v3EpisodesPath(0, m));
    mkdirSync(path.dirname(target), { recursive: true });
    parquetWriteFile({
      filename: target,
      schema,
      columnData: [
        column("episode_index", rows.map(BigInt)),
        column(
          "tasks",
          rows.map((e) => [TASKS[e % TASKS.length]!]),
        ),
        column(
          "length",
          rows.map((e) => BigInt(lengthOf(e))),
        ),
        column(
          "data/chunk_index",
          rows.map(() => BigInt(where.chunk_index)),
        ),
        column(
          "data/file_index",
          rows.map(() => BigInt(where.file_index)),
        ),
        column("dataset_from_index", froms.map(BigInt)),
        column(
          "dataset_to_index",
          rows.map((e, i) => BigInt(froms[i]! + lengthOf(e))),
        ),
        column(
          `videos/${CAMERA}/chunk_index`,
          rows.map(() => BigInt(where.chunk_index)),
        ),
        column(
          `videos/${CAMERA}/file_index`,
          rows.map(() => BigInt(where.file_index)),
        ),
        column(`videos/${CAMERA}/from_timestamp`, seconds),
        column(
          `videos/${CAMERA}/to_timestamp`,
          rows.map((e, i) => seconds[i]! + lengthOf(e) / FPS),
        ),
        column("outcome", rows.map(outcomeOf)),
        column(
          "environment",
          rows.map((e) => `kitchen-${e % 3}`),
        ),
        column(
          "contributor",
          rows.map((e) => `op-${e % 17}`),
        ),
      ],
    });
  }
  parquetWriteFile({
    filename: path.join(dir, "meta/tasks.parquet"),
    columnData: [
      { name: "task_index", data: TASKS.map((_, i) => BigInt(i)), type: "INT64", nullable: true },
      { name: "task", data: TASKS, type: "STRING", nullable: true },
    ],
    kvMetadata: [
      {
        key: "pandas",
        value: JSON.stringify({
          index_columns: ["task"],
          column_indexes: [],
          columns: [{ name: "task_index" }, { name: "task" }],
        }),
      },
    ],
  });
  write(
    "meta/info.json",
    JSON.stringify(
      {
        codebase_version: "v3.0",
        robot_type: "so100",
        total_episodes: EPISODES,
        total_frames: totalFrames,
        total_tasks: TASKS.length,
        chunks_size: CHUNKS_SIZE,
        data_files_size_in_mb: 100,
        video_files_size_in_mb: 500,
        fps: FPS,
        splits: { train: `0:${EPISODES}` },
        data_path: dataPath,
        video_path: videoPath,
        features,
      },
      null,
      4,
    ),
  );
} else {
  const dataPath = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet";
  const videoPath = "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4";
  const episodes: string[] = [];
  const stats: string[] = [];
  for (let e = 0; e < EPISODES; e++) {
    const values = { episode_chunk: Math.floor(e / CHUNKS_SIZE), episode_index: e };
    write(formatPathTemplate(dataPath, values), placeholder(e));
    write(formatPathTemplate(videoPath, { ...values, video_key: CAMERA }), placeholder(-e - 1));
    episodes.push(
      JSON.stringify({
        episode_index: e,
        tasks: [TASKS[e % TASKS.length]],
        length: lengthOf(e),
        outcome: outcomeOf(e),
      }),
    );
    stats.push(
      JSON.stringify({
        episode_index: e,
        stats: { "observation.state": { min: [0], max: [1], mean: [0.5], std: [0.1], count: [lengthOf(e)] } },
      }),
    );
  }
  write("meta/episodes.jsonl", `${episodes.join("\n")}\n`);
  write("meta/episodes_stats.jsonl", `${stats.join("\n")}\n`);
  write("meta/tasks.jsonl", `${TASKS.map((task, i) => JSON.stringify({ task_index: i, task })).join("\n")}\n`);
  write(
    "meta/info.json",
    JSON.stringify(
      {
        codebase_version: "v2.1",
        robot_type: "so100",
        total_episodes: EPISODES,
        total_frames: totalFrames,
        total_tasks: TASKS.length,
        total_videos: EPISODES,
        total_chunks: Math.ceil(EPISODES / CHUNKS_SIZE),
        chunks_size: CHUNKS_SIZE,
        fps: FPS,
        splits: { train: `0:${EPISODES}` },
        data_path: dataPath,
        video_path: videoPath,
        features,
      },
      null,
      4,
    ),
  );
}
write(
  "meta/stats.json",
  JSON.stringify({ "observation.state": { min: [0], max: [1], mean: [0.5], std: [0.1], count: [totalFrames] } }),
);
write("README.md", `# Synthetic LeRobot ${version} dataset of ${EPISODES} episodes for the import benchmark\n`);
