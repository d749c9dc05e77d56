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
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import {
  INFO_PATH,
  Info,
  SUBTASKS_PATH,
  TemplateError,
  V2_EPISODES_PATH,
  V2_EPISODES_STATS_PATH,
  V2_TASKS_PATH,
  V3_EPISODES_DIR,
  V3_TASKS_PATH,
  cameraKeysOf,
  chunksSizeOf,
  formatPathTemplate,
  isV3,
  plainValue,
  videoKeysOf,
  videoTemplateOf,
  type CodebaseVersion,
  type Feature,
} from "../../../lerobot/format";
import { openParquet, parquetBatches, type ParquetFile } from "../../../lerobot/parquet";
import { describeIssue, parseJsonLine, type Problem } from "../../../json-document";
import { readDocument } from "../../../read-document";
import { readLines } from "../../../read-lines";
import { FilePath } from "../../../safe-path";
import { linkRoots, locate, OUTSIDE } from "../../../local-path";
import { hasUnsafeCharacter, showUnsafe, UNSAFE_CHARACTERS_DESCRIPTION } from "../../../characters";

export type { Problem };

export type LeRobotCamera = {
  /** The feature key, e.g. `observation.images.wrist`. */
  key: string;
  /** `video`: mp4 files of its own; `image`: embedded in the data parquet files. */
  storage: "video" | "image";
  codec: string | null;
  height: number | null;
  width: number | null;
  fps: number | null;
};

/**
 * `language`: the `language_persistent` / `language_events` frame columns (rows of style "subtask");
 * `subtask_index`: a per-frame index into meta/subtasks.parquet. A dataset declaring both is read
 * through its language columns, the newer of the two conventions.
 */
export type SubtaskSource = "language" | "subtask_index";

export type LeRobotFacts = {
  codebaseVersion: CodebaseVersion;
  robotType: string | null;
  fps: number;
  totalEpisodes: number;
  totalFrames: number;
  totalTasks: number | null;
  chunksSize: number;
  splits: Record<string, string>;
  cameras: LeRobotCamera[];
  features: Record<string, Feature>;
  /** Where subtask spans come from, if the dataset declares any (features in info.json). */
  subtaskSource: SubtaskSource | null;
};

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

/** An episode's place in a file: v3 files hold several episodes back to back. */
export type EpisodeRange = {
  episode_index: number;
  /** Video files (v3): the episode's seconds in the file. */
  from_timestamp?: number;
  to_timestamp?: number;
  /** Data files (v3): the episode's frames, as global frame indices (the `index` column). */
  dataset_from_index?: number;
  dataset_to_index?: number;
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

export type SubtaskSpan = { episode_index: number; label: string; start_s: number; end_s: number };

/**
 * Something the reader left out or took as it is, which the import does not refuse for but the
 * operator should know about: how many times, and the first few places (file or file:line).
 */
export type Notice = { message: string; count: number; examples: string[] };

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

/** info.json is missing, unreadable, invalid or of an unsupported version: nothing else can be read. */
export class LeRobotFormatError extends Error {
  constructor(readonly problems: Problem[]) {
    super(`Not a readable LeRobot dataset:\n${problems.map((p) => `${p.file}:${p.line}: ${p.message}`).join("\n")}`);
    this.name = "LeRobotFormatError";
  }
}

export async function openLeRobotDataset(
  dir: string,
  options: { onProblem?: (problem: Problem) => void; signal?: AbortSignal } = {},
): Promise<LeRobotDataset> {
  const roots = await linkRoots(dir);
  const info = await locate(roots[0]!, INFO_PATH, roots);
  if (info && "refused" in info)
    throw new LeRobotFormatError([{ file: INFO_PATH, line: 0, message: `not read: ${info.refused}` }]);
  return readInfo(dir, info?.real ?? path.join(roots[0]!, INFO_PATH), roots, options);
}

async function readInfo(
  dir: string,
  infoPath: string,
  roots: string[],
  options: { onProblem?: (problem: Problem) => void; signal?: AbortSignal },
): Promise<LeRobotDataset> {
  // Read as the importer reads its own documents: a size limit, invalid UTF-8 refused at its line.
  const problems: Problem[] = [];
  const { value: info, text } = await readDocument(infoPath, INFO_PATH, Info, {
    add: (...found) => problems.push(...found),
  });
  if (!info || text === undefined) {
    // The version decides everything else, so an unsupported one is reported alone.
    const versionProblem = problems.find((p) => p.message.includes("codebase_version"));
    const version = text !== undefined && /"codebase_version"\s*:\s*("(?:[^"\\]|\\.)*")/.test(text);
    throw new LeRobotFormatError(versionProblem && version ? [versionProblem] : problems);
  }
  const templateProblems = checkTemplates(info, text);
  if (templateProblems.length) throw new LeRobotFormatError(templateProblems);
  return new Directory(dir, info, text, roots, options.onProblem, options.signal);
}

