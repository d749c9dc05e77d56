/**
 * Rewrites a LeRobot dataset's `meta/` for a subset of its episodes, for `das pull`: the data and
 * video files stay byte-identical to what was delivered (they are checked against the manifest's
 * sha256 and are what the disclosure log records), so only the metadata changes.
 *
 *   const result = await writeSubsetMeta({ sourceRoot, targetRoot, episodes: [0, 1, 5] });
 *
 * `sourceRoot` holds the version's original `meta/`; `targetRoot/meta/` receives the subset's
 * (the same directory is fine). What is rewritten, and why, is in docs/lerobot.md:
 *
 * - info.json: total_episodes, total_frames, total_tasks, splits (and total_videos / total_chunks
 *   where the version has them); everything else as it was.
 * - v2.x: the selected lines of episodes.jsonl and episodes_stats.jsonl, verbatim; the tasks those
 *   episodes use; stats.json aggregated from the selected episodes' stats (v2.1) as LeRobot's own
 *   metadata does, or unchanged (v2.0, which has no per-episode stats).
 * - v3.0: each meta/episodes file with the selected rows only, same columns and types; tasks.parquet
 *   unchanged (LeRobot looks tasks up by position); stats.json aggregated from the selected rows.
 * - subtasks.parquet, where present, unchanged (labels are looked up by position too).
 *
 * Episode indices are never renumbered, because they are stored in the delivered data files.
 * `result.loader` says how LeRobot can open the result: see docs/lerobot.md for why a v3.0 subset
 * loads only when it is episodes 0..k-1.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  INFO_PATH,
  Info,
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
  isV3,
  plainValue,
  splitsFor,
  statsFromColumns,
  videoKeysOf,
  videoTemplateOf,
  type CodebaseVersion,
  type StatsTree,
} from "./format";
import { openParquet, parquetBatches, writeParquet } from "./parquet";

export type SubsetResult = {
  codebaseVersion: CodebaseVersion;
  /** The subset's episode indices, ascending. */
  episodes: number[];
  totalFrames: number;
  totalTasks: number;
  /** Files written under targetRoot. */
  written: string[];
  /** Stale v3 episode files removed from targetRoot (LeRobot reads every file in meta/episodes/). */
  removed: string[];
  /** Files in the source meta/ that were not carried over (LeRobot's loader does not read them). */
  leftOut: string[];
  /** The data and video files the written metadata points at. */
  referencedFiles: string[];
  loader: {
    /** `LeRobotDataset(repo_id, root=D)` opens the directory. */
    loadsAsIs: boolean;
    /** It opens when given the episode list: `LeRobotDataset(repo_id, root=D, episodes=[...])`. */
    loadsWithEpisodeList: boolean;
    note: string | null;
  };
};

/** The source metadata cannot describe the requested subset; nothing was written. */
export class SubsetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SubsetError";
  }
}

