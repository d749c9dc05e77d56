import type { Hash } from "node:crypto";
import type postgres from "postgres";
import type { z } from "zod";
import { canonicalJson } from "../../canonical-json";
import { linkRoots, locate, type Located } from "../../local-path";
import { runImport, type ImportSource, type PipelineResult, type RecordStream, type SourceItem } from "./pipeline";
import type { ProblemList } from "./problems";
import { readDocument } from "../../read-document";
import { readLines } from "../../read-lines";
import { DatasetFile, VersionFile } from "./records";

/** What an import directory's import reports: the pipeline's result without the LeRobot-only skipped episodes. */
export type ImportResult = Pick<
  PipelineResult,
  "status" | "datasetId" | "version" | "episodes" | "annotations" | "files" | "versionNotices"
>;

/**
 * Imports one dataset version from an import directory (docs/import-format.md) in one transaction,
 * through the import pipeline (pipeline.ts): every line is validated while it streams into staging
 * tables, cross-record rules are checked in SQL, and only a version without a single problem is
 * written. Released versions are immutable: the same content again is a no-op, different content
 * is refused.
 */
export async function importVersion(
  sql: postgres.Sql,
  dir: string,
  options: { allowWithdrawnEpisodes?: boolean } = {},
): Promise<ImportResult> {
  const { status, datasetId, version, episodes, annotations, files, versionNotices } = await runImport(sql, {
    ...importDirectory(dir),
    allowWithdrawnEpisodes: options.allowWithdrawnEpisodes,
  });
  return { status, datasetId, version, episodes, annotations, files, versionNotices };
}

/** An import directory as a source of records: dataset.json, version.json and three JSONL files. */
export function importDirectory(dir: string): ImportSource {
  // Each file is read where it really is, and only inside the directory: a link to anywhere else
  // (`episodes.jsonl -> /etc/passwd`) would put that file's lines into the problems reported.
  let roots: Promise<string[]> | undefined;
  const place = async (name: string) => {
    roots ??= linkRoots(dir);
    const inside = await roots;
    return locate(inside[0]!, name, inside);
  };
  const lines = (name: string, required: boolean): RecordStream => ({
    name,
    items: () => jsonLines(place(name), name, required),
  });
  return {
    async documents(problems, content) {
      const dataset = await readImportDocument(place, "dataset.json", DatasetFile, problems, content);
      const release = await readImportDocument(place, "version.json", VersionFile, problems, content);
      return { dataset, release };
    },
    episodes: lines("episodes.jsonl", true),
    annotations: lines("annotations.jsonl", false),
    files: { ...lines("files.jsonl", false), kind: "remote" },
    episodesName: "episodes.jsonl",
    format: { source: "jsonl", info: null },
  };
}

/** The non-blank lines of a JSONL file; a missing optional file is the same as an empty one. */
async function* jsonLines(
  placed: Promise<Located | null>,
  name: string,
  required: boolean,
): AsyncGenerator<SourceItem> {
  const found = await placed;
  if (found && "refused" in found) {
    yield { file: name, line: 0, problem: `not read: ${found.refused}` };
    return;
  }
  if (!found) {
    if (required) yield { file: name, line: 0, problem: "file is missing" };
    return;
  }
  if (!found.stats.isFile()) {
    yield { file: name, line: 0, problem: "not a regular file" };
    return;
  }
  for await (const line of readLines(found.real)) {
    if ("problem" in line) yield { file: name, line: line.number, problem: line.problem };
    else if (line.text.trim()) yield { file: name, line: line.number, text: line.text };
  }
}

/** dataset.json or version.json, its canonical value hashed into the content digest. */
async function readImportDocument<S extends z.ZodType>(
  place: (name: string) => Promise<Located | null>,
  name: string,
  schema: S,
  problems: ProblemList,
  content: Hash,
): Promise<z.infer<S> | undefined> {
  const found = await place(name);
  if (found && "refused" in found) {
    problems.add({ file: name, line: 0, message: `not read: ${found.refused}` });
    return undefined;
  }
  if (!found) {
    problems.add({ file: name, line: 0, message: "file is missing" });
    return undefined;
  }
  const { value } = await readDocument(found.real, name, schema, problems);
  if (value !== undefined) content.update(`${name}\n${canonicalJson(value)}\n`);
  return value;
}
