import { z } from "zod";
import { hasUnsafeCharacter, UNSAFE_CHARACTERS_DESCRIPTION } from "../characters";

/**
 * The LeRobot dataset format as both the importer (lib/catalog/import/lerobot) and the `das pull`
 * subset writer (lib/lerobot/subset.ts) need it: versions, fixed paths, the schema of
 * `meta/info.json`, LeRobot's path templates and its statistics aggregation. See docs/lerobot.md.
 *
 * Layout by version (paths relative to the dataset root):
 * - v2.0 / v2.1: `meta/episodes.jsonl`, `meta/tasks.jsonl`, `meta/episodes_stats.jsonl` (v2.1),
 *   `meta/stats.json`; one data parquet and one video per camera for every episode, at
 *   `data_path` / `video_path` formatted with `episode_chunk = episode_index // chunks_size`.
 * - v3.0: `meta/tasks.parquet`, `meta/episodes/chunk-XXX/file-YYY.parquet` (one row per episode,
 *   with the data and video file each episode lives in and its range there), `meta/stats.json`;
 *   data and video files hold several episodes back to back.
 */

export const SUPPORTED_VERSIONS = ["v2.0", "v2.1", "v3.0"] as const;
export type CodebaseVersion = (typeof SUPPORTED_VERSIONS)[number];

export const isSupportedVersion = (value: unknown): value is CodebaseVersion =>
  typeof value === "string" && (SUPPORTED_VERSIONS as readonly string[]).includes(value);
export const isV3 = (version: CodebaseVersion) => version === "v3.0";

export const INFO_PATH = "meta/info.json";
export const STATS_PATH = "meta/stats.json";
export const V2_EPISODES_PATH = "meta/episodes.jsonl";
export const V2_TASKS_PATH = "meta/tasks.jsonl";
export const V2_EPISODES_STATS_PATH = "meta/episodes_stats.jsonl";
export const V3_TASKS_PATH = "meta/tasks.parquet";
export const V3_EPISODES_DIR = "meta/episodes";
/** Optional: labels for a per-frame `subtask_index` column. */
export const SUBTASKS_PATH = "meta/subtasks.parquet";

/** Where a v3 episodes file lives (LeRobot's DEFAULT_EPISODES_PATH). */
export const v3EpisodesPath = (chunkIndex: number, fileIndex: number) =>
  formatPathTemplate(`${V3_EPISODES_DIR}/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet`, {
    chunk_index: chunkIndex,
    file_index: fileIndex,
  });

/** LeRobot's default chunk size (files per chunk directory), used when info.json leaves it out. */
export const DEFAULT_CHUNKS_SIZE = 1000;

/** The columns LeRobot writes on every frame row. */
export const FRAME_COLUMNS = ["timestamp", "frame_index", "episode_index", "index", "task_index"] as const;

const count = (what: string) =>
  z
    .number(`${what} must be a number`)
    .int(`${what} must be a whole number`)
    .min(0, `${what} must be at least 0`)
    .max(Number.MAX_SAFE_INTEGER);

export const Feature = z.looseObject({
  dtype: z.string("dtype must be a string").min(1, "dtype must not be empty"),
  shape: z.array(z.number().int().min(0), "shape must be an array of whole numbers").optional(),
  names: z.unknown().optional(),
  info: z.record(z.string(), z.unknown()).nullable().optional(),
  video_info: z.record(z.string(), z.unknown()).nullable().optional(),
});
export type Feature = z.infer<typeof Feature>;

/**
 * `meta/info.json`. Fields LeRobot reads are checked; anything else is kept as it is (`looseObject`),
 * because the subset writer writes the document back with only the totals changed.
 */
