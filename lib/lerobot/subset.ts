/**
 * Rewrites a LeRobot dataset's `meta/` for a subset of its episodes, for `das pull`. The video
 * files are never touched; the data files neither, unless the subset is renumbered (below).
 *
 *   const result = await writeSubsetMeta({ sourceRoot, targetRoot, episodes: [0, 1, 5] });
 *
 * `sourceRoot` holds the version's original `meta/` (and, to renumber, its data files); `targetRoot`
 * receives the subset's `meta/` (the same directory is fine unless renumbering). What is rewritten,
 * and why, is in docs/lerobot.md:
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
 * LeRobot looks v3.0 episodes up by position, so a v3.0 subset other than episodes 0..k-1 opens
 * only renumbered. With `renumber`, such a subset's episodes become 0..k-1 (in ascending original
 * index) the way LeRobot's dataset_tools.py does it: the data files are written again under
 * targetRoot with `episode_index` and `index` renumbered and everything else as it was, and the
 * episode rows get the new indices and frame ranges. Without it (and for v2.x, whose loader takes
 * an episode list) episode indices are kept. `result.loader` says how LeRobot can open the result.
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
import { openParquet, parquetBatches, rewriteParquet, writeParquet, type ParquetFile } from "./parquet";

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
  /** The subset renumbered 0..k-1 (v3.0 with `renumber`, when it was not 0..k-1 already), or null. */
  renumbering: Renumbering | null;
  loader: {
    /** `LeRobotDataset(repo_id, root=D)` opens the directory. */
    loadsAsIs: boolean;
    /** It opens when given the episode list: `LeRobotDataset(repo_id, root=D, episodes=[...])`. */
    loadsWithEpisodeList: boolean;
    note: string | null;
  };
};

/** The columns of a data file that renumbering changes; every other column stays as it was. */
export const RENUMBERED_COLUMNS = ["episode_index", "index"] as const;

/** One episode of a renumbered subset: its index and frame range (LeRobot's global `index`) before and after. */
export type RenumberedEpisode = {
  originalEpisodeIndex: number;
  episodeIndex: number;
  originalFrom: number;
  originalTo: number;
  from: number;
  to: number;
};

export type Renumbering = {
  /** Ascending, original and new alike. */
  episodes: RenumberedEpisode[];
  /** The data files written under targetRoot with RENUMBERED_COLUMNS changed (`written: false`: the target already held them, see `unchanged`). */
  dataFiles: { path: string; rows: number; written: boolean }[];
};

export type SubsetOptions = {
  sourceRoot: string;
  targetRoot: string;
  episodes: Iterable<number>;
  /**
   * v3.0: renumber a subset that is not episodes 0..k-1 (see the module comment). The original data
   * files are read from sourceRoot, so targetRoot must be another directory. `unchanged` may say
   * that the target already holds a data file renumbered for this same subset (a resumed pull that
   * checked its checksum), which is then not written again.
   */
  renumber?: boolean | { unchanged?: (relative: string) => Promise<boolean> };
};

/** Whether LeRobot needs a subset of these episodes renumbered to open it without an episode list. */
export const needsRenumbering = (codebaseVersion: CodebaseVersion, episodes: number[]): boolean => isV3(codebaseVersion) && !isPrefix(episodes);

/** Episodes 0..k-1, in any order. */
function isPrefix(episodes: number[]): boolean {
  const distinct = new Set(episodes);
  return distinct.size === episodes.length && episodes.every((e) => e < episodes.length);
}

/** The source metadata cannot describe the requested subset; nothing was written. */
export class SubsetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SubsetError";
  }
}

