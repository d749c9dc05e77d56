/**
 * Reads a LeRobot dataset directory (codebase v2.0, v2.1 or v3.0) into one shape, whatever its
 * version, for the importer to map onto the catalog. No database, no network: files only.
 *
 *   const dataset = await openLeRobotDataset(dir);      // throws LeRobotFormatError on a bad info.json
 *   dataset.facts                                       // fps, robot type, cameras, totals, splits, ...
 *   for await (const e of dataset.episodes()) ...       // {episode_index, tasks, length, duration_s, extra}
 *   for await (const f of dataset.files()) ...          // every file, its stream and the episodes in it
 *   for await (const s of dataset.subtaskSpans()) ...   // {episode_index, label, start_s, end_s}
 *   await dataset.missingFiles()                        // files the metadata names that are not there
 *   dataset.problems                                    // what each pass found wrong, file:line
 *
 * Everything is streamed: jsonl line by line, parquet one row group at a time. Each pass reads
 * the files again and reports what it finds (to `onProblem`, or into `problems`); a record with a
 * problem is left out of what the pass yields. For parquet files a problem's `line` is the row
 * number (from 1). Strings (tasks, subtask labels) come through exactly as stored: the importer
 * applies its own rules. docs/lerobot.md describes the mapping.
 *
 * The parts, by concern: walk.ts (where each file really is, and the walk of the directory),
 * info.ts (meta/info.json and the facts read from it), records-v2.ts and records-v3.ts (the
 * episode records of each version), episode-record.ts (what a record holds and the files it
 * names), subtasks.ts (subtask spans), findings.ts (problems and notices).
 */
import path from "node:path";
import { showUnsafe } from "../characters";
import { linkRoots, locate } from "../local-path";
import { type EpisodeRange, type Located, namedFiles, OWNER_FIELDS } from "./episode-record";
import { type Findings, type Notice, Notices, type Problem } from "./findings";
import {
  type CodebaseVersion,
  INFO_PATH,
  type Info,
  isV3,
  V2_EPISODES_PATH,
  V2_EPISODES_STATS_PATH,
  V2_TASKS_PATH,
  V3_TASKS_PATH,
} from "./format";
import { factsOf, infoLine, type LeRobotFacts, LeRobotFormatError, readInfo } from "./info";
import { v2Records } from "./records-v2";
import { v3EpisodeFiles, v3Records } from "./records-v3";
import { type SubtaskSpan, subtaskSpans } from "./subtasks";
import { DatasetDirectory, unsafePath } from "./walk";

export type { EpisodeRange, Notice, Problem, SubtaskSpan };
export type { LeRobotCamera, LeRobotFacts, SubtaskSource } from "./info";
export { LeRobotFormatError };

export type LeRobotEpisode = {
  episode_index: number;
  tasks: string[];
  /** Frames. */
  length: number;
  /** length / fps */
  duration_s: number;
  /** Fields of the episode record that are not LeRobot's own, e.g. outcome, environment, contributor, has_recovery. */
  extra: Record<string, unknown>;
};

export type LeRobotFile = {
  /** Relative to the dataset directory, with '/' separators. */
  path: string;
  /** `data` for frame parquet, the camera key for videos, null for a file of the whole version. */
  stream: string | null;
  /** The episodes the file holds (in v2 exactly one); empty for version-level files. */
  episodes: EpisodeRange[];
  /** null: the metadata names the file, but it is not in the directory. */
  size_bytes: number | null;
};

export interface LeRobotDataset {
  readonly dir: string;
  readonly info: Info;
  readonly facts: LeRobotFacts;
  /** Problems found so far (empty when `onProblem` was given). */
  readonly problems: Problem[];
  /** Notices found so far: each counted once however many passes find it. */
  readonly notices: Notice[];
  episodes(): AsyncIterable<LeRobotEpisode>;
  /** Each episode with the metadata file and line (parquet: row) it was read from. */
  locatedEpisodes(): AsyncIterable<{ episode: LeRobotEpisode; file: string; line: number }>;
  /**
   * `withEpisodes: false` leaves each file's `episodes` empty (v3 files are then listed without
   * keeping every episode's range in memory; `episodeFiles()` streams those).
   */
  files(options?: { withEpisodes?: boolean }): AsyncIterable<LeRobotFile>;
  /** Every (episode, file) pair the metadata names, one episode record at a time, with where it was named. */
  episodeFiles(): AsyncIterable<{ path: string; stream: string; range: EpisodeRange; file: string; line: number }>;
  subtaskSpans(): AsyncIterable<SubtaskSpan>;
  missingFiles(): Promise<string[]>;
  /**
   * Where a file's bytes are to be read from: its real path, every link on the way checked again
   * to lead only where it may; throws when it no longer does, or the file is gone.
   */
  realPathOf(relative: string): Promise<string>;
  /** The episodes the metadata lists and their frames (the sum of their lengths); notices stale totals in info.json. */
  totals(): Promise<{ episodes: number; frames: number }>;
}

