import path from "node:path";
import type postgres from "postgres";
import { z } from "zod";
import { canonicalJson } from "../../../canonical-json";
import type { LeRobotFormatInfo } from "../../../db/schema";
import { videoKeysOf } from "../../../lerobot/format";
import { fileUploader, type ProgressSink, type StoreTarget, type UploadTally } from "../upload";
import { checkRecord, parseJsonLine, type Problem } from "../../../json-document";
import { runImport, type ImportSource, type PipelineResult, type SourceItem } from "../pipeline";
import { ImportError } from "../problems";
import { readDocument } from "../../../read-document";
import { readLines } from "../../../read-lines";
import {
  characterCount,
  DatasetFile,
  EpisodeLine,
  LeRobotEpisodeLine,
  MAX_TEXT_CHARACTERS,
  VersionFile,
} from "../records";
import { LeRobotFormatError, openLeRobotDataset, type LeRobotDataset, type Notice } from "../../../lerobot/dataset";

/**
 * A LeRobot dataset directory (codebase v2.0, v2.1 or v3.0) as a source of the import pipeline:
 * the reader's episodes, files and subtask spans mapped onto the catalog's records, which then go
 * through exactly the checks and the write path of any import (docs/lerobot.md).
 *
 * - episode_id: `<dataset>-<episode_index as 6 digits>`, stable across versions of the dataset;
 *   task: the episode's tasks joined with "; "; duration_s: length / fps; streams: the video
 *   cameras and `data` (the frame parquet, which also holds image cameras).
 * - outcome, environment, contributor, has_recovery: from the --episode-metadata sidecar, else
 *   from same-named fields of the episode record, else the command's defaults, else `unknown` /
 *   `false`; the result says how many episodes took each.
 * - annotations: LeRobot's subtask language annotations, and an annotations.jsonl of ours.
 * - files: every file of the directory at its path, hashed (and uploaded) after the checks.
 */

export type LeRobotImportOptions = {
  dir: string;
  datasetId: string;
  version: string;
  /** Left out: a new dataset is titled with its id; an existing one keeps its title and description. */
  title?: string;
  description?: string;
  /** ISO 8601 with a time zone. Left out: the released version's own time on a re-import, else now. */
  releasedAt?: string;
  /** A JSON file holding the changelog entries (as in version.json). */
  changelogFile?: string;
  /** JSON Lines: {"episode_index", "outcome"?, "environment"?, "contributor"?, "has_recovery"?}. */
  episodeMetadataFile?: string;
  /** JSON Lines in our annotations.jsonl format, each keyed by episode_index or episode_id. */
  annotationsFile?: string;
  defaults?: { outcome?: string; environment?: string; contributor?: string };
  skipIncompleteEpisodes?: boolean;
  /** Import episodes that were withdrawn; without it they are refused. */
  allowWithdrawnEpisodes?: boolean;
  /** Put every file into the store (before the catalog is committed); without it the files must be there already. */
  upload?: StoreTarget;
  concurrency?: number;
  /** A progress display while files are hashed or uploaded, given their totals. */
  progress?: (totals: { files: number; bytes: number }) => ProgressSink;
  signal?: AbortSignal;
  /** Told after each file is hashed or stored. */
  onFile?: Parameters<typeof fileUploader>[0]["onFile"];
};

const FIELDS = ["outcome", "environment", "contributor", "has_recovery"] as const;
type Field = (typeof FIELDS)[number];
/** Where each episode's value of a field came from. */
export type DefaultsTally = Record<Field, { metadata: number; record: number; option: number; fallback: number }>;

export type LeRobotImportResult = PipelineResult & {
  codebaseVersion: string;
  defaults: DefaultsTally;
  /** What was left out or taken as it is with a warning (not refused): each with a count and the first places. */
  notices: Notice[];
  /** What --upload did, or what hashing did without it. */
  transfer: UploadTally | null;
};

export const episodeIdOf = (datasetId: string, episodeIndex: number) =>
  `${datasetId}-${String(episodeIndex).padStart(6, "0")}`;

/** Where problems with the values given as options are reported. */
const COMMAND_LINE = "(command line)";

const FALLBACK = { outcome: "unknown", environment: "unknown", contributor: "unknown", has_recovery: false } as const;

const count = z
  .number("episode_index must be a number")
  .int("episode_index must be a whole number")
  .min(0, "episode_index must be at least 0");