export const Info = z.looseObject({
  codebase_version: z.enum(SUPPORTED_VERSIONS, {
    error: (issue) =>
      `codebase_version ${JSON.stringify(issue.input)} is not supported; supported versions are ${SUPPORTED_VERSIONS.join(", ")}`,
  }),
  // Shown by the API, the portal and `das manifest`, and stored in the version's facts.
  robot_type: z
    .string("robot_type must be a string or null")
    .refine((value) => !hasUnsafeCharacter(value), `robot_type must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`)
    .nullable()
    .optional(),
  fps: z.number("fps must be a number").positive("fps must be greater than 0"),
  total_episodes: count("total_episodes"),
  total_frames: count("total_frames"),
  total_tasks: count("total_tasks").optional(),
  total_videos: count("total_videos").optional(),
  total_chunks: count("total_chunks").optional(),
  chunks_size: z
    .number("chunks_size must be a number")
    .int("chunks_size must be a whole number")
    .min(1, "chunks_size must be at least 1")
    .optional(),
  splits: z
    .record(z.string(), z.string('splits values must be strings such as "0:100"'), "splits must be an object")
    .optional(),
  data_path: z.string("data_path must be a string").min(1, "data_path must not be empty"),
  video_path: z.string("video_path must be a string or null").nullable().optional(),
  // The earliest v2.0 datasets keep the video template here.
  videos: z.looseObject({ videos_path: z.string().optional() }).nullable().optional(),
  features: z.record(z.string(), Feature, "features must be an object").superRefine((features, ctx) => {
    // Feature keys name columns, video directories and streams ("observation.images.front"), and
    // camera keys go into the version's facts: the identifier rule, each reported at its key.
    for (const [key, feature] of Object.entries(features)) {
      const problem =
        key.length === 0
          ? "must not be empty"
          : key.includes("/")
            ? "must not contain '/'"
            : hasUnsafeCharacter(key)
              ? `must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`
              : null;
      if (problem) ctx.addIssue({ code: "custom", path: [key], message: `a feature name ${problem}` });
      for (const where of ["info", "video_info"] as const) {
        const codec = feature[where]?.["video.codec"];
        if (typeof codec === "string" && hasUnsafeCharacter(codec)) {
          ctx.addIssue({
            code: "custom",
            path: [key, where, "video.codec"],
            message: `video.codec must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`,
          });
        }
      }
    }
  }),
});
export type Info = z.infer<typeof Info>;

export const chunksSizeOf = (info: Info) => info.chunks_size ?? DEFAULT_CHUNKS_SIZE;
export const videoTemplateOf = (info: Info): string | null => info.video_path ?? info.videos?.videos_path ?? null;
/** Features stored as video files; `image` features are embedded in the data parquet files. */
export const videoKeysOf = (info: Info) =>
  Object.keys(info.features).filter((key) => info.features[key]!.dtype === "video");
export const cameraKeysOf = (info: Info) =>
  Object.keys(info.features).filter((key) => ["video", "image"].includes(info.features[key]!.dtype));

/**
 * Python's `str.format` for the templates in info.json (`data/chunk-{episode_chunk:03d}/...`):
 * `{name}` and `{name:0Nd}` / `{name:Nd}` / `{name:d}`, `{{` and `}}`. Anything else is refused
 * rather than guessed, since a wrong guess names files that do not exist.
 */
export function formatPathTemplate(template: string, values: Record<string, string | number>): string {
  let out = "";
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c === "}") {
      if (template[i + 1] !== "}") throw new TemplateError(template, "a single '}' outside a field");
      out += "}";
      i++;
      continue;
    }
    if (c !== "{") {
      out += c;
      continue;
    }
    if (template[i + 1] === "{") {
      out += "{";
      i++;
      continue;
    }
    const end = template.indexOf("}", i);
    if (end < 0) throw new TemplateError(template, "a '{' without its '}'");
    const field = template.slice(i + 1, end);
    i = end;
    const [name, spec = ""] = field.split(/:(.*)/s, 2) as [string, string?];
    if (!(name in values)) throw new TemplateError(template, `unknown field '${name}'`);
    const value = values[name]!;
    const number = /^(0?)(\d*)d$/.exec(spec);
    if (spec === "") out += String(value);
    else if (number && typeof value === "number" && Number.isSafeInteger(value)) {
      const digits = String(Math.abs(value));
      const width = number[2] ? Number(number[2]) : 0;
      const sign = value < 0 ? "-" : "";
      out += number[1] ? sign + digits.padStart(width - sign.length, "0") : (sign + digits).padStart(width, " ");
    } else throw new TemplateError(template, `unsupported format '{${field}}'`);
  }
  return out;
}

export class TemplateError extends Error {
  constructor(
    readonly template: string,
    reason: string,
  ) {
    super(`path template ${JSON.stringify(template)}: ${reason}`);
    this.name = "TemplateError";
  }
}

/** A number tree as LeRobot stores statistics: a number or (nested) arrays of numbers. */
export type NumberTree = number | NumberTree[];
/** `{feature: {min, max, mean, std, count, ...}}`, the shape of stats.json and of each episode's stats. */
export type StatsTree = Record<string, Record<string, NumberTree>>;

/**
 * LeRobot's `aggregate_stats` (compute_stats.py): min and max element-wise, mean weighted by
 * count, std by the parallel-variance formula, counts summed. Any other statistic (newer LeRobot
 * versions add quantiles such as q01/q99) is averaged weighted by count, as LeRobot does for them.
 * Features missing from some episodes are aggregated over the episodes that have them.
 */
