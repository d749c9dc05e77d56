import { rm } from "node:fs/promises";
import { openParquet, rewriteParquet, type ParquetFile } from "./parquet";

/**
 * A LeRobot v3.0 data file written again as a pull plan says (lib/views/plan.ts decides it, the
 * clients carry it out): its rows in their order, the frames of `dropped_episode_indices` left
 * out, each other frame's `episode_index` and `index` moved; every other column, the schema, the
 * key/value metadata and the row groups as fetched. This is what LeRobot's own delete_episodes
 * does to a data file, and what lets a subset other than episodes 0..k-1 open without an episode
 * list (docs/lerobot.md).
 *
 * The plan comes from the server, which a client does not trust for more than its answers: every
 * frame is checked against it on the way (an episode it does not name, a frame outside the range
 * it gives, frames out of order, fewer or more frames than it says), and a transform that does not
 * describe the file is refused with nothing written at `target`.
 */

/** The transform of one data file, as the plan's `files[].transform` carries it. */
export type DataTransform = {
  kind: "lerobot_v3_data_rows";
  changed_columns: string[];
  /** The episodes kept, in the order of their frames in the file. */
  episodes: {
    episode_index: number;
    new_episode_index: number;
    /** The episode's first frame's `index` in the file, and its new one; `length` frames each. */
    index_from: number;
    new_index_from: number;
    length: number;
  }[];
  dropped_episode_indices: number[];
};

/** The columns a transform changes. */
export const RENUMBERED_COLUMNS = ["episode_index", "index"] as const;

/** A data file the transform does not describe (or that is no data file at all): nothing was written. */
export class DataRowsError extends Error {
  override name = "DataRowsError";
}

/** Writes `source` (a fetched data file) transformed to `target`, which is the caller's to rename into place. */
export async function rewriteDataRows(
  source: string,
  target: string,
  transform: DataTransform,
  label = source,
): Promise<{ rows: number; dropped: number }> {
  const refuse = (why: string) => new DataRowsError(`${label}: ${why}`);
  let parquet: ParquetFile;
  try {
    parquet = await openParquet(source);
  } catch (error) {
    throw refuse((error as NodeJS.ErrnoException).code === "ENOENT" ? "file is missing" : (error as Error).message);
  }
  const lacking = RENUMBERED_COLUMNS.filter((c) => !parquet.columns.includes(c));
  if (lacking.length) throw refuse(`no ${lacking.join(", ")} column`);
  const byOriginal = new Map(transform.episodes.map((e) => [e.episode_index, e]));
  const dropped = new Set(transform.dropped_episode_indices);
  const counts = new Map<number, number>();
  let expected = transform.episodes[0]?.new_index_from ?? 0;
  let rows = 0;
  let left = 0;
  await rewriteParquet(parquet, target, (batch) =>
    batch.map((row) => {
      const original = Number(row.episode_index);
      const e = byOriginal.get(original);
      if (!e) {
        if (!dropped.has(original)) throw refuse(`holds frames of episode ${original}, which the plan does not name`);
        left++;
        return null;
      }
      const index = Number(row.index);
      if (index < e.index_from || index >= e.index_from + e.length)
        throw refuse(
          `frame index ${index} of episode ${original} is outside the plan's ${e.index_from}..${e.index_from + e.length}`,
        );
      const renumbered = e.new_index_from + (index - e.index_from);
      if (renumbered !== expected)
        throw refuse(`frame index ${index} of episode ${original} is not in the plan's order`);
      expected++;
      rows++;
      counts.set(original, (counts.get(original) ?? 0) + 1);
      return {
        ...row,
        episode_index: like(row.episode_index, e.new_episode_index),
        index: like(row.index, renumbered),
      };
    }),
  ).catch((error: unknown) => {
    throw error instanceof DataRowsError ? error : refuse((error as Error).message);
  });
  for (const e of transform.episodes) {
    const n = counts.get(e.episode_index) ?? 0;
    if (n !== e.length) {
      await rm(target, { force: true });
      throw refuse(`episode ${e.episode_index} has ${n} frames, the plan says ${e.length}`);
    }
  }
  return { rows, dropped: left };
}

/** A number as the column holds it (INT64 columns are read and written as bigint). */
const like = (original: unknown, value: number) => (typeof original === "bigint" ? BigInt(value) : value);