export async function writeSubsetMeta(options: { sourceRoot: string; targetRoot: string; episodes: Iterable<number> }): Promise<SubsetResult> {
  const { sourceRoot, targetRoot } = options;
  const selected = [...new Set(options.episodes)].sort((a, b) => a - b);
  const bad = selected.find((e) => !Number.isSafeInteger(e) || e < 0);
  if (bad !== undefined) throw new SubsetError(`episode indices are whole numbers from 0; got ${bad}`);
  if (!selected.length) throw new SubsetError("a subset needs at least one episode");

  const infoText = await readSource(sourceRoot, INFO_PATH);
  let json: unknown;
  try {
    json = JSON.parse(infoText);
  } catch (error) {
    throw new SubsetError(`${INFO_PATH}: invalid JSON (${(error as Error).message})`);
  }
  const parsed = Info.safeParse(json);
  if (!parsed.success) throw new SubsetError(`${INFO_PATH}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(document)"}: ${i.message}`).join("; ")}`);
  // Write back the document as it was, with only the totals changed (unknown keys included).
  const info = json as Record<string, unknown>;

  const plan = isV3(parsed.data.codebase_version) ? await planV3(sourceRoot, parsed.data, selected) : await planV2(sourceRoot, parsed.data, selected);

  info.total_episodes = selected.length;
  info.total_frames = plan.totalFrames;
  info.total_tasks = plan.totalTasks;
  info.splits = splitsFor(parsed.data.splits, selected);
  if ("total_videos" in info) info.total_videos = plan.videoFiles.length;
  if ("total_chunks" in info) info.total_chunks = plan.maxChunk + 1;

  // Subtask labels, like v3 tasks, are looked up by position (subtasks.iloc[subtask_index]): kept whole.
  const subtasks = await readFile(path.join(sourceRoot, SUBTASKS_PATH)).catch(() => undefined);
  if (subtasks && path.resolve(sourceRoot) !== path.resolve(targetRoot)) plan.writes.push([SUBTASKS_PATH, (target) => writeAtomically(target, subtasks)]);

  const written: string[] = [];
  for (const [relative, write] of plan.writes) {
    await write(path.join(targetRoot, relative));
    written.push(relative);
  }
  // info.json last: a directory with the subset's info.json has all of the subset's metadata.
  await writeAtomically(path.join(targetRoot, INFO_PATH), JSON.stringify(info, null, 4));
  written.push(INFO_PATH);

  const removed: string[] = [];
  if (isV3(parsed.data.codebase_version)) {
    for (const relative of await parquetFilesUnder(targetRoot, V3_EPISODES_DIR)) {
      if (written.includes(relative)) continue;
      await rm(path.join(targetRoot, relative), { force: true });
      removed.push(relative);
    }
  }
  const handled = new Set([INFO_PATH, STATS_PATH, V2_EPISODES_PATH, V2_TASKS_PATH, V2_EPISODES_STATS_PATH, V3_TASKS_PATH, SUBTASKS_PATH]);
  const leftOut = (await filesUnder(sourceRoot, "meta")).filter((relative) => !handled.has(relative) && !relative.startsWith(`${V3_EPISODES_DIR}/`));

  const prefix = selected.every((e, i) => e === i);
  const v3 = isV3(parsed.data.codebase_version);
  return {
    codebaseVersion: parsed.data.codebase_version,
    episodes: selected,
    totalFrames: plan.totalFrames,
    totalTasks: plan.totalTasks,
    written,
    removed,
    leftOut,
    referencedFiles: [...plan.dataFiles, ...plan.videoFiles].sort(),
    loader: {
      loadsAsIs: prefix,
      loadsWithEpisodeList: prefix || !v3,
      note: prefix
        ? null
        : v3
          ? "LeRobot looks v3.0 episodes up by position (meta.episodes[episode_index]), so a subset other than episodes 0..k-1 needs its episode indices renumbered in the data files, which would change the delivered files"
          : "LeRobot expects episodes 0..total_episodes-1 unless it is given the list: LeRobotDataset(repo_id, root=D, episodes=[...])",
    },
  };
}

type Plan = {
  totalFrames: number;
  totalTasks: number;
  dataFiles: string[];
  videoFiles: string[];
  maxChunk: number;
  writes: [string, (target: string) => Promise<void>][];
};

async function planV2(root: string, info: Info, selected: number[]): Promise<Plan> {
  const wanted = new Set(selected);
  const episodeLines = await selectLines(root, V2_EPISODES_PATH, wanted);
  const missing = selected.filter((e) => !episodeLines.found.has(e));
  if (missing.length) throw new SubsetError(`${V2_EPISODES_PATH} has no episode ${missing.slice(0, 20).join(", ")}`);
  const usedTasks = new Set<string>();
  let totalFrames = 0;
  for (const record of episodeLines.records) {
    for (const task of record.tasks as string[]) usedTasks.add(task);
    totalFrames += record.length as number;
  }
  // LeRobot 0.3 keeps tasks in a dict by task_index, so the subset needs only the tasks it uses.
  const taskLines = await keepLines(root, V2_TASKS_PATH, (record) => usedTasks.has(record.task as string));

  const writes: Plan["writes"] = [
    [V2_EPISODES_PATH, (target) => writeAtomically(target, episodeLines.lines.join("\n") + "\n")],
    [V2_TASKS_PATH, (target) => writeAtomically(target, taskLines.join("\n") + "\n")],
  ];
  if (info.codebase_version === "v2.1") {
    // LeRobot 0.3 derives a v2.1 dataset's stats from episodes_stats.jsonl; stats.json follows suit.
    const statsLines = await selectLines(root, V2_EPISODES_STATS_PATH, wanted);
    const noStats = selected.filter((e) => !statsLines.found.has(e));
    if (noStats.length) throw new SubsetError(`${V2_EPISODES_STATS_PATH} has no stats for episode ${noStats.slice(0, 20).join(", ")}`);
    const stats = aggregateStats(statsLines.records.map((r) => r.stats as StatsTree));
    writes.push([V2_EPISODES_STATS_PATH, (target) => writeAtomically(target, statsLines.lines.join("\n") + "\n")]);
    writes.push([STATS_PATH, (target) => writeAtomically(target, JSON.stringify(stats, null, 4))]);
  } else {
    // v2.0 has no per-episode stats to aggregate; LeRobot reads stats.json as it is.
    const stats = await readSource(root, STATS_PATH).catch(() => undefined);
    if (stats !== undefined) writes.push([STATS_PATH, (target) => writeAtomically(target, stats)]);
  }

  const chunksSize = chunksSizeOf(info);
  const template = videoTemplateOf(info);
  const videoKeys = template ? videoKeysOf(info) : [];
  const dataFiles: string[] = [];
  const videoFiles: string[] = [];
  for (const episode of selected) {
    const values = { episode_chunk: Math.floor(episode / chunksSize), episode_index: episode };
    dataFiles.push(formatPathTemplate(info.data_path, values));
    for (const key of videoKeys) videoFiles.push(formatPathTemplate(template!, { ...values, video_key: key }));
  }
  return { totalFrames, totalTasks: taskLines.length, dataFiles, videoFiles, maxChunk: Math.floor(selected.at(-1)! / chunksSize), writes };
}

async function planV3(root: string, info: Info, selected: number[]): Promise<Plan> {
  const wanted = new Set(selected);
  const found = new Set<number>();
  const writes: Plan["writes"] = [];
  const stats: StatsTree[] = [];
  const dataFiles = new Set<string>();
  const videoFiles = new Set<string>();
  let totalFrames = 0;
  let maxChunk = 0;
  const template = videoTemplateOf(info);
  const videoKeys = template ? videoKeysOf(info) : [];
  const episodeFiles = await parquetFilesUnder(root, V3_EPISODES_DIR);
  if (!episodeFiles.length) throw new SubsetError(`no episode metadata under ${V3_EPISODES_DIR}`);
  for (const relative of episodeFiles) {
    const parquet = await openParquet(path.join(root, relative));
    const kept: Record<string, unknown>[] = [];
    for await (const { rows } of parquetBatches(parquet)) {
      for (const row of rows) {
        const episode = Number(row.episode_index);
        if (!wanted.has(episode)) continue;
        if (found.has(episode)) throw new SubsetError(`${relative}: episode ${episode} appears twice in the episode metadata`);
        found.add(episode);
        kept.push(row);
        const plain = plainValue(row) as Record<string, number>;
        totalFrames += plain.length!;
        stats.push(statsFromColumns(row));
        dataFiles.add(formatPathTemplate(info.data_path, { chunk_index: plain["data/chunk_index"]!, file_index: plain["data/file_index"]! }));
        maxChunk = Math.max(maxChunk, plain["data/chunk_index"]!);
        for (const key of videoKeys) {
          videoFiles.add(formatPathTemplate(template!, { video_key: key, chunk_index: plain[`videos/${key}/chunk_index`]!, file_index: plain[`videos/${key}/file_index`]! }));
        }
      }
    }
    // Same path, same schema and key/value metadata (pyarrow's ARROW:schema, HF's features): only rows change.
    if (kept.length) writes.push([relative, (target) => mkdir(path.dirname(target), { recursive: true }).then(() => writeParquet(target, kept, parquet.metadata.schema, parquet.metadata.key_value_metadata))]);
  }
  const missing = selected.filter((e) => !found.has(e));
  if (missing.length) throw new SubsetError(`${V3_EPISODES_DIR} has no episode ${missing.slice(0, 20).join(", ")}`);

  // Tasks stay whole: LeRobot reads a frame's task as tasks.iloc[task_index], by position.
  const tasks = await readFile(path.join(root, V3_TASKS_PATH)).catch(() => {
    throw new SubsetError(`${V3_TASKS_PATH} is missing`);
  });
  const totalTasks = Number((await openParquet(path.join(root, V3_TASKS_PATH))).metadata.num_rows);
  writes.push([V3_TASKS_PATH, (target) => (path.resolve(target) === path.resolve(root, V3_TASKS_PATH) ? Promise.resolve() : writeAtomically(target, tasks))]);

  if (stats.some((s) => Object.keys(s).length)) {
    const aggregated = aggregateStats(stats);
    writes.push([STATS_PATH, (target) => writeAtomically(target, JSON.stringify(aggregated, null, 4))]);
  } else {
    const original = await readSource(root, STATS_PATH).catch(() => undefined);
    if (original !== undefined) writes.push([STATS_PATH, (target) => writeAtomically(target, original)]);
  }
  return { totalFrames, totalTasks, dataFiles: [...dataFiles], videoFiles: [...videoFiles], maxChunk, writes };
}

/** The lines of a jsonl file whose episode_index is wanted, verbatim, with their parsed records. */
async function selectLines(root: string, relative: string, wanted: Set<number>) {
  const lines: string[] = [];
  const records: Record<string, unknown>[] = [];
  const found = new Set<number>();
  for (const [number, line] of (await readSource(root, relative)).split(/\r?\n/).entries()) {
    if (!line.trim()) continue;
    const record = parseLine(relative, number + 1, line);
    const episode = record.episode_index;
    if (typeof episode !== "number" || !wanted.has(episode)) continue;
    if (found.has(episode)) throw new SubsetError(`${relative}:${number + 1}: episode ${episode} appears twice`);
    found.add(episode);
    lines.push(line);
    records.push(record);
  }
  return { lines, records, found };
}

async function keepLines(root: string, relative: string, keep: (record: Record<string, unknown>) => boolean): Promise<string[]> {
  return (await readSource(root, relative))
    .split(/\r?\n/)
    .map((line, i) => [line, i + 1] as const)
    .filter(([line, number]) => line.trim() && keep(parseLine(relative, number, line)))
    .map(([line]) => line);
}

function parseLine(relative: string, number: number, line: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(line);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new SubsetError(`${relative}:${number}: not a JSON object`);
}

async function readSource(root: string, relative: string): Promise<string> {
  try {
    return await readFile(path.join(root, relative), "utf8");
  } catch (error) {
    throw new SubsetError(`${relative}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "file is missing" : (error as Error).message}`);
  }
}

async function writeAtomically(target: string, content: string | Buffer): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const temporary = `${target}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, content);
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** `<dir>/*\/*.parquet` relative to root, in name order: the files LeRobot's loader globs. */
async function parquetFilesUnder(root: string, dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const chunk of await readdir(path.join(root, dir), { withFileTypes: true }).catch(() => [])) {
    if (!chunk.isDirectory()) continue;
    for (const file of await readdir(path.join(root, dir, chunk.name), { withFileTypes: true })) {
      if (file.isFile() && file.name.endsWith(".parquet")) out.push(`${dir}/${chunk.name}/${file.name}`);
    }
  }
  return out.sort();
}

async function filesUnder(root: string, dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(root, dir), { withFileTypes: true }).catch(() => [])) {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...(await filesUnder(root, relative)));
    else if (entry.isFile()) out.push(relative);
  }
  return out.sort();
}