export function aggregateStats(list: StatsTree[]): StatsTree {
  const features = [...new Set(list.flatMap((stats) => Object.keys(stats)))];
  const out: StatsTree = {};
  for (const feature of features) {
    const parts = list.map((stats) => stats[feature]).filter((s): s is Record<string, NumberTree> => s !== undefined);
    const counts = parts.map((p) => scalarCount(p.count));
    const total = counts.reduce((a, b) => a + b, 0);
    const names = [...new Set(parts.flatMap((p) => Object.keys(p)))];
    const result: Record<string, NumberTree> = {};
    for (const name of names) {
      const have = parts
        .map((p, i) => [p[name], counts[i]!] as const)
        .filter((x): x is readonly [NumberTree, number] => x[0] !== undefined);
      const values = have.map(([v]) => v);
      if (name === "count") result.count = [total];
      else if (name === "min") result.min = zip(values, (xs) => Math.min(...xs));
      else if (name === "max") result.max = zip(values, (xs) => Math.max(...xs));
      else if (name === "std") continue;
      else
        result[name] = zip(values, (xs) =>
          weighted(
            xs,
            have.map(([, n]) => n),
          ),
        );
    }
    if (parts.every((p) => p.mean !== undefined && p.std !== undefined)) {
      const means = parts.map((p) => p.mean!);
      const mean = result.mean ?? zip(means, (xs) => weighted(xs, counts));
      // sum(n_i * (std_i^2 + (mean_i - mean)^2)) / sum(n_i), element by element
      const terms = parts.map((p) => zip([p.std!, p.mean!, mean], ([s, m, total_m]) => s! * s! + (m! - total_m!) ** 2));
      result.std = zip(terms, (xs) => Math.sqrt(weighted(xs, counts)));
    }
    out[feature] = result;
  }
  return out;
}

function scalarCount(value: NumberTree | undefined): number {
  let v = value;
  while (Array.isArray(v)) v = v[0];
  return typeof v === "number" ? v : 0;
}

function weighted(values: number[], weights: number[]): number {
  const total = weights.reduce((a, b) => a + b, 0);
  if (total === 0) return values.reduce((a, b) => a + b, 0) / Math.max(values.length, 1);
  return values.reduce((sum, v, i) => sum + v * weights[i]!, 0) / total;
}

/** Applies `f` element-wise across trees of the same shape (a scalar broadcasts, as in numpy). */
function zip(trees: NumberTree[], f: (xs: number[]) => number): NumberTree {
  const arrays = trees.filter(Array.isArray) as NumberTree[][];
  if (arrays.length === 0) return f(trees as number[]);
  const length = Math.max(...arrays.map((a) => a.length));
  return Array.from({ length }, (_, i) =>
    zip(
      trees.map((t) => (Array.isArray(t) ? (t[i] ?? t[t.length - 1]!) : t)),
      f,
    ),
  );
}

/** Parquet INT64 values arrive as bigint; LeRobot's values all fit in a double. */
export function plainValue(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(plainValue);
  if (value instanceof Uint8Array) return value;
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainValue(v)]));
  return value;
}

/**
 * Splits the flat `stats/<feature>/<statistic>` columns of a v3 episode row back into a
 * StatsTree. Feature names cannot contain '/', so the last '/' separates the statistic.
 */
export function statsFromColumns(row: Record<string, unknown>): StatsTree {
  const stats: StatsTree = {};
  for (const [column, value] of Object.entries(row)) {
    if (!column.startsWith("stats/") || value === null || value === undefined) continue;
    const rest = column.slice("stats/".length);
    const cut = rest.lastIndexOf("/");
    if (cut <= 0) continue;
    const feature = rest.slice(0, cut);
    (stats[feature] ??= {})[rest.slice(cut + 1)] = plainValue(value) as NumberTree;
  }
  return stats;
}

/**
 * `splits` for a set of episode indices: each original split keeps the episodes of the set it
 * held, written as LeRobot writes a split ("start:end", end exclusive); a split the set covers
 * in several runs is written as those runs joined by ",". With `renumbered`, a split names its
 * episodes by their new indices. LeRobot's loader does not read splits.
 */
export function splitsFor(
  original: Record<string, string> | undefined,
  episodes: number[],
  renumbered?: (episode: number) => number,
): Record<string, string> {
  const sorted = [...new Set(episodes)].sort((a, b) => a - b);
  const splits = original && Object.keys(original).length ? original : { train: `0:${(sorted.at(-1) ?? -1) + 1}` };
  const out: Record<string, string> = {};
  for (const [name, spec] of Object.entries(splits)) {
    const ranges = spec.split(",").map((part) => part.split(":").map(Number) as [number, number]);
    const inSplit = sorted.filter((e) => ranges.some(([from, to]) => e >= from && e < to));
    const named = renumbered ? inSplit.map(renumbered).sort((a, b) => a - b) : inSplit;
    if (named.length)
      out[name] = runs(named)
        .map(([from, to]) => `${from}:${to}`)
        .join(",");
  }
  return out;
}

/** Consecutive runs of sorted, distinct integers as [from, to) pairs. */
export function runs(sorted: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const n of sorted) {
    const last = out.at(-1);
    if (last && last[1] === n) last[1] = n + 1;
    else out.push([n, n + 1]);
  }
  return out;
}
