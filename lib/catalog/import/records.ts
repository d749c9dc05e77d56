import { z } from "zod";
import { CHANGELOG_TYPES } from "../../db/schema";
import { VERSION_PATTERN } from "../semver";
import { DATASET_ID_PATTERN, EPISODE_ID_PATTERN } from "../identifiers";
import { FilePath } from "../../safe-path";
import { FREE_TEXT, FREE_TEXT_DESCRIPTION, UNSAFE_CHARACTERS_DESCRIPTION, hasUnsafeCharacter } from "../../characters";

/** The record formats of an import directory (docs/import-format.md). Field names are the wire names. */

const STREAM_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The most a title, task, label or changelog description may hold, in characters (code points). */
export const MAX_TEXT_CHARACTERS = 10_000;
/** The most a dataset description may hold, in characters. */
export const MAX_DESCRIPTION_CHARACTERS = 100_000;
const MAX_IDENTIFIER_CHARACTERS = 200;

/** Characters as people count them (code points), not UTF-16 units: an emoji is one character. */
export function characterCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}
const atMost = (max: number) => (value: string) => value.length <= max || characterCount(value) <= max;

/**
 * Free text (a title, a task, a label, a changelog entry) is stored and returned exactly as it
 * was imported: never trimmed or rewritten. It may hold line breaks and tabs; it must not be
 * empty or only white space. It is refused, not cleaned, when it holds what FREE_TEXT refuses:
 * clients print it (`das episodes`), and an ESC or a right-to-left override would drive the
 * terminal or turn the text round there.
 */
const freeText = (what: string) =>
  [(value: string) => FREE_TEXT.test(value), `${what} must not contain ${FREE_TEXT_DESCRIPTION}`] as const;
const text = (what: string, max = MAX_TEXT_CHARACTERS) =>
  z
    .string(`${what} must be a string`)
    .refine((value) => value.trim() !== "", `${what} must not be empty or only white space`)
    .refine(atMost(max), `${what} must be at most ${max.toLocaleString("en")} characters`)
    .refine(...freeText(what));
/** Every string in a JSON value, keys included, is free text (an annotation's attributes). */
const freeTextThroughout = (value: unknown): boolean =>
  typeof value === "string"
    ? FREE_TEXT.test(value)
    : Array.isArray(value)
      ? value.every(freeTextThroughout)
      : value !== null && typeof value === "object"
        ? Object.entries(value).every(([key, v]) => FREE_TEXT.test(key) && freeTextThroughout(v))
        : true;
// Identifiers go into URLs, filters, file names and generated scripts; free text (a task, a label)
// may hold line breaks and tabs, an identifier none of the characters of UNSAFE_CHARACTERS.
const safe = (what: string) =>
  [(value: string) => !hasUnsafeCharacter(value), `${what} must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`] as const;
/**
 * A value clients filter on or that names someone: at most 200 characters, the identifier rule,
 * and no white space at either end (refused, not trimmed: "lab " and "lab" would be two filters).
 */
const facet = (what: string) =>
  z
    .string(`${what} must be a string`)
    .min(1, `${what} must not be empty`)
    .refine(atMost(MAX_IDENTIFIER_CHARACTERS), `${what} must be at most ${MAX_IDENTIFIER_CHARACTERS} characters`)
    .refine(...safe(what))
    .refine((value) => value === value.trim(), `${what} must not start or end with white space`);
/** An episode id that points at an episode (checked across records), with the identifier rule. */
const episodeRef = (what: string) =>
  z
    .string(`${what} must be a string`)
    .min(1, `${what} must not be empty`)
    .refine(...safe(what));
const seconds = (what: string) => z.number(`${what} must be a number of seconds`).min(0, `${what} must be at least 0`);

export const DatasetFile = z.strictObject({
  id: z
    .string("id must be a string")
    .regex(DATASET_ID_PATTERN, "id must be lower-case letters, digits, '.', '_' or '-' (at most 100)"),
  title: text("title"),
  description: z
    .string("description must be a string")
    .refine(
      atMost(MAX_DESCRIPTION_CHARACTERS),
      `description must be at most ${MAX_DESCRIPTION_CHARACTERS.toLocaleString("en")} characters`,
    )
    .refine(...freeText("description")),
});