const MetadataLine = z.strictObject({
  episode_index: count,
  outcome: EpisodeLine.shape.outcome.optional(),
  environment: EpisodeLine.shape.environment.optional(),
  contributor: EpisodeLine.shape.contributor.optional(),
  has_recovery: EpisodeLine.shape.has_recovery.optional(),
});
type MetadataLine = z.infer<typeof MetadataLine>;

/** Imports a LeRobot dataset directory as one version; the same guarantees as every import (pipeline.ts). */
export async function importLeRobotVersion(
  sql: postgres.Sql,
  options: LeRobotImportOptions,
): Promise<LeRobotImportResult> {
  let dataset: LeRobotDataset;
  const reported = new Set<string>();
  const queue: Problem[] = [];
  try {
    // The reader reads the metadata again in each pass and reports a bad record each time: once is enough.
    dataset = await openLeRobotDataset(options.dir, {
      signal: options.signal,
      onProblem: (problem) => {
        const key = `${problem.file}\0${problem.line}\0${problem.message}`;
        if (reported.size < 100_000) {
          if (reported.has(key)) return;
          reported.add(key);
        }
        queue.push(problem);
      },
    });
  } catch (error) {
    if (error instanceof LeRobotFormatError) throw new ImportError(error.problems, error.problems.length);
    throw error;
  }
  const source = new LeRobotSource(sql, options, dataset, queue);
  const result = await runImport(sql, source.asImportSource());
  return {
    ...result,
    codebaseVersion: dataset.facts.codebaseVersion,
    defaults: source.tally,
    notices: [...dataset.notices, ...source.notices],
    transfer: source.transfer,
  };
}

class LeRobotSource {
  readonly tally: DefaultsTally = Object.fromEntries(
    FIELDS.map((f) => [f, { metadata: 0, record: 0, option: 0, fallback: 0 }]),
  ) as DefaultsTally;
  transfer: UploadTally | null = null;
  readonly notices: Notice[] = [];
  /** Episodes without a task: how many, and where the first were read. */
  private readonly withoutTask = { count: 0, examples: [] as string[] };
  private readonly streams: string[];

  constructor(
    private readonly sql: postgres.Sql,
    private readonly options: LeRobotImportOptions,
    private readonly dataset: LeRobotDataset,
    private readonly queue: Problem[],
  ) {
    this.streams = [...videoKeysOf(dataset.info), "data"].sort();
  }

  private episodeId = (index: number) => episodeIdOf(this.options.datasetId, index);

  /** The reader's problems so far, as items of whichever stream is being read. */
  private *drain(): Generator<SourceItem> {
    while (this.queue.length) {
      const p = this.queue.shift()!;
      yield { file: p.file, line: p.line, problem: p.message };
    }
  }

  asImportSource(): ImportSource {
    const facts = this.dataset.facts;
    const info: LeRobotFormatInfo = {
      codebase_version: facts.codebaseVersion,
      robot_type: facts.robotType,
      fps: facts.fps,
      total_frames: facts.totalFrames,
      cameras: facts.cameras.map((c) => ({
        key: c.key,
        storage: c.storage,
        codec: c.codec,
        height: c.height,
        width: c.width,
        fps: c.fps,
      })),
    };
    return {
      documents: async (problems, content) => {
        // The version's frames are its episodes' (info.json's total may be stale); the same object
        // is what the version's facts are written from.
        info.total_frames = (await this.dataset.totals()).frames;
        const { dataset, release, hashed } = await this.documents(problems);
        content.update(`lerobot\n${canonicalJson({ ...hashed, format: info })}\n`);
        return { dataset, release };
      },
      episodes: { name: "episodes", items: () => this.episodes() },
      episodeSchema: LeRobotEpisodeLine,
      annotations: { name: "annotations", items: () => this.annotations() },
      files: { name: "files", kind: "local", items: () => this.files() },
      fileEpisodes: { name: "file episodes", items: () => this.fileEpisodes() },
      episodesName: "the dataset's episode metadata",
      format: { source: "lerobot", info },
      signal: this.options.signal,
      skipIncompleteEpisodes: this.options.skipIncompleteEpisodes,
      allowWithdrawnEpisodes: this.options.allowWithdrawnEpisodes,
      completeFiles: (totals) => {
        const uploader = fileUploader(
          {
            dir: this.options.dir,
            localPath: (relative) => this.dataset.realPathOf(relative),
            store: this.options.upload,
            concurrency: this.options.concurrency,
            progress: this.options.progress,
            signal: this.options.signal,
            onFile: this.options.onFile,
          },
          totals,
        );
        this.transfer = uploader.tally;
        return uploader;
      },
    };
  }

