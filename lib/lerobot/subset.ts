/**
 * Rewrites a LeRobot dataset's `meta/` for a subset of its episodes, for `das pull`. The video
 * files are never touched; the data files neither, unless they are rewritten (below).
 *
 *   const result = await writeSubsetMeta({ sourceRoot, targetRoot, episodes: [0, 1, 5] });
 *
 * `sourceRoot` holds the version's original `meta/` (and, to rewrite them, its data files); `targetRoot`
 * receives the subset's `meta/` (the same directory is fine unless the data files are rewritten). What is rewritten,
 * and why, is in docs/lerobot.md:
 *
 * - info.json: total_episodes, total_frames, total_tasks, splits (and total_videos / total_chunks
 *   where the version has them); everything else as it was.
 * - v2.x: the selected lines of episodes.jsonl and episodes_stats.jsonl, verbatim; the tasks those
 *   episodes use; stats.json aggregated from the selected episodes' stats (v2.1) as LeRobot's own
 *   metadata does, or unchanged (v2.0, which has no per-episode stats).
 * - v3.0: each meta/episodes file with the selected rows only, same columns and types; tasks.parquet
 *   with every row (LeRobot looks tasks up by position), the text of a task no selected episode
 *   performs replaced by a placeholder; stats.json aggregated from the selected rows.
 * - subtasks.parquet, where present, unchanged (labels are looked up by position too).
 * - `videoKeys`: the cameras kept; the others leave info.json's features and stats.json, as
 *   LeRobot's own remove_feature does (which also keeps their columns in meta/episodes).
 *
 * LeRobot looks v3.0 episodes up by position, so a v3.0 subset other than episodes 0..k-1 opens
 * only renumbered; and its data files, which hold several episodes each, may hold episodes the
 * subset leaves out. With `rewriteData`, the data files' rewrite is planned the way LeRobot's
 * dataset_tools.py (delete_episodes) does it: the frames of episodes outside the subset dropped,
 * the episodes renumbered 0..k-1 (in ascending original index) where they are not already,
 * `episode_index` and `index` changed and everything else as it was; the episode rows get the new
 * indices and frame ranges, and `result.rewrite.layout` says what each data file becomes. The
 * service plans (lib/views/plan.ts); the client that fetched a data file writes it
 * (lib/lerobot/data-rows.ts), so no data file is read here. Without it (and for v2.x, whose
 * loader takes an episode list and whose files hold one episode each) the data files and indices
 * are kept. `result.loader` says how LeRobot can open the result.
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
import { showUnsafe } from "../characters";
import { pathInside, safePathProblem, UnsafePathError } from "../safe-path";
import { openParquet, parquetBatches, writeParquet, type ParquetFile } from "./parquet";
import { RENUMBERED_COLUMNS, type DataTransform } from "./data-rows";

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
  /** Video features (cameras) of the version left out of info.json and stats.json (`videoKeys`). */
  droppedVideoKeys: string[];
  /** v3.0 with `rewriteData`: the data files to write again, or null when none needs it. */
  rewrite: DataRewrite | null;
  /** Data files the metadata points at that were left as they are although they also hold frames of episodes outside the subset (no `rewriteData`). */
  sharedDataFiles: { path: string; otherEpisodes: number[] }[];
  loader: {
    /** `LeRobotDataset(repo_id, root=D)` opens the directory. */
    loadsAsIs: boolean;
    /** It opens when given the episode list: `LeRobotDataset(repo_id, root=D, episodes=[...])`. */
    loadsWithEpisodeList: boolean;
    note: string | null;
  };
};

/** The columns of a data file that renumbering changes; every other column stays as it was. */
export { RENUMBERED_COLUMNS };

/** One episode of a rewritten subset: its index and frame range (LeRobot's global `index`) before and after. */
export type RenumberedEpisode = {
  originalEpisodeIndex: number;
  episodeIndex: number;
  originalFrom: number;
  originalTo: number;
  from: number;
  to: number;
};