const count = (what: string) =>
  z
    .number(`${what} must be a number`)
    .int(`${what} must be a whole number`)
    .min(0, `${what} must be at least 0`)
    .max(Number.MAX_SAFE_INTEGER);

const EpisodeRecord = z.looseObject({
  episode_index: count("episode_index"),
  tasks: z.array(z.string("tasks must be strings"), "tasks must be an array of strings"),
  length: count("length"),
});

const V3Location = z.object({
  "data/chunk_index": count("data/chunk_index"),
  "data/file_index": count("data/file_index"),
  dataset_from_index: count("dataset_from_index"),
  dataset_to_index: count("dataset_to_index"),
});

const VideoLocation = (key: string) =>
  z.object({
    [`videos/${key}/chunk_index`]: count(`videos/${key}/chunk_index`),
    [`videos/${key}/file_index`]: count(`videos/${key}/file_index`),
    [`videos/${key}/from_timestamp`]: z
      .number(`videos/${key}/from_timestamp must be a number`)
      .min(0, `videos/${key}/from_timestamp must be at least 0`),
    [`videos/${key}/to_timestamp`]: z
      .number(`videos/${key}/to_timestamp must be a number`)
      .min(0, `videos/${key}/to_timestamp must be at least 0`),
  });

/**
 * The owner's fields an episode record may carry beside LeRobot's own, the importer's `extra`.
 * Nothing else of a record is read: an unused column of meta/episodes can be anything (a GZIP
 * column of 200 MB strings in a file of 791 KB), and decoding it would cost that much memory.
 */
export const OWNER_FIELDS = ["outcome", "environment", "contributor", "has_recovery"] as const;

type EpisodeRecordValue = z.infer<typeof EpisodeRecord>;
/** Packs a metadata file's number and a line into one number (exact below 2^53). */
const FILE_SLOTS = 2 ** 20;
type Located = { record: EpisodeRecordValue; file: string; line: number };

/** How many places a notice remembers, to count each once over several passes. */
const NOTICE_PLACES = 100_000;
/** How many places a notice names. */
const NOTICE_EXAMPLES = 5;

class Directory implements LeRobotDataset {
  readonly problems: Problem[] = [];
  readonly facts: LeRobotFacts;
  private readonly version: CodebaseVersion;
  private readonly noticed = new Map<string, { count: number; examples: string[]; seen: Set<string> }>();

  constructor(
    readonly dir: string,
    readonly info: Info,
    private readonly infoText: string,
    private readonly linkRoots: string[],
    private readonly onProblem?: (problem: Problem) => void,
    private readonly signal?: AbortSignal,
  ) {
    this.version = info.codebase_version;
    const features = info.features;
    this.facts = {
      codebaseVersion: info.codebase_version,
      robotType: info.robot_type ?? null,
      fps: info.fps,
      totalEpisodes: info.total_episodes,
      totalFrames: info.total_frames,
      totalTasks: info.total_tasks ?? null,
      chunksSize: chunksSizeOf(info),
      splits: info.splits ?? {},
      cameras: cameraKeysOf(info).map((key) => camera(key, features[key]!)),
      features,
      subtaskSource:
        "language_persistent" in features || "language_events" in features
          ? "language"
          : "subtask_index" in features
            ? "subtask_index"
            : null,
    };
  }

