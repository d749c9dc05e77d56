import {
  asyncBufferFromUrl,
  parquetMetadataAsync,
  parquetReadObjects,
  parquetSchema,
  type AsyncBuffer,
  type FileMetaData,
  type SchemaTree,
} from "hyparquet";

/**
 * The robot's data of one episode, read in the browser from its table's signed URL by HTTP range
 * requests: the footer, then only the pages of the episode's rows (by the row groups' statistics
 * and the page index on `episode_index`) and only of numeric columns. A LeRobot v3.0 file of many
 * episodes so costs the episode's own pages, not the file.
 */

/** A numeric feature: one column of the table, one line per dimension. */
export type Feature = { key: string; names: string[]; dimensions: Float64Array[] };
export type EpisodeData = { time: Float64Array; features: Feature[] };

/** LeRobot's bookkeeping columns: the x axis and the row's place, not what the robot did. */
const BOOKKEEPING = new Set(["timestamp", "frame_index", "episode_index", "index", "task_index"]);
const NUMERIC = new Set(["INT32", "INT64", "FLOAT", "DOUBLE", "BOOLEAN"]);
/** Logical types that are numbers stored as integers but not a robot's measurement. */
const NOT_MEASUREMENTS = new Set(["DATE", "TIME", "TIMESTAMP", "STRING", "UTF8", "ENUM", "JSON", "BSON"]);

/** Only the footer first (its length, then the metadata): a larger first read could take the last episode's pages too. */
const FOOTER_FIRST_READ = 8;

/** Why the table could not be plotted, said for a person. */
export class TableError extends Error {}

export async function readEpisodeTable(input: {
  url: string;
  size: number;
  episodeIndex: number | null;
  names: Record<string, string[]>;
  /** The episode's length, for a table without timestamps: rows are spread evenly over it. */
  duration: number;
}): Promise<EpisodeData> {
  let file: AsyncBuffer;
  let metadata: FileMetaData;
  try {
    file = await asyncBufferFromUrl({ url: input.url, byteLength: input.size });
    metadata = await parquetMetadataAsync(file, { initialFetchSize: FOOTER_FIRST_READ });
  } catch (error) {
    throw new TableError(describe(error, "it is not a parquet file, or could not be fetched"));
  }
  const tree = parquetSchema(metadata);
  const columns = tree.children.flatMap((child) => (isNumericColumn(child) ? [child.element.name] : []));
  const hasTime = tree.children.some((c) => c.element.name === "timestamp");
  const hasEpisodeIndex = tree.children.some((c) => c.element.name === "episode_index");
  if (!columns.length) throw new TableError("it has no numeric columns to plot");
  // Loaded only when a table is read: its decoders (zstd, brotli, ...) compile WebAssembly, which
  // the portal's policy allows ('wasm-unsafe-eval') but no page without a table needs.
  const { compressors } = await import("hyparquet-compressors");
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({
      file,
      metadata,
      columns: hasTime ? [...columns, "timestamp"] : columns,
      compressors,
      ...(input.episodeIndex !== null && hasEpisodeIndex
        ? {
            filter: { episode_index: { $eq: input.episodeIndex } },
            filterStrict: false,
            usePageIndex: true,
            useOffsetIndex: true,
          }
        : { useOffsetIndex: true }),
    });
  } catch (error) {
    throw new TableError(describe(error, "its pages could not be read"));
  }
  if (!rows.length) throw new TableError("it holds no rows of this episode");
  const time = new Float64Array(rows.length);
  const first = hasTime ? Number(rows[0]!.timestamp) : 0;
  for (let i = 0; i < rows.length; i++)
    time[i] = hasTime ? Number(rows[i]!.timestamp) - first : (i * input.duration) / rows.length;
  const features: Feature[] = columns.map((key) => {
    const sample = rows[0]![key];
    const width = Array.isArray(sample) || ArrayBuffer.isView(sample) ? (sample as ArrayLike<unknown>).length : 1;
    const dimensions = Array.from({ length: width }, () => new Float64Array(rows.length));
    for (let i = 0; i < rows.length; i++) {
      const value = rows[i]![key];
      if (width === 1 && !(Array.isArray(value) || ArrayBuffer.isView(value))) {
        dimensions[0]![i] = toNumber(value);
        continue;
      }
      const list = value as ArrayLike<unknown> | null;
      for (let d = 0; d < width; d++) dimensions[d]![i] = toNumber(list?.[d]);
    }
    const named = input.names[key] ?? [];
    const names = dimensions.map((_, d) =>
      width === 1 && !named.length ? key : ((named.length === width ? named[d] : undefined) ?? `${key}[${d}]`),
    );
    return { key, names, dimensions };
  });
  return { time, features };
}

/** A number, a fixed-size list of numbers, or a boolean: what a plot can draw. */
function isNumericColumn(node: SchemaTree): boolean {
  if (BOOKKEEPING.has(node.element.name)) return false;
  let leaf = node;
  // A LIST is three levels (list, repeated group, element); a plain repeated field is one.
  for (let depth = 0; leaf.children.length === 1 && depth < 3; depth++) leaf = leaf.children[0]!;
  if (leaf.children.length) return false;
  const { type, converted_type: converted, logical_type: logical } = leaf.element;
  if (!type || !NUMERIC.has(type)) return false;
  if (converted && NOT_MEASUREMENTS.has(converted)) return false;
  if (logical && NOT_MEASUREMENTS.has(logical.type)) return false;
  return true;
}

function toNumber(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "boolean") return value ? 1 : 0;
  return Number.NaN;
}

/**
 * What the page says went wrong. A fetch that fails without any answer (a TypeError: "Failed to
 * fetch", "NetworkError ...", "Load failed") is, from a store that serves the video, most likely
 * the store's CORS: the browser may play a video from another origin but may read a file by fetch
 * only when the store allows the portal's origin, and it hides the reason from the page.
 */
export const NO_CORS_HINT =
  "the file could not be fetched: most likely the object store has no CORS rule that lets this portal read it (an operator's `das-admin store check` prints the rule to set), or the network failed";

function describe(error: unknown, fallback: string): string {
  const message = error instanceof Error ? error.message : "";
  if (/fetch failed (403|404)/.test(message)) return "the file could not be fetched (it is missing from the store)";
  if (error instanceof TypeError && /fetch|network|load failed/i.test(message)) return NO_CORS_HINT;
  if (/fetch/i.test(message)) return "the file could not be fetched";
  if (/magic|parquet/i.test(message)) return "it is not a parquet file";
  return fallback;
}