export type DataRewrite = {
  /** Ascending, original and new alike. */
  episodes: RenumberedEpisode[];
  /** Whether an episode's index or frame range changed, so that RENUMBERED_COLUMNS differ from the delivered files. */
  renumbered: boolean;
  /**
   * What each data file becomes, in the order LeRobot reads them: the subset's episodes it holds
   * (each with its index and frame range before and after, and its length) in the order of its
   * frames, and the episodes whose frames are dropped from it. Enough to write it from the original
   * (rowTransformOf).
   */
  layout: RewrittenDataLayout[];
};

export type RewrittenDataLayout = {
  path: string;
  episodes: (RenumberedEpisode & { length: number })[];
  dropped: number[];
};

/** A data file's layout as the transform a pull plan hands the client that writes it (lib/lerobot/data-rows.ts). */
export function rowTransformOf(layout: RewrittenDataLayout): DataTransform {
  return {
    kind: "lerobot_v3_data_rows",
    changed_columns: [...RENUMBERED_COLUMNS],
    episodes: layout.episodes.map((e) => ({
      episode_index: e.originalEpisodeIndex,
      new_episode_index: e.episodeIndex,
      index_from: e.originalFrom,
      new_index_from: e.from,
      length: e.length,
    })),
    dropped_episode_indices: layout.dropped,
  };
}

export type SubsetOptions = {
  sourceRoot: string;
  targetRoot: string;
  episodes: Iterable<number>;
  /** The video features (cameras) to keep; default every one. */
  videoKeys?: string[];
  /**
   * v3.0: plan the data files' rewrite where LeRobot could not open them as they are: a subset that
   * is not episodes 0..k-1 is renumbered, and frames of episodes outside the subset are dropped
   * (see the module comment). Only the metadata is written; `rewrite.layout` says what each data
   * file becomes, for whoever writes it (the client that fetched it).
   */
  rewriteData?: boolean;
};

