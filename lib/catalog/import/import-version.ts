import { createHash, type Hash } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type postgres from "postgres";
import type { z } from "zod";
import type { FacetCounts } from "../../db/schema";
import { parseVersion } from "../semver";
import { canonicalJson } from "../../canonical-json";
import { arrayLiteral, copyRow } from "./copy-text";
import { parseJsonDocument, parseJsonLine } from "./json-document";
import { ImportError, ProblemList } from "./problems";
import { readLines } from "./read-lines";
import {
  AnnotationLine,
  DatasetFile,
  EpisodeLine,
  FileLine,
  VersionFile,
  mediaTypeOf,
  type AnnotationLine as Annotation,
  type EpisodeLine as Episode,
  type FileLine as FileEntry,
} from "./records";
import { crossCheck } from "./cross-check";

export type ImportResult = {
  status: "imported" | "unchanged";
  datasetId: string;
  version: string;
  episodes: number;
  annotations: number;
  files: number;
};

type Tx = postgres.TransactionSql;

type StagedFile<T> = {
  name: string;
  required: boolean;
  schema: z.ZodType<T>;
  table: string;
  columns: string;
  row: (record: T, line: number) => (string | number | boolean | null | undefined)[];
};

const EPISODES: StagedFile<Episode> = {
  name: "episodes.jsonl",
  required: true,
  schema: EpisodeLine,
  table: "stage_episodes",
  columns: "line, episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams",
  row: (e, line) => [line, e.episode_id, e.task, e.environment, e.duration_s, e.outcome, e.has_recovery, e.contributor, arrayLiteral(e.streams)],
};

const ANNOTATIONS: StagedFile<Annotation> = {
  name: "annotations.jsonl",
  required: false,
  schema: AnnotationLine,
  table: "stage_annotations",
  columns: "line, episode_id, label, start_s, end_s, attributes",
  row: (a, line) => [line, a.episode_id, a.label, a.start_s, a.end_s, JSON.stringify(a.attributes ?? {})],
};

const FILES: StagedFile<FileEntry> = {
  name: "files.jsonl",
  required: false,
  schema: FileLine,
  table: "stage_files",
  columns: "line, path, episode_id, stream, size_bytes, sha256, media_type",
  row: (f, line) => [line, f.path, f.episode_id, f.stream, f.size_bytes, f.sha256, mediaTypeOf(f)],
};

/**
 * Imports one dataset version from a directory (docs/import-format.md) in one transaction: every
 * line is validated while it streams into staging tables, cross-record rules are checked in SQL,
 * and only a version without a single problem is written. Released versions are immutable: the
 * same content again is a no-op, different content is refused.
 */
export async function importVersion(sql: postgres.Sql, dir: string): Promise<ImportResult> {
  const problems = new ProblemList();
  const content = createHash("sha256");
  const dataset = await readDocument(dir, "dataset.json", DatasetFile, problems, content);
  const release = await readDocument(dir, "version.json", VersionFile, problems, content);
  for (const file of [EPISODES, ANNOTATIONS, FILES]) {
    if (file.required && !existsSync(path.join(dir, file.name))) problems.add({ file: file.name, line: 0, message: "file is missing" });
  }

  const result = await sql.begin(async (tx) => {
    if (dataset && release) {
      // Two imports of the same version wait for each other instead of racing to insert it.
      await tx`select pg_advisory_xact_lock(hashtext(${`import:${dataset.id}@${release.version}`}))`;
    }
    await createStagingTables(tx);
    const counts = {
      episodes: await stage(tx, dir, EPISODES, problems, content),
      annotations: await stage(tx, dir, ANNOTATIONS, problems, content),
      files: await stage(tx, dir, FILES, problems, content),
    };
    // The cross-checks look episodes up by id once per annotation and file.
    await tx`create index on stage_episodes (episode_id)`;
    await tx`analyze stage_episodes, stage_annotations, stage_files`;
    await crossCheck(tx, problems, dataset?.id);
    if (problems.count || !dataset || !release) throw new ImportError(problems.list(), problems.count);

    const digest = content.digest("hex");
    const summary = { datasetId: dataset.id, version: release.version, ...counts };
    const [existing] = await tx<{ content_sha256: string }[]>`
      select content_sha256 from dataset_versions where dataset_id = ${dataset.id} and version = ${release.version}`;
    if (existing) {
      if (existing.content_sha256 === digest) return { status: "unchanged" as const, ...summary };
      throw new ImportError(
        [{ file: "version.json", line: 1, message: `version ${release.version} of dataset '${dataset.id}' is already released with different content; released versions are immutable, so publish the change as a new version` }],
        1,
      );
    }
    await writeVersion(tx, dataset, release, digest);
    return { status: "imported" as const, ...summary };
  });
  // Fresh statistics right away: until autovacuum gets round to it, the planner would plan
  // filtered pages over a million new rows blind.
  if (result.status === "imported") await sql`analyze episodes, annotations, files`;
  return result;
}

/** The most dataset.json or version.json may hold (docs/import-format.md); lines are capped as in every file. */
export const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

