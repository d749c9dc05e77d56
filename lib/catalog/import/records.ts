import { z } from "zod";
import { CHANGELOG_TYPES } from "../../db/schema";
import { VERSION_PATTERN } from "../semver";
import { DATASET_ID_PATTERN, EPISODE_ID_PATTERN, isRelativePath } from "../identifiers";
import { UNSAFE_CHARACTERS_DESCRIPTION, hasUnsafeCharacter } from "../../characters";

/** The record formats of an import directory (docs/import-format.md). Field names are the wire names. */

const STREAM_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

const label = (what: string) => z.string(`${what} must be a string`).trim().min(1, `${what} must not be empty`).max(200, `${what} must be at most 200 characters`);
// Identifiers go into URLs, filters, file names and generated scripts; free text (a task, a label)
// may hold line breaks and tabs, an identifier none of the characters of UNSAFE_CHARACTERS.
const safe = (what: string) => [(value: string) => !hasUnsafeCharacter(value), `${what} must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`] as const;
/** A value clients filter on or that names someone: a label with the identifier rule. */
const facet = (what: string) => label(what).refine(...safe(what));
const seconds = (what: string) => z.number(`${what} must be a number of seconds`).min(0, `${what} must be at least 0`);

export const DatasetFile = z.strictObject({
  id: z.string("id must be a string").regex(DATASET_ID_PATTERN, "id must be lower-case letters, digits, '.', '_' or '-' (at most 100)"),
  title: label("title"),
  description: z.string("description must be a string").max(10_000, "description must be at most 10,000 characters"),
});

export const VersionFile = z.strictObject({
  version: z.string("version must be a string").regex(VERSION_PATTERN, "version must be three dot-separated numbers, e.g. 1.2.0"),
  released_at: z.iso.datetime({ offset: true, message: "released_at must be an ISO 8601 date-time with a time zone, e.g. 2026-03-01T00:00:00Z" }),
  changelog: z
    .array(
      z.strictObject({
        type: z.enum(CHANGELOG_TYPES, `type must be one of ${CHANGELOG_TYPES.join(", ")}`),
        // Not label(): its 200-character cap would win over this one.
        description: z
          .string("description must be a string")
          .trim()
          .min(1, "description must not be empty")
          .max(2000, "description must be at most 2,000 characters"),
      }),
      "changelog must be an array",
    )
    .default([]),
});

export const EpisodeLine = z.strictObject({
  episode_id: z.string("episode_id must be a string").regex(EPISODE_ID_PATTERN, "episode_id must be letters, digits, '.', '_', ':', '~' or '-' (at most 200)"),
  task: label("task"),
  environment: facet("environment"),
  duration_s: seconds("duration_s"),
  outcome: facet("outcome"),
  has_recovery: z.boolean("has_recovery must be true or false"),
  contributor: facet("contributor"),
  streams: z
    .array(z.string().regex(STREAM_PATTERN, "stream names must be letters, digits, '.', '_' or '-'"), "streams must be an array of stream names")
    .refine((s) => new Set(s).size === s.length, "streams must not repeat a name"),
});

export const AnnotationLine = z
  .strictObject({
    episode_id: z.string("episode_id must be a string").min(1, "episode_id must not be empty").refine(...safe("episode_id")),
    label: label("label"),
    start_s: seconds("start_s"),
    end_s: seconds("end_s"),
    attributes: z.record(z.string(), z.unknown(), "attributes must be an object").optional(),
  })
  .refine((a) => a.start_s <= a.end_s, "start_s must not be after end_s");

const SHA256 = /^[0-9a-f]{64}$/;

export const FileLine = z.strictObject({
  path: z
    .string("path must be a string")
    .min(1, "path must not be empty")
    .max(1024, "path must be at most 1024 characters")
    .refine(isRelativePath, "path must be relative, with '/' separators and no empty, '.' or '..' segments")
    .refine(...safe("path"))
    .refine((p) => p === p.trim(), "path must not start or end with a space"),
  episode_id: z.string("episode_id must be a string").min(1, "episode_id must not be empty").refine(...safe("episode_id")).nullable().optional(),
  stream: z.string("stream must be a string").regex(STREAM_PATTERN, "stream must be a stream name").nullable().optional(),
  size_bytes: z.number("size_bytes must be a number").int("size_bytes must be a whole number").min(0, "size_bytes must be at least 0").max(Number.MAX_SAFE_INTEGER),
  sha256: z.string("sha256 must be a string").regex(SHA256, "sha256 must be 64 lower-case hex digits"),
  media_type: z.string("media_type must be a string").regex(/^[\w.+-]+\/[\w.+-]+$/, "media_type must look like type/subtype").optional(),
});

export type DatasetFile = z.infer<typeof DatasetFile>;
export type VersionFile = z.infer<typeof VersionFile>;
export type EpisodeLine = z.infer<typeof EpisodeLine>;
export type AnnotationLine = z.infer<typeof AnnotationLine>;
export type FileLine = z.infer<typeof FileLine>;

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
export function mediaTypeOf(file: FileLine): string {
  if (file.media_type) return file.media_type;
  const extension = file.path.split(".").at(-1)?.toLowerCase() ?? "";
  return MEDIA_TYPES[extension] ?? "application/octet-stream";
}

/** Wording for operators reading a terminal ("missing field 'task'"); parse with `reportInput` so missing values show. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `'${k}'`).join(", ")}`;
  if (issue.code === "invalid_type" && issue.input === undefined) return `missing field '${field}'`;
  return issue.message;
}