/** Whether LeRobot needs a subset of these episodes renumbered to open it without an episode list. */
export const needsRenumbering = (codebaseVersion: CodebaseVersion, episodes: number[]): boolean =>
  isV3(codebaseVersion) && !isPrefix(episodes);

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

  const { json, parsed } = await readInfo(sourceRoot);
  // Write back the document as it was, with only the totals changed (unknown keys included).
  const info = json as Record<string, unknown>;

  const v3 = isV3(parsed.data.codebase_version);
  if (options.rewriteData && !v3)
    throw new SubsetError(
      `rewriting data files is for LeRobot v3.0; a ${parsed.data.codebase_version} subset opens with its episode list`,
    );
  const allVideoKeys = videoKeysOf(parsed.data);
  const unknown = (options.videoKeys ?? []).filter((key) => !allVideoKeys.includes(key));
  if (unknown.length) throw new SubsetError(`${INFO_PATH} has no video feature ${unknown.join(", ")}`);
  const dropped = options.videoKeys ? allVideoKeys.filter((key) => !options.videoKeys!.includes(key)) : [];
  const plan = v3
    ? await planV3(sourceRoot, parsed.data, selected, Boolean(options.rewriteData), dropped)
    : await planV2(sourceRoot, parsed.data, selected, dropped);
  info.total_episodes = selected.length;
  info.total_frames = plan.totalFrames;
  info.total_tasks = plan.totalTasks;
  const renumbered = plan.rewrite?.renumbered
    ? new Map(plan.rewrite.episodes.map((e) => [e.originalEpisodeIndex, e.episodeIndex]))
    : null;
  info.splits = splitsFor(parsed.data.splits, selected, renumbered ? (e) => renumbered.get(e)! : undefined);
  if ("total_videos" in info) info.total_videos = plan.videoFiles.length;
  if ("total_chunks" in info) info.total_chunks = plan.maxChunk + 1;
  // LeRobot's remove_feature: the feature leaves info.json (and stats.json, below), so the loader neither needs nor reads its videos.
  const features = { ...(info.features as Record<string, unknown>) };
  for (const key of dropped) delete features[key];
  info.features = features;

  // Subtask labels, like v3 tasks, are looked up by position (subtasks.iloc[subtask_index]): kept whole.
  const subtasks = await within(sourceRoot, SUBTASKS_PATH)
    .then((file) => readFile(file))
    .catch(() => undefined);
  if (subtasks && path.resolve(sourceRoot) !== path.resolve(targetRoot))
    plan.writes.push([SUBTASKS_PATH, (target) => writeAtomically(target, subtasks)]);

  const written: string[] = [];
  for (const [relative, write] of plan.writes) {
    await write(await within(targetRoot, relative));
    written.push(relative);
  }
  // info.json last: a directory with the subset's info.json has all of the subset's metadata.
  await writeAtomically(await within(targetRoot, INFO_PATH), JSON.stringify(info, null, 4));
  written.push(INFO_PATH);

  const removed: string[] = [];
  if (v3) {
    for (const relative of await parquetFilesUnder(targetRoot, V3_EPISODES_DIR)) {
      if (written.includes(relative)) continue;
      await rm(await within(targetRoot, relative), { force: true });
      removed.push(relative);
    }
  }
  const handled = new Set([
    INFO_PATH,
    STATS_PATH,
    V2_EPISODES_PATH,
    V2_TASKS_PATH,
    V2_EPISODES_STATS_PATH,
    V3_TASKS_PATH,
    SUBTASKS_PATH,
  ]);
  const leftOut = (await filesUnder(sourceRoot, "meta")).filter(
    (relative) => !handled.has(relative) && !relative.startsWith(`${V3_EPISODES_DIR}/`),
  );

  // v3.0: positions are episodes 0..k-1 (as selected, or rewritten so); with no episode list the
  // frames LeRobot serves are the first total_frames rows of data/, which must be the subset's.
  const inPlace = isPrefix(selected) || Boolean(plan.rewrite);
  const shared = plan.rewrite ? [] : plan.sharedDataFiles;
  const opensAsIs = inPlace && !shared.length;
  return {
    codebaseVersion: parsed.data.codebase_version,
    episodes: selected,
    totalFrames: plan.totalFrames,
    totalTasks: plan.totalTasks,
    written,
    removed,
    leftOut,
    referencedFiles: [...plan.dataFiles, ...plan.videoFiles].sort(),
    droppedVideoKeys: dropped,
    rewrite: plan.rewrite
      ? {
          episodes: plan.rewrite.episodes,
          renumbered: plan.rewrite.renumbered,
          layout: plan.rewrite.dataFiles.map(({ path: relative, episodes, others }) => ({
            path: relative,
            episodes,
            dropped: [...others].sort((a, b) => a - b),
          })),
        }
      : null,
    sharedDataFiles: shared,
    loader: {
      loadsAsIs: opensAsIs,
      // With a list, LeRobot reads only the listed episodes' frames (a filter on episode_index).
      loadsWithEpisodeList: inPlace || !v3,
      note: opensAsIs
        ? null
        : !v3
          ? "LeRobot expects episodes 0..total_episodes-1 unless it is given the list: LeRobotDataset(repo_id, root=D, episodes=[...])"
          : !inPlace
            ? "LeRobot looks v3.0 episodes up by position (meta.episodes[episode_index]), so a subset other than episodes 0..k-1 opens only with its episodes renumbered 0..k-1 in the data files and the episode metadata"
            : `data files also hold frames of episodes the metadata does not list (${shared.map((f) => f.path).join(", ")}), which LeRobot would serve without an episode list; it opens with the list, or with those frames dropped from the data files`,
    },
  };
}

