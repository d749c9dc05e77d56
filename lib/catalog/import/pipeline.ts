import { createHash, type Hash } from "node:crypto";
import { pipeline } from "node:stream/promises";
import type postgres from "postgres";
import type { z } from "zod";
import { countOf, type FacetCounts, type LeRobotFormatInfo, type SourceFormat } from "../../db/schema";
import { canonicalJson } from "../../canonical-json";
import { parseVersion } from "../semver";
import { arrayLiteral, copyRow } from "./copy-text";
import { crossCheck } from "./cross-check";
import { announceNewVersion } from "../../notices/new-version";
import type { Sql } from "../../db/client";
import { checkRecord, parseJsonLine } from "../../json-document";
import { ImportError, ProblemList, type Problem } from "./problems";
import {
  AnnotationLine,
  EpisodeLine,
  FileEpisodeLine,
  FileLine,
  LocalFileLine,
  mediaTypeOf,
  type DatasetFile,
  type VersionFile,
} from "./records";

/**
 * The one import pipeline, whatever the source: our own import directory (import-version.ts) or a
 * LeRobot dataset (lerobot/source.ts). A source gives its records as streams; every record is
 * checked against the same schemas while it streams through COPY into temporary staging tables,
 * the rules across records run as SQL over them, and only a version without a single problem is
 * written, in the same transaction. Released versions are immutable: the same content again is a
 * no-op, different content is refused.
 */

/** One record of a source: a JSON line, a value read from another format, or what was wrong with it. */
export type SourceItem =
  | { file: string; line: number; text: string }
  | { file: string; line: number; value: unknown }
  | { file: string; line: number; problem: string };

export type RecordStream = {
  /** Hashed into the content digest before the stream's records (a JSONL source: the file's name). */
  name: string;
  items: () => AsyncIterable<SourceItem>;
};

/** A staged file whose sha256 is still to be computed: a local file, hashed (and uploaded) after the checks. */
export type PendingFile = { path: string; size_bytes: number };
export type CompletedFile = { path: string; size_bytes: number; sha256: string };

export type ImportSource = {
  /** The dataset and the version: problems reported, canonical content hashed into `content`. */
  documents(problems: ProblemList, content: Hash): Promise<{ dataset?: DatasetFile; release?: VersionFile }>;
  episodes: RecordStream;
  /** What an episode record must be (default EpisodeLine; a LeRobot source's task may be empty or longer). */
  episodeSchema?: z.ZodType<EpisodeLine>;
  annotations: RecordStream;
  /** `remote`: files.jsonl lines (size and sha256 given); `local`: files of a directory (sha256 computed later, size null if missing). */
  files: RecordStream & { kind: "remote" | "local" };
  /** The episodes of each file, for sources that list them apart from the files. */
  fileEpisodes?: RecordStream;
  /** How problems name the list of episodes ("episode_id 'x' is not in episodes.jsonl"). */
  episodesName: string;
  format: { source: SourceFormat; info: LeRobotFormatInfo | null };
  /** Leave out episodes whose files are missing (and what shares a file with them) instead of refusing. */
  skipIncompleteEpisodes?: boolean;
  /** Import episodes that were withdrawn (their contributor consented again); without it they are refused. */
  allowWithdrawnEpisodes?: boolean;
  /** Stops the import (rolled back) between any two records or files. */
  signal?: AbortSignal;
  /**
   * Hashes (and uploads) the files staged without a sha256, once every check has passed: called
   * with their totals, then with batches in path order; returns each file's size and sha256.
   */
  completeFiles?: (totals: { files: number; bytes: number }) => {
    batch(files: PendingFile[]): Promise<CompletedFile[]>;
    finish(): void;
  };
};

export type SkippedEpisode = { episode_id: string; reason: string };

export type PipelineResult = {
  status: "imported" | "unchanged";
  datasetId: string;
  version: string;
  episodes: number;
  annotations: number;
  files: number;
  /** Episodes left out because a file of theirs is missing (first 200), and how many in all. */
  skipped: SkippedEpisode[];
  skippedCount: number;
  /** Files the metadata names that the directory lacks (first 200), and how many in all. */
  missingFiles: string[];
  missingCount: number;
  /**
   * Organisations told of the new version (a current licence for an earlier one): a notice each,
   * written and queued for delivery in the version's transaction. 0 when unchanged.
   */
  versionNotices: number;
};