async function readDocument<S extends z.ZodType>(dir: string, name: string, schema: S, problems: ProblemList, content: Hash): Promise<z.infer<S> | undefined> {
  const file = path.join(dir, name);
  if (!existsSync(file)) {
    problems.add({ file: name, line: 0, message: "file is missing" });
    return undefined;
  }
  const lines: string[] = [];
  let bytes = 0;
  let readable = true;
  for await (const line of readLines(file)) {
    bytes += line.bytes + 1;
    if (bytes > MAX_DOCUMENT_BYTES) {
      problems.add({ file: name, line: line.number, message: `file is longer than ${MAX_DOCUMENT_BYTES.toLocaleString("en")} bytes, the limit for ${name}` });
      return undefined;
    }
    if ("problem" in line) {
      problems.add({ file: name, line: line.number, message: line.problem });
      readable = false;
    } else lines.push(line.text);
  }
  if (!readable) return undefined;
  // Joined with LF whatever the file used, so that offsets still fall on the same line numbers.
  const result = parseJsonDocument(name, lines.join("\n"), schema);
  problems.add(...result.problems);
  if (result.value !== undefined) content.update(`${name}\n${canonicalJson(result.value)}\n`);
  return result.value;
}

async function createStagingTables(tx: Tx): Promise<void> {
  await tx`create temp table stage_episodes (
    line int not null, episode_id text collate "C" not null, task text not null, environment text not null,
    duration_s float8 not null, outcome text not null, has_recovery boolean not null, contributor text not null,
    streams text[] not null) on commit drop`;
  await tx`create temp table stage_annotations (
    line int not null, episode_id text collate "C" not null, label text not null, start_s float8 not null,
    end_s float8 not null, attributes jsonb not null) on commit drop`;
  await tx`create temp table stage_files (
    line int not null, path text collate "C" not null, episode_id text collate "C", stream text,
    size_bytes bigint not null, sha256 text not null, media_type text not null) on commit drop`;
}

const COPY_CHUNK_BYTES = 256 * 1024;

/** Streams one JSONL file through validation into its staging table; returns the number of records. */
async function stage<T>(tx: Tx, dir: string, file: StagedFile<T>, problems: ProblemList, content: Hash): Promise<number> {
  const source = path.join(dir, file.name);
  // Named even when absent, so a missing optional file and an empty one hash alike.
  content.update(`${file.name}\n`);
  if (!existsSync(source)) return 0;
  let records = 0;
  async function* rows(): AsyncGenerator<string> {
    let buffer = "";
    for await (const line of readLines(source)) {
      if ("problem" in line) {
        problems.add({ file: file.name, line: line.number, message: line.problem });
        continue;
      }
      const { number: lineNumber, text } = line;
      if (!text.trim()) continue;
      const parsed = parseJsonLine(file.name, lineNumber, text, file.schema);
      if (parsed.value === undefined) {
        problems.add(...parsed.problems);
        continue;
      }
      records++;
      content.update(`${canonicalJson(parsed.value)}\n`);
      buffer += copyRow(file.row(parsed.value, lineNumber));
      if (buffer.length >= COPY_CHUNK_BYTES) {
        yield buffer;
        buffer = "";
      }
    }
    if (buffer) yield buffer;
  }
  // pipeline keeps memory flat (backpressure) and, if reading fails, aborts the COPY (CopyFail) so
  // the transaction can roll back and the read error is what the operator sees.
  await pipeline(rows, await tx.unsafe(`copy ${file.table} (${file.columns}) from stdin`).writable());
  return records;
}

async function writeVersion(tx: Tx, dataset: DatasetFile, release: VersionFile, digest: string): Promise<void> {
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
      total_bytes, streams, facet_counts, content_sha256)
    values (${dataset.id}, ${release.version}, ${semver.major}, ${semver.minor}, ${semver.patch}, ${release.released_at},
      ${totals!.episodes}, ${totals!.files}, ${totals!.bytes}, ${totals!.streams}, ${counts}::jsonb, ${digest})
    returning id`;
  const versionId = version!.id;
  for (const [position, entry] of release.changelog.entries()) {
    await tx`insert into changelog_entries (version_id, position, type, description)
      values (${versionId}, ${position}, ${entry.type}, ${entry.description})`;
  }
  await tx`insert into episodes (version_id, episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams)
    select ${versionId}, episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams
    from stage_episodes order by episode_id`;
  await tx`insert into annotations (version_id, episode_id, label, start_s, end_s, attributes)
    select ${versionId}, episode_id, label, start_s, end_s, attributes from stage_annotations order by line`;
  await tx`insert into files (version_id, path, episode_id, stream, size_bytes, sha256, media_type)
    select ${versionId}, path, episode_id, stream, size_bytes, sha256, media_type from stage_files order by path`;
}

/** Episode counts per outcome, per environment and per pair: the `total` of every filtered page. */
async function facetCounts(tx: Tx): Promise<FacetCounts> {
  const rows = await tx<{ outcome: string; environment: string; n: number }[]>`
    select outcome, environment, count(*)::int as n from stage_episodes group by outcome, environment`;
  const counts: FacetCounts = { outcome: {}, environment: {}, pairs: {} };
  for (const { outcome, environment, n } of rows) {
    counts.outcome[outcome] = (counts.outcome[outcome] ?? 0) + n;
    counts.environment[environment] = (counts.environment[environment] ?? 0) + n;
    counts.pairs[JSON.stringify([outcome, environment])] = n;
  }
  return counts;
}