  private report(problem: Problem): void {
    if (this.onProblem) this.onProblem(problem);
    else this.problems.push(problem);
  }

  get notices(): Notice[] {
    return [...this.noticed].map(([message, { count, examples }]) => ({ message, count, examples }));
  }

  /** Counts `place` under `message` once, however many passes come by it. */
  private notice(message: string, place: string): void {
    let entry = this.noticed.get(message);
    if (!entry) this.noticed.set(message, (entry = { count: 0, examples: [], seen: new Set() }));
    if (entry.seen.has(place)) return;
    if (entry.seen.size < NOTICE_PLACES) entry.seen.add(place);
    entry.count++;
    if (entry.examples.length < NOTICE_EXAMPLES) entry.examples.push(place);
  }

  /**
   * A regular file of the directory: its real path and size, every symbolic link on the way
   * followed only where it may lead (local-path.ts); why it is refused; or null when there is no
   * such file. Only a regular file counts: a FIFO or a device would block or never end when hashed.
   */
  private async fileAt(relative: string): Promise<{ real: string; size: number } | { refused: string } | null> {
    const found = await locate(this.linkRoots[0]!, relative, this.linkRoots);
    if (!found || "refused" in found) return found;
    if (found.stats.isFile()) return { real: found.real, size: found.stats.size };
    if (!found.linked) return null;
    return {
      refused: found.stats.isDirectory()
        ? "a symbolic link to a directory (links are followed to files only)"
        : "a symbolic link to something that is not a regular file",
    };
  }

  /** Where a file the metadata names is read from; reported and undefined when refused or missing. */
  private async realFile(relative: string): Promise<string | undefined> {
    const found = await this.fileAt(relative);
    if (found && "refused" in found)
      this.report({ file: relative, line: 0, message: `not imported: ${found.refused}` });
    else if (!found) this.report({ file: relative, line: 0, message: "file is missing" });
    else return found.real;
    return undefined;
  }

  /** Where an imported file's bytes are read from: the real path its checks were made on. */
  async realPathOf(relative: string): Promise<string> {
    const found = await this.fileAt(relative);
    if (!found || "refused" in found)
      throw new Error(`${relative}: ${found ? found.refused : "the file is gone since it was listed"}`);
    return found.real;
  }

  private async sizeOf(relative: string): Promise<number | null> {
    const found = await this.fileAt(relative);
    if (found && "refused" in found) {
      this.report({ file: relative, line: 0, message: `not imported: ${found.refused}` });
      return null;
    }
    return found?.size ?? null;
  }

  private infoLine(key: string): number {
    const at = this.infoText.indexOf(`"${key}"`);
    return at < 0 ? 1 : this.infoText.slice(0, at).split("\n").length;
  }