export async function openLeRobotDataset(
  dir: string,
  options: { onProblem?: (problem: Problem) => void; signal?: AbortSignal } = {},
): Promise<LeRobotDataset> {
  const roots = await linkRoots(dir);
  const found = await locate(roots[0]!, INFO_PATH, roots);
  if (found && "refused" in found)
    throw new LeRobotFormatError([{ file: INFO_PATH, line: 0, message: `not read: ${found.refused}` }]);
  const { info, text } = await readInfo(found?.real ?? path.join(roots[0]!, INFO_PATH));
  return new Dataset(dir, info, text, roots, options.onProblem, options.signal);
}

/** Packs a metadata file's number and a line into one number (exact below 2^53). */
const FILE_SLOTS = 2 ** 20;

class Dataset implements LeRobotDataset, Findings {
  readonly problems: Problem[] = [];
  readonly facts: LeRobotFacts;
  private readonly version: CodebaseVersion;
  private readonly noticed = new Notices();
  private readonly directory: DatasetDirectory;

  constructor(
    readonly dir: string,
    readonly info: Info,
    private readonly infoText: string,
    linkRoots: string[],
    private readonly onProblem?: (problem: Problem) => void,
    readonly signal?: AbortSignal,
  ) {
    this.version = info.codebase_version;
    this.facts = factsOf(info);
    this.directory = new DatasetDirectory(dir, linkRoots, this);
  }

  report(problem: Problem): void {
    if (this.onProblem) this.onProblem(problem);
    else this.problems.push(problem);
  }

  get notices(): Notice[] {
    return this.noticed.list();
  }

  notice(message: string, place: string): void {
    this.noticed.add(message, place);
  }

  /** Where an imported file's bytes are read from: the real path its checks were made on. */
  realPathOf(relative: string): Promise<string> {
    return this.directory.realPathOf(relative);
  }

  /** Every valid episode record, in file order, with where it was read; checks totals at the end. */
  private async *records(): AsyncGenerator<Located> {
    // Where each index was first read, as a number (file number and line), not a string per
    // episode: this map is the only memory a pass keeps per episode.
    const seen = new Map<number, number>();
    const files: string[] = [];
    let episodes = 0;
    let frames = 0;
    const source = isV3(this.version) ? v3Records(this.directory, this.info, this) : v2Records(this.directory, this);
    for await (const located of source) {
      this.signal?.throwIfAborted();
      const { record, file, line } = located;
      const first = seen.get(record.episode_index);
      if (first !== undefined) {
        const at = `${files[first % FILE_SLOTS]}:${Math.floor(first / FILE_SLOTS)}`;
        this.report({ file, line, message: `episode_index ${record.episode_index} appears again (first at ${at})` });
        continue;
      }
      if (files.at(-1) !== file) files.push(file);
      seen.set(record.episode_index, line * FILE_SLOTS + (files.length - 1));
      episodes++;
      frames += record.length;
      yield located;
    }
    // Stale totals are common (an owner deletes episodes and leaves info.json): the episodes the
    // metadata lists are what is imported, and what the version's facts count.
    if (episodes !== this.info.total_episodes) {
      this.notice(
        `info.json's total_episodes is ${this.info.total_episodes}, but the episode metadata lists ${episodes} episodes: imported as listed`,
        `${INFO_PATH}:${infoLine(this.infoText, "total_episodes")}`,
      );
    }
    if (frames !== this.info.total_frames) {
      this.notice(
        `info.json's total_frames is ${this.info.total_frames}, but the episodes' lengths add up to ${frames}: the version counts ${frames}`,
        `${INFO_PATH}:${infoLine(this.infoText, "total_frames")}`,
      );
    }
    this.counted = { episodes, frames };
  }

  private counted?: { episodes: number; frames: number };