type Tx = postgres.TransactionSql;
type Cell = string | number | boolean | null | undefined;

type Stage<T> = {
  table: string;
  columns: string;
  schema: z.ZodType<T>;
  row: (record: T, src: number, line: number) => Cell[];
};

const EPISODES: Stage<EpisodeLine> = {
  table: "stage_episodes",
  schema: EpisodeLine,
  columns: "src, line, episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams",
  row: (e, src, line) => [
    src,
    line,
    e.episode_id,
    e.task,
    e.environment,
    e.duration_s,
    e.outcome,
    e.has_recovery,
    e.contributor,
    arrayLiteral(e.streams),
  ],
};

const ANNOTATIONS: Stage<AnnotationLine> = {
  table: "stage_annotations",
  schema: AnnotationLine,
  columns: "src, line, episode_id, label, start_s, end_s, attributes",
  row: (a, src, line) => [src, line, a.episode_id, a.label, a.start_s, a.end_s, JSON.stringify(a.attributes ?? {})],
};

const FILE_COLUMNS = "src, line, path, episode_id, episodes, stream, size_bytes, sha256, media_type";

const REMOTE_FILES: Stage<FileLine> = {
  table: "stage_files",
  schema: FileLine,
  columns: FILE_COLUMNS,
  row: (f, src, line) => [
    src,
    line,
    f.path,
    f.episode_id,
    f.episode_ids
      ? JSON.stringify(f.episode_ids.map((episode_id) => ({ episode_id })))
      : f.episodes
        ? JSON.stringify(f.episodes)
        : null,
    f.stream,
    f.size_bytes,
    f.sha256,
    mediaTypeOf(f),
  ],
};

const LOCAL_FILES: Stage<LocalFileLine> = {
  table: "stage_files",
  schema: LocalFileLine,
  columns: FILE_COLUMNS,
  row: (f, src, line) => [src, line, f.path, null, null, f.stream, f.size_bytes, f.sha256, mediaTypeOf(f)],
};

const FILE_EPISODES: Stage<FileEpisodeLine> = {
  table: "stage_file_episodes",
  schema: FileEpisodeLine,
  columns: "src, line, path, episode_id, start_s, end_s, from_frame, to_frame",
  row: (r, src, line) => [src, line, r.path, r.episode_id, r.start_s, r.end_s, r.from_frame, r.to_frame],
};

/** The first this many missing files and skipped episodes are listed; all are counted. */
const LISTED = 200;