export const VersionFile = z.strictObject({
  version: z
    .string("version must be a string")
    .regex(VERSION_PATTERN, "version must be three dot-separated numbers, e.g. 1.2.0"),
  released_at: z.iso.datetime({
    offset: true,
    message: "released_at must be an ISO 8601 date-time with a time zone, e.g. 2026-03-01T00:00:00Z",
  }),
  changelog: z
    .array(
      z.strictObject({
        type: z.enum(CHANGELOG_TYPES, `type must be one of ${CHANGELOG_TYPES.join(", ")}`),
        description: text("description"),
      }),
      "changelog must be an array",
    )
    .default([]),
});

export const EpisodeLine = z.strictObject({
  episode_id: z
    .string("episode_id must be a string")
    .regex(EPISODE_ID_PATTERN, "episode_id must be letters, digits, '.', '_', ':', '~' or '-' (at most 200)"),
  task: text("task"),
  environment: facet("environment"),
  duration_s: seconds("duration_s"),
  outcome: facet("outcome"),
  has_recovery: z.boolean("has_recovery must be true or false"),
  contributor: facet("contributor"),
  streams: z
    .array(
      z.string().regex(STREAM_PATTERN, "stream names must be letters, digits, '.', '_' or '-'"),
      "streams must be an array of stream names",
    )
    .refine((s) => new Set(s).size === s.length, "streams must not repeat a name"),
});

/**
 * An episode of a LeRobot dataset: its task is its tasks joined with "; ", which may be empty
 * (LeRobot records "" when a recording was given no task, and an episode can list none) and may
 * hold several tasks of up to MAX_TEXT_CHARACTERS each (the source checks each one).
 */
export const LeRobotEpisodeLine = EpisodeLine.extend({
  task: z
    .string("task must be a string")
    .refine((value) => value === "" || value.trim() !== "", "task must be empty or more than white space")
    .refine(
      atMost(MAX_DESCRIPTION_CHARACTERS),
      `task (the episode's tasks joined) must be at most ${MAX_DESCRIPTION_CHARACTERS.toLocaleString("en")} characters`,
    )
    .refine(...freeText("task")),
});

export const AnnotationLine = z
  .strictObject({
    episode_id: episodeRef("episode_id"),
    label: text("label"),
    start_s: seconds("start_s"),
    end_s: seconds("end_s"),
    attributes: z
      .record(z.string(), z.unknown(), "attributes must be an object")
      .refine(freeTextThroughout, `attributes must not contain ${FREE_TEXT_DESCRIPTION}`)
      .optional(),
  })
  .refine((a) => a.start_s <= a.end_s, "start_s must not be after end_s");

const SHA256 = /^[0-9a-f]{64}$/;

const frame = (what: string) =>
  z
    .number(`${what} must be a number`)
    .int(`${what} must be a whole number`)
    .min(0, `${what} must be at least 0`)
    .max(Number.MAX_SAFE_INTEGER);

/** Where an episode lies in a file it shares: its seconds in the file's own time, and its frames if numbered. */
const FileEpisodePlace = {
  start_s: seconds("start_s"),
  end_s: seconds("end_s"),
  from_frame: frame("from_frame").optional(),
  to_frame: frame("to_frame").optional(),
};
const inOrder = (p: {
  start_s?: number | null;
  end_s?: number | null;
  from_frame?: number | null;
  to_frame?: number | null;
}) =>
  (p.start_s == null || p.end_s == null || p.start_s <= p.end_s) &&
  (p.from_frame == null || p.to_frame == null || p.from_frame <= p.to_frame);
const IN_ORDER = "start_s must not be after end_s, nor from_frame after to_frame";