  /** Every valid episode record, in file order, with where it was read; checks totals at the end. */
  private async *records(): AsyncGenerator<Located> {
    // Where each index was first read, as a number (file number and line), not a string per
    // episode: this map is the only memory a pass keeps per episode.
    const seen = new Map<number, number>();
    const files: string[] = [];
    let episodes = 0;
    let frames = 0;
    const source = isV3(this.version) ? this.v3Records() : this.v2Records();
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
        `${INFO_PATH}:${this.infoLine("total_episodes")}`,
      );
    }
    if (frames !== this.info.total_frames) {
      this.notice(
        `info.json's total_frames is ${this.info.total_frames}, but the episodes' lengths add up to ${frames}: the version counts ${frames}`,
        `${INFO_PATH}:${this.infoLine("total_frames")}`,
      );
    }
    this.counted = { episodes, frames };
  }

  private counted?: { episodes: number; frames: number };

  async totals(): Promise<{ episodes: number; frames: number }> {
    if (!this.counted) for await (const _ of this.records());
    return this.counted!;
  }

  private async *v2Records(): AsyncGenerator<Located> {
    const file = await this.realFile(V2_EPISODES_PATH);
    if (!file) return;
    // The importer's own line reader: invalid UTF-8 and over-long lines are refused at their line, never replaced.
    for await (const line of readLines(file, undefined, this.signal)) {
      this.signal?.throwIfAborted();
      if ("problem" in line) {
        this.report({ file: V2_EPISODES_PATH, line: line.number, message: line.problem });
        continue;
      }
      if (!line.text.trim()) continue;
      const parsed = parseJsonLine(V2_EPISODES_PATH, line.number, line.text, EpisodeRecord);
      if (parsed.value) yield { record: parsed.value, file: V2_EPISODES_PATH, line: line.number };
      else parsed.problems.forEach((p) => this.report(p));
    }
  }

  private async *v3Records(): AsyncGenerator<Located> {
    const files = await this.v3EpisodeFiles();
    if (!files.length)
      this.report({
        file: V3_EPISODES_DIR,
        line: 0,
        message: "no episode metadata (meta/episodes/chunk-XXX/file-YYY.parquet) found",
      });
    const videoKeys = videoKeysOf(this.info);
    const shape: Record<string, z.ZodNumber> = Object.assign(
      {},
      V3Location.shape,
      ...videoKeys.map((key) => VideoLocation(key).shape),
    );
    const location = z.object(shape);
    for (const relative of files) {
      const parquet = await this.parquet(relative);
      if (!parquet) continue;
      // Only what is used: per-episode statistics are most of the file, and any other column may be anything.
      const columns = [
        ...Object.keys(EpisodeRecord.shape),
        ...Object.keys(shape),
        ...OWNER_FIELDS.filter((field) => !field.includes("/")),
      ];
      for await (const { first, rows } of this.batches(relative, parquet, columns)) {
        for (const [i, raw] of rows.entries()) {
          this.signal?.throwIfAborted();
          const line = first + i + 1;
          const row = plainValue(raw) as Record<string, unknown>;
          const parsed = EpisodeRecord.safeParse(row, { reportInput: true });
          const where = location.safeParse(row, { reportInput: true });
          const issues = [...(parsed.error?.issues ?? []), ...(where.error?.issues ?? [])];
          if (parsed.success && where.success) {
            const r = where.data;
            if (r.dataset_to_index! - r.dataset_from_index! !== parsed.data.length) {
              this.report({
                file: relative,
                line,
                message: `dataset_to_index - dataset_from_index is ${r.dataset_to_index! - r.dataset_from_index!}, but length is ${parsed.data.length}`,
              });
              continue;
            }
            const backwards = videoKeys.find(
              (key) => r[`videos/${key}/to_timestamp`]! < r[`videos/${key}/from_timestamp`]!,
            );
            if (backwards) {
              this.report({
                file: relative,
                line,
                message: `videos/${backwards}/to_timestamp is before videos/${backwards}/from_timestamp`,
              });
              continue;
            }
            yield { record: parsed.data, file: relative, line };
          } else issues.forEach((issue) => this.report({ file: relative, line, message: describeIssue(issue) }));
        }
      }
    }
  }

  /**
   * A parquet file's rows in batches (parquetBatches); a batch that cannot be decoded (a damaged
   * page, a codec no decoder knows) is reported at the row it starts with, and ends the file.
   */
  private async *batches(
    relative: string,
    parquet: ParquetFile,
    columns: string[],
  ): AsyncGenerator<{ first: number; rows: Record<string, unknown>[] }> {
    let next = 0;
    try {
      for await (const batch of parquetBatches(parquet, columns, { signal: this.signal })) {
        next = batch.first + batch.rows.length;
        yield batch;
      }
    } catch (error) {
      if (this.signal?.aborted) throw error;
      this.report({
        file: relative,
        line: next + 1,
        message: `not a readable parquet file from this row on (${(error as Error).message.replaceAll(`${parquet.path}: `, "")})`,
      });
    }
  }

  private async parquet(relative: string) {
    const real = await this.realFile(relative);
    if (!real) return undefined;
    try {
      return await openParquet(real);
    } catch (error) {
      this.report({
        file: relative,
        line: 0,
        // The message names the file by its real path: the dataset's own name for it is the problem's.
        message: `not a readable parquet file (${(error as Error).message.replaceAll(`${real}: `, "")})`,
      });
      return undefined;
    }
  }

  /**
   * meta/episodes/*\/*.parquet in name order, as LeRobot globs them (Python's glob leaves out
   * names starting with '.'). A file may be a symbolic link, as in a Hugging Face cache snapshot.
   */
  private async v3EpisodeFiles(): Promise<string[]> {
    const found: string[] = [];
    // meta/ or meta/episodes/ may be a link: listed only where it may lead.
    const dir = await locate(this.linkRoots[0]!, V3_EPISODES_DIR, this.linkRoots);
    if (dir && "refused" in dir) {
      this.report({ file: V3_EPISODES_DIR, line: 0, message: `not read: ${dir.refused}` });
      return found;
    }
    if (!dir?.stats.isDirectory()) return found;
    for (const chunk of await listDir(dir.real)) {
      if (!chunk.isDirectory() || chunk.name.startsWith(".")) continue;
      for (const file of await listDir(path.join(dir.real, chunk.name))) {
        const relative = `${V3_EPISODES_DIR}/${chunk.name}/${file.name}`;
        if (file.name.startsWith(".") || !file.name.endsWith(".parquet") || !(file.isFile() || file.isSymbolicLink()))
          continue;
        if (file.isFile() || (await this.sizeOf(relative)) !== null) found.push(relative);
      }
    }
    return found.sort();
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
      for (const [relative, stream, range] of this.namedFiles(record)) {
        // Reported by files(); a path that is not safe is never listed.
        if (!unsafePath(relative)) yield { path: relative, stream, range, file, line };
      }
    }
  }

  /** Episode files named by one record: [path, stream, range]. */
  private namedFiles(record: EpisodeRecordValue): [string, string, EpisodeRange][] {
    const episode = record.episode_index;
    const videoTemplate = videoTemplateOf(this.info);
    const videoKeys = videoTemplate ? videoKeysOf(this.info) : [];
    if (!isV3(this.version)) {
      const values = { episode_chunk: Math.floor(episode / chunksSizeOf(this.info)), episode_index: episode };
      return [
        [formatPathTemplate(this.info.data_path, values), "data", { episode_index: episode }],
        ...videoKeys.map((key): [string, string, EpisodeRange] => [
          formatPathTemplate(videoTemplate!, { ...values, video_key: key }),
          key,
          { episode_index: episode },
        ]),
      ];
    }
    const r = record as Record<string, unknown> as Record<string, number>;
    return [
      [
        formatPathTemplate(this.info.data_path, {
          chunk_index: r["data/chunk_index"]!,
          file_index: r["data/file_index"]!,
        }),
        "data",
        { episode_index: episode, dataset_from_index: r.dataset_from_index!, dataset_to_index: r.dataset_to_index! },
      ],
      ...videoKeys.map((key): [string, string, EpisodeRange] => [
        formatPathTemplate(videoTemplate!, {
          video_key: key,
          chunk_index: r[`videos/${key}/chunk_index`]!,
          file_index: r[`videos/${key}/file_index`]!,
        }),
        key,
        {
          episode_index: episode,
          from_timestamp: r[`videos/${key}/from_timestamp`]!,
          to_timestamp: r[`videos/${key}/to_timestamp`]!,
        },
      ]),
    ];
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
        for (const [relative, stream, range] of this.namedFiles(record)) {
          if (!accept(relative, { file, line }) || named.has(relative)) continue;
          named.add(relative);
          yield {
            path: relative,
            stream,
            episodes: withEpisodes ? [range] : [],
            size_bytes: await this.sizeOf(relative),
          };
        }
      }
    } else {
      // Files are shared by the episodes they hold: group first.
      const grouped = new Map<string, { stream: string; episodes: EpisodeRange[] }>();
      for await (const { record, file, line } of this.records()) {
        for (const [relative, stream, range] of this.namedFiles(record)) {
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
        yield { path: relative, stream, episodes, size_bytes: await this.sizeOf(relative) };
      }
    }
    // Version-level: the metadata LeRobot needs (listed even when missing), then everything else.
    const required = isV3(this.version)
      ? [INFO_PATH, V3_TASKS_PATH, ...(await this.v3EpisodeFiles())]
      : [INFO_PATH, V2_EPISODES_PATH, V2_TASKS_PATH, ...(this.version === "v2.1" ? [V2_EPISODES_STATS_PATH] : [])];
    for (const relative of required) {
      if (named.has(relative)) continue;
      named.add(relative);
      yield { path: relative, stream: null, episodes: [], size_bytes: await this.sizeOf(relative) };
    }
    for await (const relative of this.walk("", named)) {
      yield { path: relative, stream: null, episodes: [], size_bytes: await this.sizeOf(relative) };
    }
  }

  /**
   * Regular files under the directory in name order, and symbolic links to regular files where
   * they may point (linkTargetRoots); anything else is reported and skipped. Left out with a
   * notice, not a problem: hidden files and directories (a name starting with '.': `.git/` with
   * its LFS objects, `.cache/huggingface/` that `snapshot_download(local_dir=...)` leaves,
   * `.gitattributes`, `.DS_Store`), which are no part of a dataset, and a top-level `images/`,
   * where LeRobot keeps frames while it records and which its `push_to_hub` never uploads.
   */
  private async *walk(relativeDir: string, named: Set<string>): AsyncGenerator<string> {
    const entries = (await listDir(path.join(this.dir, relativeDir))).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const entry of entries) {
      this.signal?.throwIfAborted();
      const relative = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      if (named.has(relative)) continue;
      const problem = unsafePath(relative);
      if (problem) {
        this.report({ file: showUnsafe(relative), line: 0, message: `not imported: ${problem}` });
        continue;
      }
      // A link is judged before the rules below: one that leads outside is refused whatever its
      // name, never left out quietly as hidden (`.keys -> ~/.ssh`) or as images/ (`images -> /etc`).
      if (entry.isSymbolicLink()) {
        const found = await this.fileAt(relative);
        if (found && "refused" in found && found.refused === OUTSIDE) {
          this.report({ file: relative, line: 0, message: `not imported: ${found.refused}` });
          continue;
        }
      }
      const left = leftOut(relative, entry);
      if (left) {
        this.notice(left, entry.isDirectory() ? `${relative}/` : relative);
        continue;
      }
      if (entry.isDirectory()) yield* this.walk(relative, named);
      else if (entry.isFile()) yield relative;
      else if (entry.isSymbolicLink()) {
        // Followed only to a regular file, so a link to a directory can never make a loop.
        const found = await this.fileAt(relative);
        if (found && "size" in found) yield relative;
        else
          this.report({
            file: relative,
            line: 0,
            message: `not imported: ${found?.refused ?? "a symbolic link whose target does not exist"}`,
          });
      } else this.report({ file: relative, line: 0, message: "not imported: not a regular file" });
    }
  }

  async missingFiles(): Promise<string[]> {
    const missing: string[] = [];
    for await (const file of this.files()) if (file.size_bytes === null) missing.push(file.path);
    return missing;
  }

  async *subtaskSpans(): AsyncGenerator<SubtaskSpan> {
    const source = this.facts.subtaskSource;
    if (!source) return;
    const lengths = new Map<number, number>();
    const dataFiles = new Set<string>();
    for await (const { record } of this.records()) {
      lengths.set(record.episode_index, record.length);
      for (const [relative, stream] of this.namedFiles(record))
        if (stream === "data" && !unsafePath(relative)) dataFiles.add(relative);
    }
    const labels = source === "subtask_index" ? await this.subtaskLabels() : undefined;
    if (source === "subtask_index" && !labels) return;

    // Per episode, the moments a subtask starts (label) or annotation stops (null), in frame order.
    const changes = new Map<number, { t: number; label: string | null }[]>();
    const seenPersistent = new Set<number>();
    const last = new Map<number, number | null>();
    for (const relative of dataFiles) {
      const parquet = await this.parquet(relative);
      if (!parquet) continue;
      const columns =
        source === "subtask_index"
          ? ["subtask_index"]
          : ["language_persistent", "language_events"].filter((c) => parquet.columns.includes(c));
      if (!columns.every((c) => parquet.columns.includes(c)) || !columns.length) {
        this.report({
          file: relative,
          line: 0,
          message: `info.json declares ${source === "language" ? "language columns" : "subtask_index"}, but this file has no such column`,
        });
        continue;
      }
      for await (const { first, rows } of this.batches(relative, parquet, ["episode_index", "timestamp", ...columns])) {
        for (const [i, raw] of rows.entries()) {
          this.signal?.throwIfAborted();
          const row = plainValue(raw) as Record<string, unknown>;
          const line = first + i + 1;
          const episode = row.episode_index;
          const t = row.timestamp;
          if (typeof episode !== "number" || !lengths.has(episode)) continue;
          if (typeof t !== "number") {
            this.report({ file: relative, line, message: "timestamp must be a number" });
            continue;
          }
          const list = changes.get(episode) ?? [];
          changes.set(episode, list);
          if (source === "subtask_index") {
            // -1 (or null) marks frames without a subtask; a run of one index is one span.
            const index = typeof row.subtask_index === "number" && row.subtask_index >= 0 ? row.subtask_index : null;
            if (last.has(episode) && last.get(episode) === index) continue;
            last.set(episode, index);
            const label = index === null ? null : labels![index];
            if (label === undefined) {
              this.report({ file: relative, line, message: `subtask_index ${index} is not in ${SUBTASKS_PATH}` });
              list.push({ t, label: null });
            } else list.push({ t, label });
            continue;
          }
          // Persistent rows carry the moment they start and are the same list on every frame of the
          // episode (the first frame's is enough); event rows start at the frame they sit on.
          const persistent = seenPersistent.has(episode)
            ? []
            : languageRows(row.language_persistent).map((entry) => ({ entry, at: entry.timestamp }));
          seenPersistent.add(episode);
          const events = languageRows(row.language_events).map((entry) => ({ entry, at: t as unknown }));
          for (const { entry, at } of [...persistent, ...events]) {
            if (entry.style !== "subtask") continue;
            if (typeof at !== "number")
              this.report({ file: relative, line, message: "a subtask row without a timestamp" });
            else list.push({ t: at, label: typeof entry.content === "string" ? entry.content : "" });
          }
        }
      }
    }
    for (const episode of [...changes.keys()].sort((a, b) => a - b)) {
      const duration = round(lengths.get(episode)! / this.info.fps);
      // A persistent subtask holds until the next one starts, the last one until the episode ends.
      const points = changes
        .get(episode)!
        .map((p) => ({ ...p, t: round(p.t) }))
        .sort((a, b) => a.t - b.t);
      for (const [i, point] of points.entries()) {
        if (point.label === null) continue;
        // A subtask with no label still ends the one before it (a persistent row holds until
        // replaced); a span without a label says nothing, so none is made.
        if (!point.label.trim()) {
          this.notice(
            "subtask rows without a label (empty content): no span, and the subtask before ends there",
            `episode ${episode} at ${point.t} s`,
          );
          continue;
        }
        if (point.t > duration) {
          this.report({
            file: INFO_PATH,
            line: 0,
            message: `episode ${episode}: subtask ${JSON.stringify(point.label.slice(0, 80))} starts at ${point.t} s, after the episode's end (${duration} s)`,
          });
          continue;
        }
        yield {
          episode_index: episode,
          label: point.label,
          start_s: point.t,
          end_s: Math.min(points[i + 1]?.t ?? duration, duration),
        };
      }
    }
  }

  /** Labels by position, as LeRobot resolves them (`subtasks.iloc[subtask_index]`). */
  private async subtaskLabels(): Promise<string[] | undefined> {
    const parquet = await this.parquet(SUBTASKS_PATH);
    if (!parquet) return undefined;
    // pandas writes the label as the frame's index; its metadata names the column.
    const pandas = parquet.metadata.key_value_metadata?.find((kv) => kv.key === "pandas")?.value;
    let column: string | undefined;
    try {
      const index = pandas ? (JSON.parse(pandas) as { index_columns?: unknown[] }).index_columns?.[0] : undefined;
      if (typeof index === "string") column = index;
    } catch {
      // Not pandas metadata after all: fall back to the column names below.
    }
    column ??= ["subtask", "__index_level_0__", "task"].find((c) => parquet.columns.includes(c));
    if (!column || !parquet.columns.includes(column)) {
      this.report({ file: SUBTASKS_PATH, line: 0, message: "no label column (the subtask text) found" });
      return undefined;
    }
    const labels: string[] = [];
    for await (const { rows } of this.batches(SUBTASKS_PATH, parquet, [column]))
      for (const row of rows) labels.push(row[column] === null || row[column] === undefined ? "" : String(row[column]));
    return labels;
  }
}