export async function runImport(sql: postgres.Sql, source: ImportSource): Promise<PipelineResult> {
  const problems = new ProblemList();
  const content = createHash("sha256");
  const { dataset, release } = await source.documents(problems, content);
  // Problems name files; the staging tables keep a number for each. Looked up by name: a LeRobot
  // source names each of its files, and a scan of 100,000 names per record made an import of
  // 100,000 small files quadratic.
  const names: string[] = [];
  const numbers = new Map<string, number>();
  const srcOf = (file: string) => {
    let at = numbers.get(file);
    if (at === undefined) numbers.set(file, (at = names.push(file) - 1));
    return at;
  };

  const result = await sql.begin(async (tx) => {
    if (dataset && release) {
      // Two imports of the same version wait for each other instead of racing to insert it.
      await tx`select pg_advisory_xact_lock(hashtext(${`import:${dataset.id}@${release.version}`}))`;
    }
    await createStagingTables(tx);
    await stage(
      tx,
      source.episodes,
      { ...EPISODES, schema: source.episodeSchema ?? EPISODES.schema },
      problems,
      content,
      srcOf,
      source.signal,
    );
    await stage(tx, source.annotations, ANNOTATIONS, problems, content, srcOf, source.signal);
    if (source.files.kind === "local")
      await stage(tx, source.files, LOCAL_FILES, problems, content, srcOf, source.signal);
    else await stage(tx, source.files, REMOTE_FILES, problems, content, srcOf, source.signal);
    if (source.fileEpisodes)
      await stage(tx, source.fileEpisodes, FILE_EPISODES, problems, content, srcOf, source.signal);
    // files.jsonl names a file's episodes on its own line: one row per episode, at that line.
    await tx`insert into stage_file_episodes (src, line, path, episode_id)
      select src, line, path, episode_id from stage_files where episode_id is not null`;
    await tx`insert into stage_file_episodes (src, line, path, episode_id, start_s, end_s, from_frame, to_frame)
      select f.src, f.line, f.path, x.episode_id, x.start_s, x.end_s, x.from_frame, x.to_frame
      from stage_files f cross join jsonb_to_recordset(f.episodes) as x(episode_id text, start_s float8, end_s float8, from_frame bigint, to_frame bigint)
      where f.episodes is not null`;
    // The cross-checks look episodes and files up by id and path, once per record.
    await tx`create index on stage_episodes (episode_id)`;
    await tx`create index on stage_files (path)`;
    await tx`create index on stage_file_episodes (path)`;
    await tx`create index on stage_file_episodes (episode_id)`;
    await tx`analyze stage_episodes, stage_annotations, stage_files, stage_file_episodes`;

    const incomplete = await missingFiles(tx, problems, source.skipIncompleteEpisodes ?? false);
    await crossCheck(tx, problems, { datasetId: dataset?.id, names, episodesName: source.episodesName });
    if (problems.count || !dataset || !release) throw new ImportError(problems.list(), problems.count);

    await completeFiles(tx, source, problems, content);
    source.signal?.throwIfAborted();
    if (problems.count) throw new ImportError(problems.list(), problems.count);

    const digest = content.digest("hex");
    const [counts] = await tx<{ episodes: number; annotations: number; files: number }[]>`
      select (select count(*)::int from stage_episodes) as episodes, (select count(*)::int from stage_annotations) as annotations,
             (select count(*)::int from stage_files) as files`;
    const summary = { datasetId: dataset.id, version: release.version, ...counts!, ...incomplete };
    const [existing] = await tx<{ content_sha256: string }[]>`
      select content_sha256 from dataset_versions where dataset_id = ${dataset.id} and version = ${release.version}`;
    if (existing) {
      if (existing.content_sha256 === digest) return { status: "unchanged" as const, ...summary, versionNotices: 0 };
      throw new ImportError(
        [
          {
            file: "version.json",
            line: 1,
            message: `version ${release.version} of dataset '${dataset.id}' is already released with different content; released versions are immutable, so publish the change as a new version`,
          },
        ],
        1,
      );
    }
    if (!source.allowWithdrawnEpisodes) await refuseWithdrawnEpisodes(tx, problems, names);
    const versionId = await writeVersion(tx, dataset, release, digest, source.format);
    // The version becomes available when this transaction commits: its notices with it.
    // A transaction takes every query a connection does (its type lacks only the pool's methods).
    const versionNotices = await announceNewVersion(tx as unknown as Sql, versionId);
    return { status: "imported" as const, ...summary, versionNotices };
  });
  // Fresh statistics right away: until autovacuum gets round to it, the planner would plan
  // filtered pages over a million new rows blind.
  if (result.status === "imported") await sql`analyze episodes, annotations, files, file_episodes`;
  return result;
}

/**
 * A withdrawn episode comes back only when the operator says so: a new version holding it would
 * otherwise deliver again what its contributor withdrew.
 */
async function refuseWithdrawnEpisodes(tx: Tx, problems: ProblemList, names: readonly string[]): Promise<void> {
  const rows = await tx<{ src: number; line: number; episode_id: string; n: number }[]>`
    select s.src, s.line, s.episode_id, count(*) over ()::int as n from stage_episodes s
    where exists (select 1 from withdrawn_episodes w where w.episode_id = s.episode_id)
    order by s.src, s.line limit ${LISTED}`;
  if (!rows.length) return;
  problems.addCounted(
    rows.map((r) => ({
      file: names[r.src]!,
      line: r.line,
      message: `episode '${r.episode_id}' was withdrawn; it is imported again only with the explicit option to allow withdrawn episodes (das-admin import --allow-withdrawn), once its contributor has consented anew`,
    })),
    rows[0]!.n,
  );
  throw new ImportError(problems.list(), problems.count);
}

