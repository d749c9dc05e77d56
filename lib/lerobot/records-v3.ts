/**
 * Episode records of a v3.0 dataset: the rows of meta/episodes/chunk-XXX/file-YYY.parquet, each
 * with where its frames and videos lie in the files it shares with other episodes.
 */
import path from "node:path";
import { z } from "zod";
import { describeIssue } from "../json-document";
import { datasetBatches, openDatasetParquet } from "./dataset-parquet";
import { count, EpisodeRecord, type Located, OWNER_FIELDS } from "./episode-record";
import type { Findings } from "./findings";
import { type Info, plainValue, V3_EPISODES_DIR, videoKeysOf } from "./format";
import { type DatasetDirectory, listDir } from "./walk";

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

/** Every episode row that reads as a record, file by file; each other row reported at its number. */
export async function* v3Records(directory: DatasetDirectory, info: Info, findings: Findings): AsyncGenerator<Located> {
  const files = await v3EpisodeFiles(directory, findings);
  if (!files.length)
    findings.report({
      file: V3_EPISODES_DIR,
      line: 0,
      message: "no episode metadata (meta/episodes/chunk-XXX/file-YYY.parquet) found",
    });
  const videoKeys = videoKeysOf(info);
  const shape: Record<string, z.ZodNumber> = Object.assign(
    {},
    V3Location.shape,
    ...videoKeys.map((key) => VideoLocation(key).shape),
  );
  const location = z.object(shape);
  for (const relative of files) {
    const parquet = await openDatasetParquet(directory, findings, relative);
    if (!parquet) continue;
    // Only what is used: per-episode statistics are most of the file, and any other column may be anything.
    const columns = [
      ...Object.keys(EpisodeRecord.shape),
      ...Object.keys(shape),
      ...OWNER_FIELDS.filter((field) => !field.includes("/")),
    ];
    for await (const { first, rows } of datasetBatches(findings, relative, parquet, columns)) {
      for (const [i, raw] of rows.entries()) {
        findings.signal?.throwIfAborted();
        const line = first + i + 1;
        const row = plainValue(raw) as Record<string, unknown>;
        const parsed = EpisodeRecord.safeParse(row, { reportInput: true });
        const where = location.safeParse(row, { reportInput: true });
        const issues = [...(parsed.error?.issues ?? []), ...(where.error?.issues ?? [])];
        if (parsed.success && where.success) {
          const r = where.data;
          if (r.dataset_to_index! - r.dataset_from_index! !== parsed.data.length) {
            findings.report({
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
            findings.report({
              file: relative,
              line,
              message: `videos/${backwards}/to_timestamp is before videos/${backwards}/from_timestamp`,
            });
            continue;
          }
          yield { record: parsed.data, file: relative, line };
        } else issues.forEach((issue) => findings.report({ file: relative, line, message: describeIssue(issue) }));
      }
    }
  }
}

/**
 * meta/episodes/*\/*.parquet in name order, as LeRobot globs them (Python's glob leaves out
 * names starting with '.'). A file may be a symbolic link, as in a Hugging Face cache snapshot.
 */
export async function v3EpisodeFiles(directory: DatasetDirectory, findings: Findings): Promise<string[]> {
  const found: string[] = [];
  // meta/ or meta/episodes/ may be a link: listed only where it may lead.
  const dir = await directory.locate(V3_EPISODES_DIR);
  if (dir && "refused" in dir) {
    findings.report({ file: V3_EPISODES_DIR, line: 0, message: `not read: ${dir.refused}` });
    return found;
  }
  if (!dir?.stats.isDirectory()) return found;
  for (const chunk of await listDir(dir.real)) {
    if (!chunk.isDirectory() || chunk.name.startsWith(".")) continue;
    for (const file of await listDir(path.join(dir.real, chunk.name))) {
      const relative = `${V3_EPISODES_DIR}/${chunk.name}/${file.name}`;
      if (file.name.startsWith(".") || !file.name.endsWith(".parquet") || !(file.isFile() || file.isSymbolicLink()))
        continue;
      if (file.isFile() || (await directory.sizeOf(relative)) !== null) found.push(relative);
    }
  }
  return found.sort();
}