async function readInfo(root: string): Promise<{ json: unknown; parsed: { data: Info } }> {
  const infoText = await readSource(root, INFO_PATH);
  let json: unknown;
  try {
    json = JSON.parse(infoText);
  } catch (error) {
    throw new SubsetError(`${INFO_PATH}: invalid JSON (${(error as Error).message})`);
  }
  const parsed = Info.safeParse(json);
  if (!parsed.success)
    throw new SubsetError(
      `${INFO_PATH}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(document)"}: ${i.message}`).join("; ")}`,
    );
  return { json, parsed };
}

/**
 * The episodes a dataset's `meta/` lists (ascending), and the data and video files (of every camera
 * info.json declares) it places them in: what LeRobot needs on disk to open the directory as it is.
 */
export async function listedEpisodes(root: string): Promise<{ episodes: number[]; referencedFiles: string[] }> {
  const { data: info } = (await readInfo(root)).parsed;
  const template = videoTemplateOf(info);
  const videoKeys = template ? videoKeysOf(info) : [];
  const episodes: number[] = [];
  const files = new Set<string>();
  if (!isV3(info.codebase_version)) {
    for (const [number, line] of (await readSource(root, V2_EPISODES_PATH)).split(/\r?\n/).entries()) {
      if (!line.trim()) continue;
      const episode = parseLine(V2_EPISODES_PATH, number + 1, line).episode_index;
      if (typeof episode !== "number") throw new SubsetError(`${V2_EPISODES_PATH}:${number + 1}: no episode_index`);
      episodes.push(episode);
      const values = { episode_chunk: Math.floor(episode / chunksSizeOf(info)), episode_index: episode };
      files.add(templatePath(info.data_path, values));
      for (const key of videoKeys) files.add(templatePath(template!, { ...values, video_key: key }));
    }
  } else {
    const columns = [
      "episode_index",
      "data/chunk_index",
      "data/file_index",
      ...videoKeys.flatMap((key) => [`videos/${key}/chunk_index`, `videos/${key}/file_index`]),
    ];
    for (const relative of await parquetFilesUnder(root, V3_EPISODES_DIR)) {
      for await (const { rows } of parquetBatches(await openParquet(await within(root, relative)), columns)) {
        for (const row of rows) {
          const plain = plainValue(row) as Record<string, number>;
          episodes.push(plain.episode_index!);
          files.add(dataFileOf(info, row));
          for (const key of videoKeys)
            files.add(
              templatePath(template!, {
                video_key: key,
                chunk_index: plain[`videos/${key}/chunk_index`]!,
                file_index: plain[`videos/${key}/file_index`]!,
              }),
            );
        }
      }
    }
  }
  return { episodes: episodes.sort((a, b) => a - b), referencedFiles: [...files].sort() };
}

type Plan = {
  totalFrames: number;
  totalTasks: number;
  dataFiles: string[];
  videoFiles: string[];
  maxChunk: number;
  writes: [string, (target: string) => Promise<void>][];
  /** v3.0 data files rewritten: the episodes and, for each data file (in the order LeRobot reads them), its kept episodes in file order and the others it holds. */
  rewrite?: RewritePlan | null;
  /** v3.0: data files of the subset that also hold other episodes. */
  sharedDataFiles: { path: string; otherEpisodes: number[] }[];
};

type RewritePlan = {
  episodes: RenumberedEpisode[];
  renumbered: boolean;
  dataFiles: { path: string; episodes: (RenumberedEpisode & { length: number })[]; others: number[] }[];
};

/** A statistics tree without the features left out. */
const withoutFeatures = (stats: StatsTree, dropped: string[]): StatsTree =>
  Object.fromEntries(Object.entries(stats).filter(([feature]) => !dropped.includes(feature)));

async function planV2(root: string, info: Info, selected: number[], dropped: string[]): Promise<Plan> {
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
    if (noStats.length)
      throw new SubsetError(`${V2_EPISODES_STATS_PATH} has no stats for episode ${noStats.slice(0, 20).join(", ")}`);
    const episodeStats = statsLines.records.map((r) => withoutFeatures(r.stats as StatsTree, dropped));
    const stats = aggregateStats(episodeStats);
    // Verbatim, unless cameras are left out: then each line without their statistics.
    const lines = dropped.length
      ? statsLines.records.map((r, i) => JSON.stringify({ ...r, stats: episodeStats[i] }))
      : statsLines.lines;
    writes.push([V2_EPISODES_STATS_PATH, (target) => writeAtomically(target, lines.join("\n") + "\n")]);
    writes.push([STATS_PATH, (target) => writeAtomically(target, JSON.stringify(stats, null, 4))]);
  } else {
    // v2.0 has no per-episode stats to aggregate; LeRobot reads stats.json as it is (less the cameras left out).
    const stats = await readSource(root, STATS_PATH).catch(() => undefined);
    const kept =
      stats !== undefined && dropped.length
        ? JSON.stringify(withoutFeatures(JSON.parse(stats) as StatsTree, dropped), null, 4)
        : stats;
    if (kept !== undefined) writes.push([STATS_PATH, (target) => writeAtomically(target, kept)]);
  }

  const chunksSize = chunksSizeOf(info);
  const template = videoTemplateOf(info);
  const videoKeys = template ? videoKeysOf(info).filter((key) => !dropped.includes(key)) : [];
  const dataFiles: string[] = [];
  const videoFiles: string[] = [];
  for (const episode of selected) {
    const values = { episode_chunk: Math.floor(episode / chunksSize), episode_index: episode };
    dataFiles.push(templatePath(info.data_path, values));
    for (const key of videoKeys) videoFiles.push(templatePath(template!, { ...values, video_key: key }));
  }
  return {
    totalFrames,
    totalTasks: taskLines.length,
    dataFiles,
    videoFiles,
    maxChunk: Math.floor(selected.at(-1)! / chunksSize),
    writes,
    sharedDataFiles: [],
  };
}

async function planV3(
  root: string,
  info: Info,
  selected: number[],
  rewrite: boolean,
  dropped: string[],
): Promise<Plan> {
  const wanted = new Set(selected);
  const found = new Set<number>();
  const writes: Plan["writes"] = [];
  // Where each selected episode's frames are, and every episode the metadata places in each data file.
  const located = new Map<number, { dataFile: string; from?: number; to?: number; length: number }>();
  const placedIn = new Map<string, number[]>();
  const keptByFile: [string, ParquetFile, Record<string, unknown>[]][] = [];
  const stats: StatsTree[] = [];
  const dataFiles = new Set<string>();
  const videoFiles = new Set<string>();
  let totalFrames = 0;
  let maxChunk = 0;
  const template = videoTemplateOf(info);
  const videoKeys = template ? videoKeysOf(info).filter((key) => !dropped.includes(key)) : [];
  const episodeFiles = await parquetFilesUnder(root, V3_EPISODES_DIR);
  if (!episodeFiles.length) throw new SubsetError(`no episode metadata under ${V3_EPISODES_DIR}`);
  for (const relative of episodeFiles) {
    const parquet = await openParquet(await within(root, relative));
    const kept: Record<string, unknown>[] = [];
    for await (const { rows } of parquetBatches(parquet)) {
      for (const row of rows) {
        const episode = Number(row.episode_index);
        const dataFile = dataFileOf(info, row);
        placedIn.set(dataFile, [...(placedIn.get(dataFile) ?? []), episode]);
        if (!wanted.has(episode)) continue;
        if (found.has(episode))
          throw new SubsetError(`${relative}: episode ${episode} appears twice in the episode metadata`);
        found.add(episode);
        kept.push(row);
        const plain = plainValue(row) as Record<string, number>;
        totalFrames += plain.length!;
        stats.push(withoutFeatures(statsFromColumns(row), dropped));
        dataFiles.add(dataFile);
        located.set(episode, {
          dataFile,
          from: plain.dataset_from_index,
          to: plain.dataset_to_index,
          length: plain.length!,
        });
        maxChunk = Math.max(maxChunk, plain["data/chunk_index"]!);
        for (const key of videoKeys) {
          videoFiles.add(
            templatePath(template!, {
              video_key: key,
              chunk_index: plain[`videos/${key}/chunk_index`]!,
              file_index: plain[`videos/${key}/file_index`]!,
            }),
          );
        }
      }
    }
    if (kept.length) keptByFile.push([relative, parquet, kept]);
  }
  const missing = selected.filter((e) => !found.has(e));
  if (missing.length) throw new SubsetError(`${V3_EPISODES_DIR} has no episode ${missing.slice(0, 20).join(", ")}`);

  const sharedDataFiles = [...dataFiles]
    .sort(pathOrder)
    .map((file) => ({
      path: file,
      otherEpisodes: placedIn
        .get(file)!
        .filter((e) => !wanted.has(e))
        .sort((a, b) => a - b),
    }))
    .filter((file) => file.otherEpisodes.length);
  // Rewritten only where LeRobot could not open the files as they are.
  const rewriting =
    rewrite && (!isPrefix(selected) || sharedDataFiles.length > 0) ? planRewrite(selected, located, placedIn) : null;
  const byOriginal = new Map(rewriting?.episodes.map((e) => [e.originalEpisodeIndex, e]));
  for (const [relative, parquet, kept] of keptByFile) {
    // The new index and frame range, in the type the column has (int64 arrives as bigint).
    const rows = rewriting
      ? kept.map((row) => {
          const e = byOriginal.get(Number(row.episode_index))!;
          return {
            ...row,
            episode_index: like(row.episode_index, e.episodeIndex),
            dataset_from_index: like(row.dataset_from_index, e.from),
            dataset_to_index: like(row.dataset_to_index, e.to),
          };
        })
      : kept;
    // Same path, same schema and key/value metadata (pyarrow's ARROW:schema, HF's features): only
    // rows change. A camera left out keeps its columns, as after LeRobot's remove_feature: the
    // loader reads the columns of info.json's cameras only.
    writes.push([
      relative,
      (target) =>
        mkdir(path.dirname(target), { recursive: true }).then(() =>
          writeParquet(target, rows, parquet.metadata.schema, parquet.metadata.key_value_metadata),
        ),
    ]);
  }

  // Tasks keep their positions: LeRobot reads a frame's task as tasks.iloc[task_index]. But the
  // text of a task none of the subset's episodes performs describes episodes outside it, so it is
  // replaced by a placeholder (one of its own: the text is pandas' index).
  // A dataset's directory, named at run time (the service renders meta/ with this writer): not a file of the build's to trace.
  const tasks = await readFile(/*turbopackIgnore: true*/ await within(root, V3_TASKS_PATH)).catch(() => {
    throw new SubsetError(`${V3_TASKS_PATH} is missing`);
  });
  const tasksParquet = await openParquet(await within(root, V3_TASKS_PATH));
  const totalTasks = Number(tasksParquet.metadata.num_rows);
  const used = new Set<string>();
  let performedKnown = true;
  for (const [, , kept] of keptByFile)
    for (const row of kept) {
      if (Array.isArray(row.tasks)) for (const task of row.tasks) used.add(String(task));
      else performedKnown = false;
    }
  const textColumn = ["task", "__index_level_0__"].find((c) => tasksParquet.columns.includes(c));
  const taskRows: Record<string, unknown>[] = [];
  if (performedKnown && textColumn) for await (const { rows } of parquetBatches(tasksParquet)) taskRows.push(...rows);
  const unused = taskRows.some((row) => !used.has(String(row[textColumn!])));
  if (unused) {
    const placeheld = taskRows.map((row, i) =>
      used.has(String(row[textColumn!]))
        ? row
        : { ...row, [textColumn!]: `(task ${Number(row.task_index ?? i)}: not in this subset)` },
    );
    writes.push([
      V3_TASKS_PATH,
      (target) =>
        mkdir(path.dirname(target), { recursive: true }).then(() =>
          writeParquet(target, placeheld, tasksParquet.metadata.schema, tasksParquet.metadata.key_value_metadata),
        ),
    ]);
  } else
    writes.push([
      V3_TASKS_PATH,
      (target) =>
        path.resolve(target) === path.resolve(root, V3_TASKS_PATH) ? Promise.resolve() : writeAtomically(target, tasks),
    ]);

  if (stats.some((s) => Object.keys(s).length)) {
    const aggregated = aggregateStats(stats);
    writes.push([STATS_PATH, (target) => writeAtomically(target, JSON.stringify(aggregated, null, 4))]);
  } else {
    const original = await readSource(root, STATS_PATH).catch(() => undefined);
    const kept =
      original !== undefined && dropped.length
        ? JSON.stringify(withoutFeatures(JSON.parse(original) as StatsTree, dropped), null, 4)
        : original;
    if (kept !== undefined) writes.push([STATS_PATH, (target) => writeAtomically(target, kept)]);
  }
  return {
    totalFrames,
    totalTasks,
    dataFiles: [...dataFiles],
    videoFiles: [...videoFiles],
    maxChunk,
    writes,
    rewrite: rewriting,
    sharedDataFiles,
  };
}

const dataFileOf = (info: Info, row: Record<string, unknown>) =>
  templatePath(info.data_path, {
    chunk_index: Number(row["data/chunk_index"]),
    file_index: Number(row["data/file_index"]),
  });

/** A number in the type of the value it replaces: bigint for an int64 column, number otherwise. */
const like = (original: unknown, value: number) => (typeof original === "bigint" ? BigInt(value) : value);

/**
 * Episodes 0..k-1 in ascending original index, and `index` 0..N-1 in the order LeRobot reads the
 * frames (data files in path order, each in its stored order, which is by `index`), counting only
 * the subset's frames: with no episode list LeRobot takes a frame's `index` for its row in that
 * concatenation. Each data file keeps the subset's episodes it holds; the others it holds are
 * dropped from it.
 */
function planRewrite(
  selected: number[],
  located: Map<number, { dataFile: string; from?: number; to?: number; length: number }>,
  placedIn: Map<string, number[]>,
): RewritePlan {
  const wanted = new Set(selected);
  const files = new Map<string, number[]>();
  for (const e of selected) {
    const { dataFile, from, to } = located.get(e)!;
    if (typeof from !== "number" || typeof to !== "number")
      throw new SubsetError(
        `episode ${e} has no dataset_from_index / dataset_to_index, which rewriting the data files needs`,
      );
    files.set(dataFile, [...(files.get(dataFile) ?? []), e]);
  }
  const newIndex = new Map(selected.map((e, i) => [e, i]));
  const dataFiles: RewritePlan["dataFiles"] = [];
  let next = 0;
  for (const dataFile of [...files.keys()].sort(pathOrder)) {
    const episodes = files.get(dataFile)!.sort((a, b) => located.get(a)!.from! - located.get(b)!.from!);
    dataFiles.push({
      path: dataFile,
      others: placedIn.get(dataFile)!.filter((e) => !wanted.has(e)),
      episodes: episodes.map((e) => {
        const { from, to, length } = located.get(e)! as { from: number; to: number; length: number };
        if (to - from !== length)
          throw new SubsetError(
            `episode ${e}: dataset_from_index..dataset_to_index (${from}..${to}) is not its length (${length})`,
          );
        const renumbered = {
          originalEpisodeIndex: e,
          episodeIndex: newIndex.get(e)!,
          originalFrom: from,
          originalTo: to,
          from: next,
          to: next + length,
          length,
        };
        next += length;
        return renumbered;
      }),
    });
  }
  const episodes = dataFiles
    .flatMap((f) => f.episodes.map(({ length: _, ...e }) => e))
    .sort((a, b) => a.episodeIndex - b.episodeIndex);
  const renumbered = episodes.some((e) => e.episodeIndex !== e.originalEpisodeIndex || e.from !== e.originalFrom);
  return { episodes, renumbered, dataFiles };
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

async function keepLines(
  root: string,
  relative: string,
  keep: (record: Record<string, unknown>) => boolean,
): Promise<string[]> {
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

/**
 * Where a file of the dataset lies under `root`. The metadata comes from whoever delivered it (for
 * `das pull`, a server), so no path it leads to may leave the directory: not by its shape, not
 * through a symbolic link.
 */
async function within(root: string, relative: string): Promise<string> {
  try {
    return await pathInside(root, relative);
  } catch (error) {
    if (error instanceof UnsafePathError) throw new SubsetError(error.message);
    throw error;
  }
}

/** A file named by one of info.json's templates, refused unless it is a safe relative path. */
function templatePath(template: string, values: Record<string, string | number>): string {
  const relative = formatPathTemplate(template, values);
  const problem = safePathProblem(relative);
  if (problem)
    throw new SubsetError(
      `${INFO_PATH}'s template ${showUnsafe(JSON.stringify(template))} names ${showUnsafe(JSON.stringify(relative))}, which is not a safe relative path: ${problem}`,
    );
  return relative;
}

async function readSource(root: string, relative: string): Promise<string> {
  try {
    return await readFile(/*turbopackIgnore: true*/ await within(root, relative), "utf8");
  } catch (error) {
    throw new SubsetError(
      `${relative}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "file is missing" : (error as Error).message}`,
    );
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