async function createStagingTables(tx: Tx): Promise<void> {
  await tx`create temp table stage_episodes (
    src int not null, line int not null, episode_id text collate "C" not null, task text not null, environment text not null,
    duration_s float8 not null, outcome text not null, has_recovery boolean not null, contributor text not null,
    streams text[] not null) on commit drop`;
  await tx`create temp table stage_annotations (
    src int not null, line int not null, episode_id text collate "C" not null, label text not null, start_s float8 not null,
    end_s float8 not null, attributes jsonb not null) on commit drop`;
  // size_bytes is null for a file the metadata names but the directory lacks; sha256 is null until a local file is hashed.
  await tx`create temp table stage_files (
    src int not null, line int not null, path text collate "C" not null, episode_id text collate "C", episodes jsonb, stream text,
    size_bytes bigint, sha256 text, media_type text not null) on commit drop`;
  await tx`create temp table stage_file_episodes (
    src int not null, line int not null, path text collate "C" not null, episode_id text collate "C" not null,
    start_s float8, end_s float8, from_frame bigint, to_frame bigint) on commit drop`;
}

const COPY_CHUNK_BYTES = 256 * 1024;

/** Streams one source stream through validation into its staging table; returns the number of records. */
async function stage<T>(
  tx: Tx,
  stream: RecordStream,
  table: Stage<T>,
  problems: ProblemList,
  content: Hash,
  srcOf: (file: string) => number,
  signal?: AbortSignal,
): Promise<number> {
  // Named even when empty, so a missing optional file and an empty one hash alike.
  content.update(`${stream.name}\n`);
  let records = 0;
  async function* rows(): AsyncGenerator<string> {
    let buffer = "";
    for await (const item of stream.items()) {
      signal?.throwIfAborted();
      if ("problem" in item) {
        problems.add({ file: item.file, line: item.line, message: item.problem });
        continue;
      }
      const checked =
        "text" in item
          ? parseJsonLine(item.file, item.line, item.text, table.schema)
          : checkRecord(item.file, item.line, item.value, table.schema);
      if (checked.value === undefined) {
        problems.add(...checked.problems);
        continue;
      }
      records++;
      content.update(`${canonicalJson(checked.value)}\n`);
      buffer += copyRow(table.row(checked.value, srcOf(item.file), item.line));
      if (buffer.length >= COPY_CHUNK_BYTES) {
        yield buffer;
        buffer = "";
      }
    }
    if (buffer) yield buffer;
  }
  // pipeline keeps memory flat (backpressure) and, if reading fails, aborts the COPY (CopyFail) so
  // the transaction can roll back and the read error is what the operator sees.
  await pipeline(rows, await tx.unsafe(`copy ${table.table} (${table.columns}) from stdin`).writable());
  return records;
}

/**
 * Files the source names but could not find. Each is a problem, unless incomplete episodes are to
 * be skipped: then every episode with a missing file is left out, with every file that holds one
 * of them (a version never serves bytes of an episode it does not list), and so on for the
 * episodes those files held, until nothing changes. A missing file of no episode is always a problem.
 */
async function missingFiles(
  tx: Tx,
  problems: ProblemList,
  skip: boolean,
): Promise<
  Omit<PipelineResult, "status" | "datasetId" | "version" | "episodes" | "annotations" | "files" | "versionNotices">