  /**
   * dataset.json and version.json from the command's options. An option left out means "as it
   * is": the dataset's title and description and the version's release time as stored, so the same
   * command again, with or without them, is an unchanged re-import.
   */
  private async documents(problems: { add(...p: Problem[]): void }) {
    const o = this.options;
    const [existing] = await this.sql<{ title: string; description: string; released_at: Date | null }[]>`
      select d.title, d.description, v.released_at from datasets d
      left join dataset_versions v on v.dataset_id = d.id and v.version = ${o.version}
      where d.id = ${o.datasetId}`;
    const datasetValue = {
      id: o.datasetId,
      title: o.title ?? existing?.title ?? o.datasetId,
      description: o.description ?? existing?.description ?? "",
    };
    const datasetChecked = checkRecord(COMMAND_LINE, 0, datasetValue, DatasetFile);
    problems.add(...datasetChecked.problems);

    let changelog: unknown = [];
    if (o.changelogFile) {
      // As version.json's own changelog is read: a size limit, invalid UTF-8 refused at its line.
      changelog =
        (await readDocument(o.changelogFile, path.basename(o.changelogFile), VersionFile.shape.changelog, problems))
          .value ?? [];
    }
    // Whole seconds, as an operator would write it.
    const releasedAt =
      o.releasedAt ??
      existing?.released_at?.toISOString() ??
      new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
    const releaseChecked = checkRecord(
      COMMAND_LINE,
      0,
      { version: o.version, released_at: releasedAt, changelog },
      VersionFile,
    );
    problems.add(...releaseChecked.problems);
    return {
      dataset: datasetChecked.value,
      release: releaseChecked.value,
      hashed: {
        dataset: datasetChecked.value ?? null,
        // The instant, however it was written: a re-import without --released-at reads it back from the database.
        release: releaseChecked.value
          ? { ...releaseChecked.value, released_at: new Date(releaseChecked.value.released_at).toISOString() }
          : null,
      },
    };
  }

  private async *episodes(): AsyncGenerator<SourceItem> {
    const metadata = await this.readMetadata();
    const defaults = this.options.defaults ?? {};
    // Sidecar lines no episode has used (memory as large as the sidecar, not the dataset).
    const unmatched = new Map(metadata.lines);
    for await (const { episode, file, line } of this.dataset.locatedEpisodes()) {
      yield* this.drain();
      unmatched.delete(episode.episode_index);
      const sidecar = metadata.records.get(episode.episode_index);
      const value = (field: Field): unknown => {
        const tally = this.tally[field];
        if (sidecar?.[field] !== undefined) {
          tally.metadata++;
          return sidecar[field];
        }
        if (episode.extra[field] !== undefined && episode.extra[field] !== null) {
          tally.record++;
          return episode.extra[field];
        }
        if (field !== "has_recovery" && defaults[field] !== undefined) {
          tally.option++;
          return defaults[field];
        }
        tally.fallback++;
        return FALLBACK[field];
      };
      // Each task is free text of up to MAX_TEXT_CHARACTERS; several may add up to more.
      const long = episode.tasks.findIndex(
        (task) => task.length > MAX_TEXT_CHARACTERS && characterCount(task) > MAX_TEXT_CHARACTERS,
      );
      // The episode is still staged, so that the files naming it are not reported as well.
      if (long >= 0)
        yield {
          file,
          line,
          problem: `tasks[${long}] must be at most ${MAX_TEXT_CHARACTERS.toLocaleString("en")} characters`,
        };
      // An episode with no task (none listed, or only blank ones) is still an episode: its task is
      // empty, and the summary counts them. Any other list is joined byte for byte.
      let task = episode.tasks.join("; ");
      if (!task.trim()) {
        task = "";
        if (this.withoutTask.count++ < 5) this.withoutTask.examples.push(`${file}:${line}`);
      }
      yield {
        file,
        line,
        value: {
          episode_id: this.episodeId(episode.episode_index),
          task,
          environment: value("environment"),
          duration_s: episode.duration_s,
          outcome: value("outcome"),
          has_recovery: value("has_recovery"),
          contributor: value("contributor"),
          streams: this.streams,
        },
      };
    }
    yield* this.drain();
    if (this.withoutTask.count)
      this.notices.push({
        message: "episodes without a task (their tasks are none or blank): imported with an empty task",
        ...this.withoutTask,
      });
    yield* metadata.problems;
    for (const [index, where] of unmatched)
      yield { file: where.file, line: where.line, problem: `episode_index ${index} is not an episode of the dataset` };
  }