const FileFields = {
  path: FilePath,
  stream: z
    .string("stream must be a string")
    .regex(STREAM_PATTERN, "stream must be a stream name")
    .nullable()
    .optional(),
  size_bytes: z
    .number("size_bytes must be a number")
    .int("size_bytes must be a whole number")
    .min(0, "size_bytes must be at least 0")
    .max(Number.MAX_SAFE_INTEGER),
  sha256: z.string("sha256 must be a string").regex(SHA256, "sha256 must be 64 lower-case hex digits"),
  media_type: z
    .string("media_type must be a string")
    .regex(/^[\w.+-]+\/[\w.+-]+$/, "media_type must look like type/subtype")
    .optional(),
};

/**
 * A line of files.jsonl. A file belongs to no episode (a file of the whole version), one
 * (`episode_id`), or several: `episode_ids`, or `episodes` with where each lies in the file.
 */
export const FileLine = z
  .strictObject({
    ...FileFields,
    episode_id: episodeRef("episode_id").nullable().optional(),
    episode_ids: z
      .array(episodeRef("episode_ids"), "episode_ids must be an array of episode ids")
      .min(1, "episode_ids must list at least one episode (leave it out for a file of the whole version)")
      .refine((ids) => new Set(ids).size === ids.length, "episode_ids must not repeat an episode")
      .optional(),
    episodes: z
      .array(
        z
          .strictObject(
            { episode_id: episodeRef("episode_id"), ...FileEpisodePlace },
            "episodes must be objects with episode_id, start_s and end_s",
          )
          .refine(inOrder, IN_ORDER),
        "episodes must be an array",
      )
      .min(1, "episodes must list at least one episode (leave it out for a file of the whole version)")
      .refine(
        (list) => new Set(list.map((e) => e.episode_id)).size === list.length,
        "episodes must not repeat an episode",
      )
      .optional(),
  })
  .refine(
    (f) => [f.episode_id != null, f.episode_ids !== undefined, f.episodes !== undefined].filter(Boolean).length <= 1,
    "give one of episode_id, episode_ids or episodes, not several",
  );

/** A file read from a local directory (a LeRobot import): its sha256 is computed later; a null size means the directory lacks it. */
export const LocalFileLine = z.strictObject({
  ...FileFields,
  size_bytes: FileFields.size_bytes.nullable(),
  sha256: FileFields.sha256.optional(),
});

/** One episode of one file, for sources that list them apart from the files (a LeRobot dataset). */
export const FileEpisodeLine = z
  .strictObject({
    path: FileFields.path,
    episode_id: episodeRef("episode_id"),
    start_s: FileEpisodePlace.start_s.nullable().optional(),
    end_s: FileEpisodePlace.end_s.nullable().optional(),
    from_frame: FileEpisodePlace.from_frame.unwrap().nullable().optional(),
    to_frame: FileEpisodePlace.to_frame.unwrap().nullable().optional(),
  })
  .refine(inOrder, IN_ORDER);

export type DatasetFile = z.infer<typeof DatasetFile>;
export type VersionFile = z.infer<typeof VersionFile>;
export type EpisodeLine = z.infer<typeof EpisodeLine>;
export type AnnotationLine = z.infer<typeof AnnotationLine>;
export type FileLine = z.infer<typeof FileLine>;
export type LocalFileLine = z.infer<typeof LocalFileLine>;
export type FileEpisodeLine = z.infer<typeof FileEpisodeLine>;

const MEDIA_TYPES: Record<string, string> = {
  mp4: "video/mp4",
  mkv: "video/x-matroska",
  webm: "video/webm",
  json: "application/json",
  jsonl: "application/x-ndjson",
  csv: "text/csv",
  parquet: "application/vnd.apache.parquet",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  npz: "application/octet-stream",
  mcap: "application/octet-stream",
};

/** The media type a file declares, or one guessed from its extension. */
export function mediaTypeOf(file: { path: string; media_type?: string }): string {
  if (file.media_type) return file.media_type;
  const extension = file.path.split(".").at(-1)?.toLowerCase() ?? "";
  return MEDIA_TYPES[extension] ?? "application/octet-stream";
}