> {
  const [missing] = await tx<{ n: number; listed: string[] }[]>`
    select count(*)::int as n, coalesce((select array_agg(path order by path) from (select path from stage_files where size_bytes is null order by path limit ${LISTED}) m), '{}') as listed
    from stage_files where size_bytes is null`;
  const none = { skipped: [], skippedCount: 0, missingFiles: [], missingCount: 0 };
  if (!missing!.n) return none;
  const reportAll = async (where: postgres.PendingQuery<postgres.Row[]>) => {
    const rows = await tx<{ path: string; total: number }[]>`
      select path, count(*) over ()::int as total from stage_files f where size_bytes is null and ${where} order by path limit ${LISTED}`;
    problems.addCounted(
      rows.map((r) => ({
        file: r.path,
        line: 0,
        message: "file is missing: the metadata names it, but the directory does not hold it",
      })),
      rows[0]?.total ?? 0,
    );
  };
  if (!skip) {
    await reportAll(tx`true`);
    return { ...none, missingFiles: missing!.listed, missingCount: missing!.n };
  }
  await reportAll(tx`not exists (select 1 from stage_file_episodes fe where fe.path = f.path)`);
  await tx`create temp table skip_episodes (episode_id text collate "C" primary key, reason text not null) on commit drop`;
  await tx`insert into skip_episodes (episode_id, reason)
    select distinct on (fe.episode_id) fe.episode_id, format('%s is missing', fe.path)
    from stage_file_episodes fe join stage_files f on f.path = fe.path where f.size_bytes is null
    order by fe.episode_id, fe.path`;
  for (;;) {
    const added = await tx`insert into skip_episodes (episode_id, reason)
      select distinct on (other.episode_id) other.episode_id, format('%s also holds skipped episode %s', other.path, s.episode_id)
      from skip_episodes s join stage_file_episodes fe on fe.episode_id = s.episode_id
      join stage_file_episodes other on other.path = fe.path
      where not exists (select 1 from skip_episodes k where k.episode_id = other.episode_id)
      order by other.episode_id, other.path
      on conflict do nothing`;
    if (!added.count) break;
  }
  await tx`delete from stage_files f where f.size_bytes is null
    or exists (select 1 from stage_file_episodes fe join skip_episodes s on s.episode_id = fe.episode_id where fe.path = f.path)`;
  await tx`delete from stage_file_episodes fe where not exists (select 1 from stage_files f where f.path = fe.path)`;
  await tx`delete from stage_episodes e using skip_episodes s where s.episode_id = e.episode_id`;
  await tx`delete from stage_annotations a using skip_episodes s where s.episode_id = a.episode_id`;
  const [skipped] = await tx<{ n: number }[]>`select count(*)::int as n from skip_episodes`;
  const listed = await tx<
    SkippedEpisode[]
  >`select episode_id, reason from skip_episodes order by episode_id limit ${LISTED}`;
  return { skipped: [...listed], skippedCount: skipped!.n, missingFiles: missing!.listed, missingCount: missing!.n };
}

const COMPLETION_BATCH = 1000;

/** The sha256 of every file staged without one (local files), computed by the source; hashed into the content in path order. */
async function completeFiles(tx: Tx, source: ImportSource, problems: ProblemList, content: Hash): Promise<void> {
  const [totals] = await tx<{ files: number; bytes: number }[]>`
    select count(*)::int as files, coalesce(sum(size_bytes), 0)::float8 as bytes from stage_files where sha256 is null`;
  if (!totals!.files) return;
  if (!source.completeFiles) throw new Error("the source staged files without a sha256 but cannot compute them");
  const completer = source.completeFiles(totals!);
  let after = "";
  try {
    for (;;) {
      const batch = await tx<PendingFile[]>`
        select path, size_bytes::float8 as size_bytes from stage_files where sha256 is null and path > ${after} order by path limit ${COMPLETION_BATCH}`;
      if (!batch.length) break;
      source.signal?.throwIfAborted();
      after = batch.at(-1)!.path;
      const done = await completer.batch([...batch]);
      const staged = new Map(batch.map((f) => [f.path, f.size_bytes]));
      const changed: Problem[] = done
        .filter((f) => staged.get(f.path) !== f.size_bytes)
        .map((f) => ({
          file: f.path,
          line: 0,
          message: `the file changed while it was imported (${staged.get(f.path)} bytes when listed, ${f.size_bytes} when read)`,
        }));
      problems.add(...changed);
      await tx`update stage_files s set sha256 = d.sha256
        from unnest(${done.map((f) => f.path)}::text[], ${done.map((f) => f.sha256)}::text[]) as d(path, sha256)
        where s.path = d.path`;
    }
  } finally {
    completer.finish();
  }
  // In path order, whatever order the files were read in: the same files give the same digest.
  content.update("sha256\n");
  after = "";
  for (;;) {
    const rows = await tx<{ path: string; sha256: string | null }[]>`
      select path, sha256 from stage_files where path > ${after} order by path limit 10000`;
    if (!rows.length) break;
    for (const row of rows) content.update(`${row.path}\t${row.sha256}\n`);
    after = rows.at(-1)!.path;
  }
}