function camera(key: string, feature: Feature): LeRobotCamera {
  const info = { ...(feature.video_info ?? {}), ...(feature.info ?? {}) };
  const numberAt = (name: string): number | null => {
    const v = info[`video.${name}`];
    if (typeof v === "number") return v;
    const names = Array.isArray(feature.names) ? feature.names : null;
    const at = names?.indexOf(name) ?? -1;
    return (name === "height" || name === "width") && at >= 0 && typeof feature.shape?.[at] === "number"
      ? feature.shape[at]
      : null;
  };
  const codec = info["video.codec"];
  return {
    key,
    storage: feature.dtype === "video" ? "video" : "image",
    codec: typeof codec === "string" ? codec : null,
    height: numberAt("height"),
    width: numberAt("width"),
    fps: typeof info["video.fps"] === "number" ? (info["video.fps"] as number) : null,
  };
}

function languageRows(value: unknown): { style?: unknown; content?: unknown; timestamp?: unknown }[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => !!v && typeof v === "object") : [];
}

/** float32 frame timestamps to whole microseconds: 2.0999999046325684 is 2.1. */
const round = (seconds: number) => Math.round(seconds * 1e6) / 1e6;

/** Why a relative path from the metadata or the directory is refused, or null. */
function unsafePath(relative: string): string | null {
  if (hasUnsafeCharacter(relative)) return `it contains ${UNSAFE_CHARACTERS_DESCRIPTION}`;
  const checked = FilePath.safeParse(relative);
  return checked.success ? null : checked.error.issues[0]!.message;
}