  /** The --episode-metadata sidecar, checked line by line (the same rules as an episode's fields). */
  private async readMetadata() {
    const records = new Map<number, MetadataLine>();
    const lines = new Map<number, { file: string; line: number }>();
    const problems: SourceItem[] = [];
    const file = this.options.episodeMetadataFile;
    if (!file) return { records, lines, problems };
    const name = path.basename(file);
    for await (const item of jsonlItems(file, name)) {
      if (!("text" in item)) {
        problems.push(item);
        continue;
      }
      const parsed = parseJsonLine(name, item.line, item.text, MetadataLine);
      if (!parsed.value) {
        problems.push(...parsed.problems.map((p) => ({ file: p.file, line: p.line, problem: p.message })));
        continue;
      }
      const first = lines.get(parsed.value.episode_index);
      if (first) {
        problems.push({
          file: name,
          line: item.line,
          problem: `episode_index ${parsed.value.episode_index} appears again (first on line ${first.line})`,
        });
        continue;
      }
      records.set(parsed.value.episode_index, parsed.value);
      lines.set(parsed.value.episode_index, { file: name, line: item.line });
    }
    return { records, lines, problems };
  }

  private async *annotations(): AsyncGenerator<SourceItem> {
    let span = 0;
    for await (const s of this.dataset.subtaskSpans()) {
      yield* this.drain();
      span++;
      // The reader rounds times to microseconds; a span of LeRobot's own has no attributes.
      yield {
        file: "subtask annotations",
        line: span,
        value: { episode_id: this.episodeId(s.episode_index), label: s.label, start_s: s.start_s, end_s: s.end_s },
      };
    }
    yield* this.drain();
    const file = this.options.annotationsFile;
    if (!file) return;
    const name = path.basename(file);
    for await (const item of jsonlItems(file, name)) {
      if (!("text" in item)) {
        yield item;
        continue;
      }
      let json: unknown;
      try {
        json = JSON.parse(item.text);
      } catch (error) {
        yield { file: name, line: item.line, problem: `invalid JSON (${(error as Error).message})` };
        continue;
      }
      // Keyed by episode_index (turned into our episode id) or by episode_id; the rest is annotations.jsonl's line.
      if (json && typeof json === "object" && !Array.isArray(json) && "episode_index" in json) {
        const { episode_index, ...rest } = json as Record<string, unknown>;
        if ("episode_id" in rest) {
          yield { file: name, line: item.line, problem: "give episode_index or episode_id, not both" };
          continue;
        }
        const index = count.safeParse(episode_index);
        if (!index.success) {
          yield { file: name, line: item.line, problem: index.error.issues[0]!.message };
          continue;
        }
        json = { episode_id: this.episodeId(index.data), ...rest };
      }
      yield { file: name, line: item.line, value: json };
    }
  }

  private async *files(): AsyncGenerator<SourceItem> {
    for await (const f of this.dataset.files({ withEpisodes: false })) {
      yield* this.drain();
      yield { file: f.path, line: 0, value: { path: f.path, stream: f.stream, size_bytes: f.size_bytes } };
    }
    yield* this.drain();
  }

  private async *fileEpisodes(): AsyncGenerator<SourceItem> {
    for await (const { path: p, range, file, line } of this.dataset.episodeFiles()) {
      yield* this.drain();
      yield {
        file,
        line,
        value: {
          path: p,
          episode_id: this.episodeId(range.episode_index),
          start_s: range.from_timestamp ?? null,
          end_s: range.to_timestamp ?? null,
          from_frame: range.dataset_from_index ?? null,
          to_frame: range.dataset_to_index ?? null,
        },
      };
    }
    yield* this.drain();
  }
}

/** The non-blank lines of a JSONL file given on the command line, or why it cannot be read. */
async function* jsonlItems(
  file: string,
  name: string,
): AsyncGenerator<{ file: string; line: number; text: string } | { file: string; line: number; problem: string }> {
  try {
    for await (const line of readLines(file)) {
      if ("problem" in line) yield { file: name, line: line.number, problem: line.problem };
      else if (line.text.trim()) yield { file: name, line: line.number, text: line.text };
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    yield {
      file: name,
      line: 0,
      problem: code === "ENOENT" ? "file is missing" : `cannot be read (${(error as Error).message})`,
    };
  }
}
