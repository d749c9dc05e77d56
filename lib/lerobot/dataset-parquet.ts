import { openParquet, type ParquetFile, parquetBatches } from "./parquet";
import type { Findings } from "./findings";
import type { DatasetDirectory } from "./walk";

/** A parquet file the metadata names, opened; reported and undefined when refused, missing or unreadable. */
export async function openDatasetParquet(
  directory: DatasetDirectory,
  findings: Findings,
  relative: string,
): Promise<ParquetFile | undefined> {
  const real = await directory.realFile(relative);
  if (!real) return undefined;
  try {
    return await openParquet(real);
  } catch (error) {
    findings.report({
      file: relative,
      line: 0,
      // The message names the file by its real path: the dataset's own name for it is the problem's.
      message: `not a readable parquet file (${(error as Error).message.replaceAll(`${real}: `, "")})`,
    });
    return undefined;
  }
}

/**
 * A parquet file's rows in batches (parquetBatches); a batch that cannot be decoded (a damaged
 * page, a codec no decoder knows) is reported at the row it starts with, and ends the file.
 */
export async function* datasetBatches(
  findings: Findings,
  relative: string,
  parquet: ParquetFile,
  columns: string[],
): AsyncGenerator<{ first: number; rows: Record<string, unknown>[] }> {
  let next = 0;
  try {
    for await (const batch of parquetBatches(parquet, columns, { signal: findings.signal })) {
      next = batch.first + batch.rows.length;
      yield batch;
    }
  } catch (error) {
    if (findings.signal?.aborted) throw error;
    findings.report({
      file: relative,
      line: next + 1,
      message: `not a readable parquet file from this row on (${(error as Error).message.replaceAll(`${parquet.path}: `, "")})`,
    });
  }
}