  async totals(): Promise<{ episodes: number; frames: number }> {
    if (!this.counted) for await (const _ of this.records());
    return this.counted!;
  }

  async *episodes(): AsyncGenerator<LeRobotEpisode> {
    for await (const { episode } of this.locatedEpisodes()) yield episode;
  }

  async *locatedEpisodes(): AsyncGenerator<{ episode: LeRobotEpisode; file: string; line: number }> {
    for await (const { record, file, line } of this.records()) {
      const extra = Object.fromEntries(
        OWNER_FIELDS.filter((field) => record[field] !== undefined).map((field) => [field, record[field]]),
      );
      yield {
        episode: {
          episode_index: record.episode_index,
          tasks: record.tasks,
          length: record.length,
          duration_s: record.length / this.info.fps,
          extra,
        },
        file,
        line,
      };
    }
  }

  async *episodeFiles(): AsyncGenerator<{
    path: string;
    stream: string;
    range: EpisodeRange;
    file: string;
    line: number;
  }> {
    for await (const { record, file, line } of this.records()) {
      for (const [relative, stream, range] of namedFiles(this.info, record)) {
        // Reported by files(); a path that is not safe is never listed.
        if (!unsafePath(relative)) yield { path: relative, stream, range, file, line };
      }
    }
  }

  async *files(options: { withEpisodes?: boolean } = {}): AsyncGenerator<LeRobotFile> {
    const withEpisodes = options.withEpisodes ?? true;
    const named = new Set<string>();
    const accept = (relative: string, where: { file: string; line: number }): boolean => {
      const problem = unsafePath(relative);
      if (problem)
        this.report({
          ...where,
          message: `the metadata names the file ${showUnsafe(JSON.stringify(relative))}, which is not a safe relative path: ${problem}`,
        });
      return !problem;
    };
    if (!isV3(this.version)) {
      // One file per episode and stream: yield as the episodes stream past.
      for await (const { record, file, line } of this.records()) {
        for (const [relative, stream, range] of namedFiles(this.info, record)) {
          if (!accept(relative, { file, line }) || named.has(relative)) continue;
          named.add(relative);
          yield {
            path: relative,
            stream,
            episodes: withEpisodes ? [range] : [],
            size_bytes: await this.directory.sizeOf(relative),
          };
        }
      }
    } else {
      // Files are shared by the episodes they hold: group first.
      const grouped = new Map<string, { stream: string; episodes: EpisodeRange[] }>();
      for await (const { record, file, line } of this.records()) {
        for (const [relative, stream, range] of namedFiles(this.info, record)) {
          if (!accept(relative, { file, line })) continue;
          const entry = grouped.get(relative);
          if (entry && entry.stream !== stream)
            this.report({ file, line, message: `${relative} is named both as ${entry.stream} and as ${stream}` });
          else if (entry) {
            if (withEpisodes) entry.episodes.push(range);
          } else grouped.set(relative, { stream, episodes: withEpisodes ? [range] : [] });
        }
      }
      for (const [relative, { stream, episodes }] of [...grouped].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        named.add(relative);
        yield { path: relative, stream, episodes, size_bytes: await this.directory.sizeOf(relative) };
      }
    }
    // Version-level: the metadata LeRobot needs (listed even when missing), then everything else.
    const required = isV3(this.version)
      ? [INFO_PATH, V3_TASKS_PATH, ...(await v3EpisodeFiles(this.directory, this))]
      : [INFO_PATH, V2_EPISODES_PATH, V2_TASKS_PATH, ...(this.version === "v2.1" ? [V2_EPISODES_STATS_PATH] : [])];
    for (const relative of required) {
      if (named.has(relative)) continue;
      named.add(relative);
      yield { path: relative, stream: null, episodes: [], size_bytes: await this.directory.sizeOf(relative) };
    }
    for await (const relative of this.directory.walk("", named)) {
      yield { path: relative, stream: null, episodes: [], size_bytes: await this.directory.sizeOf(relative) };
    }
  }

  async missingFiles(): Promise<string[]> {
    const missing: string[] = [];
    for await (const file of this.files()) if (file.size_bytes === null) missing.push(file.path);
    return missing;
  }

  subtaskSpans(): AsyncGenerator<SubtaskSpan> {
    return subtaskSpans(this.directory, this.info, this.facts.subtaskSource, this.records(), this);
  }
}