export async function writeSubsetMeta(options: SubsetOptions): Promise<SubsetResult> {
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

  const v3 = isV3(parsed.data.codebase_version);
  const renumber = options.renumber ? needsRenumbering(parsed.data.codebase_version, selected) : false;
  if (options.renumber && !v3) throw new SubsetError(`renumbering is for LeRobot v3.0; a ${parsed.data.codebase_version} subset opens with its episode list`);
  if (renumber && path.resolve(sourceRoot) === path.resolve(targetRoot)) throw new SubsetError("renumbering reads the original data files from sourceRoot, so targetRoot must be another directory");
  const unchanged = typeof options.renumber === "object" ? options.renumber.unchanged : undefined;
  const plan = v3 ? await planV3(sourceRoot, parsed.data, selected, renumber) : await planV2(sourceRoot, parsed.data, selected);

  info.total_episodes = selected.length;
  info.total_frames = plan.totalFrames;
  info.total_tasks = plan.totalTasks;
  const renumbered = plan.renumbering ? new Map(plan.renumbering.episodes.map((e) => [e.originalEpisodeIndex, e.episodeIndex])) : null;
  info.splits = splitsFor(parsed.data.splits, selected, renumbered ? (e) => renumbered.get(e)! : undefined);
  if ("total_videos" in info) info.total_videos = plan.videoFiles.length;
  if ("total_chunks" in info) info.total_chunks = plan.maxChunk + 1;

  // Subtask labels, like v3 tasks, are looked up by position (subtasks.iloc[subtask_index]): kept whole.
  const subtasks = await readFile(path.join(sourceRoot, SUBTASKS_PATH)).catch(() => undefined);
  if (subtasks && path.resolve(sourceRoot) !== path.resolve(targetRoot)) plan.writes.push([SUBTASKS_PATH, (target) => writeAtomically(target, subtasks)]);

  const written: string[] = [];
  // The data files first, all of them swapped in together, then the metadata that describes them.
  const dataFiles = plan.renumbering ? await renumberDataFiles(sourceRoot, targetRoot, plan.renumbering, unchanged) : [];
  written.push(...dataFiles.filter((f) => f.written).map((f) => f.path));
  for (const [relative, write] of plan.writes) {
    await write(path.join(targetRoot, relative));
    written.push(relative);
  }
  // info.json last: a directory with the subset's info.json has all of the subset's metadata.
  await writeAtomically(path.join(targetRoot, INFO_PATH), JSON.stringify(info, null, 4));
  written.push(INFO_PATH);

  const removed: string[] = [];
  if (v3) {
    for (const relative of await parquetFilesUnder(targetRoot, V3_EPISODES_DIR)) {
      if (written.includes(relative)) continue;
      await rm(path.join(targetRoot, relative), { force: true });
      removed.push(relative);
    }
  }
  const handled = new Set([INFO_PATH, STATS_PATH, V2_EPISODES_PATH, V2_TASKS_PATH, V2_EPISODES_STATS_PATH, V3_TASKS_PATH, SUBTASKS_PATH]);
  const leftOut = (await filesUnder(sourceRoot, "meta")).filter((relative) => !handled.has(relative) && !relative.startsWith(`${V3_EPISODES_DIR}/`));

  const opensAsIs = isPrefix(selected) || Boolean(plan.renumbering);
  return {
    codebaseVersion: parsed.data.codebase_version,
    episodes: selected,
    totalFrames: plan.totalFrames,
    totalTasks: plan.totalTasks,
    written,
    removed,
    leftOut,
    referencedFiles: [...plan.dataFiles, ...plan.videoFiles].sort(),
    renumbering: plan.renumbering ? { episodes: plan.renumbering.episodes, dataFiles } : null,
    loader: {
      loadsAsIs: opensAsIs,
      loadsWithEpisodeList: opensAsIs || !v3,
      note: opensAsIs
        ? null
        : v3
          ? "LeRobot looks v3.0 episodes up by position (meta.episodes[episode_index]), so a subset other than episodes 0..k-1 opens only with its episodes renumbered 0..k-1 in the data files and the episode metadata"
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
  /** v3.0 renumbered: the episodes and, for each data file (in the order LeRobot reads them), its episodes in file order. */
  renumbering?: RenumberPlan | null;
};

type RenumberPlan = { episodes: RenumberedEpisode[]; dataFiles: { path: string; episodes: (RenumberedEpisode & { length: number })[] }[] };

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

async function planV3(root: string, info: Info, selected: number[], renumber: boolean): Promise<Plan> {
  const wanted = new Set(selected);
  const found = new Set<number>();
  const writes: Plan["writes"] = [];
  // To renumber: where each selected episode's frames are, and which data files hold episodes left out.
  const located = new Map<number, { dataFile: string; from: number; to: number; length: number }>();
  const holdingOthers = new Map<string, number>();
  const keptByFile: [string, ParquetFile, Record<string, unknown>[]][] = [];
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
        if (!wanted.has(episode)) {
          if (renumber) holdingOthers.set(dataFileOf(info, row), episode);
          continue;
        }
        if (found.has(episode)) throw new SubsetError(`${relative}: episode ${episode} appears twice in the episode metadata`);
        found.add(episode);
        kept.push(row);
        const plain = plainValue(row) as Record<string, number>;
        totalFrames += plain.length!;
        stats.push(statsFromColumns(row));
        dataFiles.add(dataFileOf(info, row));
        if (renumber) {
          if (typeof plain.dataset_from_index !== "number" || typeof plain.dataset_to_index !== "number") throw new SubsetError(`${relative}: episode ${episode} has no dataset_from_index / dataset_to_index, which renumbering needs`);
          located.set(episode, { dataFile: dataFileOf(info, row), from: plain.dataset_from_index, to: plain.dataset_to_index, length: plain.length! });
        }
        maxChunk = Math.max(maxChunk, plain["data/chunk_index"]!);
        for (const key of videoKeys) {
          videoFiles.add(formatPathTemplate(template!, { video_key: key, chunk_index: plain[`videos/${key}/chunk_index`]!, file_index: plain[`videos/${key}/file_index`]! }));
        }
      }
    }
    if (kept.length) keptByFile.push([relative, parquet, kept]);
  }
  const missing = selected.filter((e) => !found.has(e));
  if (missing.length) throw new SubsetError(`${V3_EPISODES_DIR} has no episode ${missing.slice(0, 20).join(", ")}`);

  const renumbering = renumber ? planRenumbering(selected, located, holdingOthers) : null;
  const byOriginal = new Map(renumbering?.episodes.map((e) => [e.originalEpisodeIndex, e]));
  for (const [relative, parquet, kept] of keptByFile) {
    // The new index and frame range, in the type the column has (int64 arrives as bigint).
    const rows = renumbering
      ? kept.map((row) => {
          const e = byOriginal.get(Number(row.episode_index))!;
          return { ...row, episode_index: like(row.episode_index, e.episodeIndex), dataset_from_index: like(row.dataset_from_index, e.from), dataset_to_index: like(row.dataset_to_index, e.to) };
        })
      : kept;
    // Same path, same schema and key/value metadata (pyarrow's ARROW:schema, HF's features): only rows change.
    writes.push([relative, (target) => mkdir(path.dirname(target), { recursive: true }).then(() => writeParquet(target, rows, parquet.metadata.schema, parquet.metadata.key_value_metadata))]);
  }

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
  return { totalFrames, totalTasks, dataFiles: [...dataFiles], videoFiles: [...videoFiles], maxChunk, writes, renumbering };
}