function checkTemplates(info: Info, text: string): Problem[] {
  const problems: Problem[] = [];
  const lineOf = (key: string) => {
    const at = text.indexOf(`"${key}"`);
    return at < 0 ? 1 : text.slice(0, at).split("\n").length;
  };
  const v3 = isV3(info.codebase_version);
  const sample: Record<string, number> = v3
    ? { chunk_index: 0, file_index: 0 }
    : { episode_chunk: 0, episode_index: 0 };
  const video = videoTemplateOf(info);
  const templates: [string, string | null, Record<string, number | string>][] = [
    ["data_path", info.data_path, sample],
    [
      info.video_path !== undefined && info.video_path !== null ? "video_path" : "videos_path",
      videoKeysOf(info).length ? video : null,
      { ...sample, video_key: "camera" },
    ],
  ];
  for (const [key, template, values] of templates) {
    if (template === null) {
      if (key !== "data_path" && videoKeysOf(info).length)
        problems.push({
          file: INFO_PATH,
          line: lineOf("features"),
          message: "video features need a video_path template",
        });
      continue;
    }
    try {
      formatPathTemplate(template, values);
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      problems.push({ file: INFO_PATH, line: lineOf(key), message: `${key}: ${error.message}` });
    }
  }
  return problems;
}

async function listDir(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** Why the walk leaves an entry out with a notice (not a problem), or null. */
function leftOut(relative: string, entry: Dirent): string | null {
  if (entry.name.startsWith("."))
    return "left out: hidden files and directories (names starting with '.'), which are no part of a dataset";
  if (relative === "images" && entry.isDirectory())
    return "left out: images/, LeRobot's frames of a recording in progress (its push_to_hub never uploads them)";
  return null;
}