async function writeVersion(
  tx: Tx,
  dataset: DatasetFile,
  release: VersionFile,
  digest: string,
  format: ImportSource["format"],
): Promise<number> {
  const semver = parseVersion(release.version)!;
  await tx`
    insert into datasets (id, title, description) values (${dataset.id}, ${dataset.title}, ${dataset.description})
    on conflict (id) do update set title = excluded.title, description = excluded.description, updated_at = now()`;
  const [totals] = await tx<{ episodes: number; files: number; bytes: string; streams: string[] }[]>`
    select (select count(*)::int from stage_episodes) as episodes,
           (select count(*)::int from stage_files) as files,
           (select coalesce(sum(size_bytes), 0)::text from stage_files) as bytes,
           (select coalesce(array_agg(distinct s order by s), '{}') from stage_episodes, unnest(streams) s) as streams`;
  const counts = JSON.stringify(await facetCounts(tx));
  const [version] = await tx<{ id: string }[]>`
    insert into dataset_versions (dataset_id, version, major, minor, patch, released_at, episode_count, file_count,
      total_bytes, streams, facet_counts, content_sha256, source_format, format_info)
    values (${dataset.id}, ${release.version}, ${semver.major}, ${semver.minor}, ${semver.patch}, ${release.released_at},
      ${totals!.episodes}, ${totals!.files}, ${totals!.bytes}, ${totals!.streams}, ${counts}::jsonb, ${digest},
      ${format.source}, ${format.info === null ? null : JSON.stringify(format.info)}::jsonb)
    returning id`;
  const versionId = Number(version!.id);
  for (const [position, entry] of release.changelog.entries()) {
    await tx`insert into changelog_entries (version_id, position, type, description)
      values (${versionId}, ${position}, ${entry.type}, ${entry.description})`;
  }
  await tx`insert into episodes (version_id, episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams)
    select ${versionId}, episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams
    from stage_episodes order by episode_id`;
  // Every combination of the categorical filters with its count: the totals of filtered pages (migration 0021).
  await tx`insert into episode_facets (version_id, outcome, environment, task, contributor, has_recovery, episodes)
    select ${versionId}, outcome, environment, task, contributor, has_recovery, count(*)::int
    from stage_episodes group by outcome, environment, task, contributor, has_recovery`;
  await tx`insert into annotations (version_id, episode_id, label, start_s, end_s, attributes)
    select ${versionId}, episode_id, label, start_s, end_s, attributes from stage_annotations order by src, line`;
  // files.episode_id: the episode when the file holds exactly one, for the API's `episode_id`.
  await tx`insert into files (version_id, path, episode_id, stream, size_bytes, sha256, media_type)
    select ${versionId}, f.path, one.episode_id, f.stream, f.size_bytes, f.sha256, f.media_type
    from stage_files f
    left join lateral (select min(fe.episode_id) as episode_id from stage_file_episodes fe where fe.path = f.path having count(*) = 1) one on true
    order by f.path`;
  // A file of its own holds its episode from 0 to the episode's end, unless the source said otherwise.
  await tx`insert into file_episodes (version_id, path, episode_id, start_s, end_s, from_frame, to_frame)
    select ${versionId}, fe.path, fe.episode_id,
           coalesce(fe.start_s, case when fe.holds = 1 then 0 end), coalesce(fe.end_s, case when fe.holds = 1 then e.duration_s end),
           fe.from_frame, fe.to_frame
    from (select *, count(*) over (partition by path) as holds from stage_file_episodes) fe
    join stage_episodes e on e.episode_id = fe.episode_id
    order by fe.path, fe.episode_id`;
  return versionId;
}

/** Episode counts per outcome, per environment and per pair: the `total` of every filtered page. */
async function facetCounts(tx: Tx): Promise<FacetCounts> {
  const rows = await tx<{ outcome: string; environment: string; n: number }[]>`
    select outcome, environment, count(*)::int as n from stage_episodes group by outcome, environment`;
  // Without a prototype, so that an outcome named `__proto__` is counted as any other.
  const counts: FacetCounts = {
    outcome: Object.create(null),
    environment: Object.create(null),
    pairs: Object.create(null),
  };
  for (const { outcome, environment, n } of rows) {
    counts.outcome[outcome] = countOf(counts.outcome, outcome) + n;
    counts.environment[environment] = countOf(counts.environment, environment) + n;
    counts.pairs[JSON.stringify([outcome, environment])] = n;
  }
  return counts;
}