const dataFileOf = (info: Info, row: Record<string, unknown>) => formatPathTemplate(info.data_path, { chunk_index: Number(row["data/chunk_index"]), file_index: Number(row["data/file_index"]) });

/** A number in the type of the value it replaces: bigint for an int64 column, number otherwise. */
const like = (original: unknown, value: number) => (typeof original === "bigint" ? BigInt(value) : value);

/**
 * Episodes 0..k-1 in ascending original index, and `index` 0..N-1 in the order LeRobot reads the
 * frames (data files in path order, each in its stored order, which is by `index`): with no
 * episode list LeRobot takes a frame's `index` for its row in that concatenation.
 */
function planRenumbering(selected: number[], located: Map<number, { dataFile: string; from: number; to: number; length: number }>, holdingOthers: Map<string, number>): RenumberPlan {
  const files = new Map<string, number[]>();
  for (const e of selected) {
    const { dataFile } = located.get(e)!;
    const other = holdingOthers.get(dataFile);
    // The data file would keep frames of an episode the subset does not list; das pull delivers whole files with every episode in them.
    if (other !== undefined) throw new SubsetError(`${dataFile} also holds episode ${other}, which is not in the subset: a renumbered subset takes every episode of its data files`);
    files.set(dataFile, [...(files.get(dataFile) ?? []), e]);
  }
  const newIndex = new Map(selected.map((e, i) => [e, i]));
  const dataFiles: RenumberPlan["dataFiles"] = [];
  let next = 0;
  for (const dataFile of [...files.keys()].sort(pathOrder)) {
    const episodes = files.get(dataFile)!.sort((a, b) => located.get(a)!.from - located.get(b)!.from);
    dataFiles.push({
      path: dataFile,
      episodes: episodes.map((e) => {
        const { from, to, length } = located.get(e)!;
        if (to - from !== length) throw new SubsetError(`episode ${e}: dataset_from_index..dataset_to_index (${from}..${to}) is not its length (${length})`);
        const renumbered = { originalEpisodeIndex: e, episodeIndex: newIndex.get(e)!, originalFrom: from, originalTo: to, from: next, to: next + length, length };
        next += length;
        return renumbered;
      }),
    });
  }
  const episodes = dataFiles.flatMap((f) => f.episodes.map(({ length: _, ...e }) => e)).sort((a, b) => a.episodeIndex - b.episodeIndex);
  return { episodes, dataFiles };
}

/**
 * Writes every data file of a renumbered subset beside its place under targetRoot, checking each
 * frame on the way, and renames them into place only once all are written: a refused subset
 * leaves the target's data files as they were.
 */
async function renumberDataFiles(sourceRoot: string, targetRoot: string, plan: RenumberPlan, unchanged?: (relative: string) => Promise<boolean>): Promise<Renumbering["dataFiles"]> {
  const done: Renumbering["dataFiles"] = [];
  const staged: [string, string][] = [];
  try {
    for (const { path: relative, episodes } of plan.dataFiles) {
      const rows = episodes.reduce((n, e) => n + e.length, 0);
      if (unchanged && (await unchanged(relative))) {
        done.push({ path: relative, rows, written: false });
        continue;
      }
      const target = path.join(targetRoot, relative);
      await mkdir(path.dirname(target), { recursive: true });
      const temporary = `${target}.${randomBytes(6).toString("hex")}.tmp`;
      staged.push([temporary, target]);
      await renumberDataFile(sourceRoot, relative, temporary, episodes);
      done.push({ path: relative, rows, written: true });
    }
  } catch (error) {
    await Promise.all(staged.map(([temporary]) => rm(temporary, { force: true })));
    throw error;
  }
  for (const [temporary, target] of staged) await rename(temporary, target);
  return done;
}

async function renumberDataFile(sourceRoot: string, relative: string, temporary: string, episodes: (RenumberedEpisode & { length: number })[]): Promise<void> {
  let parquet: ParquetFile;
  try {
    parquet = await openParquet(path.join(sourceRoot, relative));
  } catch (error) {
    throw new SubsetError(`${relative}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "file is missing" : (error as Error).message}`);
  }
  const lacking = RENUMBERED_COLUMNS.filter((c) => !parquet.columns.includes(c));
  if (lacking.length) throw new SubsetError(`${relative}: no ${lacking.join(", ")} column`);
  const byOriginal = new Map(episodes.map((e) => [e.originalEpisodeIndex, e]));
  const counts = new Map<number, number>();
  let expected = episodes[0]?.from ?? 0;
  await rewriteParquet(parquet, temporary, (rows) =>
    rows.map((row) => {
      const original = Number(row.episode_index);
      const e = byOriginal.get(original);
      if (!e) throw new SubsetError(`${relative}: holds frames of episode ${original}, which its episode metadata does not place there`);
      const index = Number(row.index);
      if (index < e.originalFrom || index >= e.originalTo) throw new SubsetError(`${relative}: frame index ${index} of episode ${original} is outside its dataset_from_index..dataset_to_index (${e.originalFrom}..${e.originalTo})`);
      const renumbered = e.from + (index - e.originalFrom);
      if (renumbered !== expected) throw new SubsetError(`${relative}: frame index ${index} of episode ${original} is not stored in index order`);
      expected++;
      counts.set(original, (counts.get(original) ?? 0) + 1);
      return { ...row, episode_index: like(row.episode_index, e.episodeIndex), index: like(row.index, renumbered) };
    }),
  );
  for (const e of episodes) {
    const n = counts.get(e.originalEpisodeIndex) ?? 0;
    if (n !== e.length) throw new SubsetError(`${relative}: episode ${e.originalEpisodeIndex} has ${n} frames, its metadata says ${e.length}`);
  }
}

/** Python's order of paths (`sorted(glob(...))`, which LeRobot's loader reads in): segment by segment, by code point. */
function pathOrder(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const order = Buffer.compare(Buffer.from(x[i]!), Buffer.from(y[i]!));
    if (order) return order;
  }
  return x.length - y.length;
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

/** Writes a file whole or not at all: into a temporary name beside it, then renamed over it. */
export async function writeAtomically(target: string, content: string | Buffer): Promise<void> {
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
