import { z } from "zod";
import { MAX_FILES_PER_DOWNLOAD, type DownloadRequest } from "../downloads/scope";
import type { PreviewRequest } from "../previews/create-preview";
import { durationRangeProblem, EPISODE_FILTER_FIELDS, isFiltered, type EpisodeFilter } from "../catalog/episode-filter";
import {
  FREE_TEXT_DESCRIPTION,
  NOT_BLANK_FREE_TEXT,
  UNSAFE_CHARACTERS_DESCRIPTION,
  WITHOUT_CONTROL_CHARACTERS,
  WITHOUT_UNSAFE_CHARACTERS,
} from "../characters";
import { CURSOR_MAX_LENGTH, CURSOR_PATTERN } from "../cursor";

/** A non-empty filter value, compared exactly. */
export const filterValue = z
  .string("must be a string")
  .min(1, "must not be empty")
  .max(200, "must be at most 200 characters")
  .regex(WITHOUT_UNSAFE_CHARACTERS, `must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`);

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

const limitParam = z
  .string()
  .regex(/^[0-9]{1,4}$/, `must be an integer from 1 to ${MAX_LIMIT}`)
  .transform(Number)
  .pipe(
    z
      .number()
      .int()
      .min(1, `must be an integer from 1 to ${MAX_LIMIT}`)
      .max(MAX_LIMIT, `must be an integer from 1 to ${MAX_LIMIT}`),
  )
  .default(DEFAULT_LIMIT);

// The cursor's shape is checked where it is decoded (lib/cursor.ts), so that a cursor of any other
// shape is refused as every altered cursor is, 400 `invalid_cursor`; the document states the shape.
const cursorParam = z.string().min(1, "must not be empty").max(CURSOR_MAX_LENGTH, "is too long").optional();

// The descriptions and examples below are what the OpenAPI document says about each parameter.
const limit = limitParam.meta({
  description: `Items per page, ${1} to ${MAX_LIMIT}.`,
  example: 100,
  // On the wire a query value is a string of digits; to clients it is an integer.
  override: ({ jsonSchema }) => {
    delete jsonSchema.pattern;
    Object.assign(jsonSchema, { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT });
  },
});
/**
 * A cursor as a query value: any text up to its length on the wire, refused as `invalid_cursor` by
 * the verb when the service did not issue it, and documented with the shape every issued one has.
 */
export const cursorQuery = (description: string) =>
  cursorParam.meta({
    description,
    override: ({ jsonSchema }) => {
      jsonSchema.pattern = CURSOR_PATTERN.source;
    },
  });
const cursor = cursorQuery(
  "The `next_cursor` of the previous page, unchanged. Cursors are bound to the query that made them; only `limit` may change. A cursor of this shape that the service did not issue for this query is 400 `invalid_cursor`.",
);
const filter = (what: string, example: string) =>
  filterValue.optional().meta({ description: `Only episodes whose ${what} is exactly this value.`, example });

/** The longest duration a bound may name, in seconds (about 31 years). */
const MAX_DURATION_S = 1e9;
const durationBound = z
  .number("must be a number of seconds")
  .min(0, "must not be negative")
  .max(MAX_DURATION_S, `must be at most ${MAX_DURATION_S} seconds`);
/**
 * A number as a query value, written as JSON writes numbers (`12`, `12.5`, `5e-7`): the document
 * calls the parameter a number, and every language's plain formatting of one must be understood.
 */
const QUERY_NUMBER = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
const durationParam = (description: string, example: number) =>
  z
    .string()
    .regex(QUERY_NUMBER, "must be a number of seconds, such as 12 or 12.5")
    .transform(Number)
    .pipe(durationBound)
    .optional()
    .meta({
      description,
      example,
      // On the wire a query value is a string; to clients it is a number.
      override: ({ jsonSchema }) => {
        delete jsonSchema.pattern;
        Object.assign(jsonSchema, { type: "number", minimum: 0, maximum: MAX_DURATION_S });
      },
    });
const recoveryParam = z
  .enum(["true", "false"], "must be true or false")
  .transform((value) => value === "true")
  .optional()
  .meta({
    description: "`true`: only episodes with a recovery; `false`: only episodes without one.",
    example: true,
    override: ({ jsonSchema }) => {
      Object.assign(jsonSchema, { type: "boolean" });
      delete jsonSchema.enum;
    },
  });

/** The episode filter as query parameters: the same on the API's episode list and the portal's explorer. */
export const EpisodeFilterQuery = {
  outcome: filter("outcome", "failure"),
  environment: filter("environment", "kitchen-a"),
  task: filter("task", "pick_cup"),
  contributor: filter("contributor", "contrib-ams-01"),
  has_recovery: recoveryParam,
  min_duration_s: durationParam("Only episodes at least this many seconds long (the bound included).", 10),
  max_duration_s: durationParam(
    "Only episodes at most this many seconds long (the bound included). Not below `min_duration_s`: a range whose minimum exceeds its maximum is 400 `invalid_parameter` (JSON Schema cannot compare two parameters).",
    30.5,
  ),
};

const rangeInOrder = (f: EpisodeFilter) => durationRangeProblem(f) === null;
const RANGE_IN_ORDER = { message: "must not exceed max_duration_s", path: ["min_duration_s"] };

/** Query parameters of each endpoint: the routes validate with these, and the OpenAPI document is built from them. */
export const PageQuery = z.object({ limit, cursor });

export const EpisodesQuery = z.object({ ...EpisodeFilterQuery, limit, cursor }).refine(rangeInOrder, RANGE_IN_ORDER);

export const AnnotationsQuery = z.object({
  version: z
    .string()
    .min(1, "must not be empty")
    .max(40, "is too long")
    .regex(WITHOUT_CONTROL_CHARACTERS, "must not contain control characters")
    .optional()
    .meta({
      description: "Read the spans in this version instead of the newest licensed one that contains the episode.",
      example: "1.1.0",
    }),
  limit,
  cursor,
});

const STREAM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
// Identifiers are checked here, where the body is read: one with a control character cannot exist
// (PostgreSQL cannot even compare a NUL), so it is refused before any lookup.
const identifier = (what: string) =>
  z.string(`must be ${what}`).regex(WITHOUT_CONTROL_CHARACTERS, `must not contain control characters`);
const unique = (values: string[]) => new Set(values).size === values.length;

/** POST /v1/downloads: exactly one of episode_ids / filter, or neither for the whole version. */
export const DownloadBody = z
  .strictObject({
    dataset_id: identifier("a string")
      .min(1, "must not be empty")
      .max(100, "is too long")
      .meta({ example: "kitchen-pick-place" }),
    version: identifier("a string")
      .min(1, "must not be empty")
      .max(40, "is too long")
      .meta({ description: "A version licensed to the key.", example: "1.1.0" }),
    episode_ids: z
      .array(
        identifier("strings").min(1, "must not be empty strings").max(200, "must be at most 200 characters"),
        "must be an array of episode ids",
      )
      .min(1, "must list at least one episode (leave it out for the whole version)")
      .max(MAX_FILES_PER_DOWNLOAD, `must list at most ${MAX_FILES_PER_DOWNLOAD} episodes; split the request`)
      .refine(unique, "must not repeat an episode id")
      .optional()
      .meta({
        override: { uniqueItems: true },
        description: "Download only these episodes' files. Leave out (with `filter`) for the whole version.",
        example: ["kpp-000042", "kpp-000043"],
      }),
    filter: z
      .strictObject(
        {
          outcome: filterValue.optional(),
          environment: filterValue.optional(),
          task: filterValue.optional(),
          contributor: filterValue.optional(),
          has_recovery: z.boolean("must be true or false").optional(),
          min_duration_s: durationBound.optional(),
          max_duration_s: durationBound.optional(),
        },
        `must be an object with any of ${EPISODE_FILTER_FIELDS.join(", ")}`,
      )
      .refine(isFiltered, "needs at least one field (leave filter out for the whole version)")
      .refine(rangeInOrder, RANGE_IN_ORDER)
      .optional()
      .meta({
        description:
          "Download the files of the episodes matching this filter: the episodes endpoint's filters, with `has_recovery` a boolean and the durations numbers. Not together with `episode_ids`. `min_duration_s` must not exceed `max_duration_s` (400 `invalid_body`: JSON Schema cannot compare two fields).",
        example: { outcome: "failure", has_recovery: true },
        // isFiltered, as the schema states it: every field the object may have is a filter.
        override: { minProperties: 1 },
      }),
    streams: z
      .array(z.string("must be strings").regex(STREAM_NAME, "must be stream names"), "must be an array of stream names")
      .min(1, "must list at least one stream (leave it out for every stream)")
      .max(100, "is too long")
      .refine(unique, "must not repeat a stream")
      .optional()
      .meta({
        override: { uniqueItems: true },
        description:
          "Only files of these streams (files of the whole version, which record no stream, are then left out unless `include_version_files`).",
        example: ["cam_front"],
      }),
    include_version_files: z.boolean("must be true or false").optional().meta({
      description:
        "Also deliver every file of the whole version (files of no episode, such as a LeRobot dataset's `meta/`), whatever `streams` says. A download of the whole version without `streams` includes them anyway.",
      example: true,
    }),
  })
  .refine((b) => !(b.episode_ids && b.filter), { message: "give episode_ids or filter, not both", path: ["filter"] })
  .meta({
    id: "DownloadRequest",
    // The refinement above, as the schema states it.
    override: { not: { required: ["episode_ids", "filter"] } },
    description: `The scope of a download: one licensed version, narrowed by \`episode_ids\` or \`filter\` (not both) and/or \`streams\`. At most ${MAX_FILES_PER_DOWNLOAD.toLocaleString("en")} files per request.`,
  }) satisfies z.ZodType<DownloadRequest>;

export type DownloadBody = z.infer<typeof DownloadBody>;

/** POST /v1/datasets/{id}/versions/{version}/plan: a pull's scope, as `das pull` takes it. */
export const PlanBody = z
  .strictObject({
    episode_ids: z
      .array(
        identifier("strings").min(1, "must not be empty strings").max(200, "must be at most 200 characters"),
        "must be an array of episode ids",
      )
      .min(1, "must list at least one episode (leave it out for every episode)")
      .max(50_000, "must list at most 50000 episodes; split the pull")
      .refine(unique, "must not repeat an episode id")
      .optional()
      .meta({
        override: { uniqueItems: true },
        description: "Only these episodes' files. With `filter`, the episodes that are listed and match it.",
        example: ["kpp-000042", "kpp-000043"],
      }),
    filter: DownloadBody.shape.filter,
    streams: DownloadBody.shape.streams,
    keep_original_indices: z.boolean("must be true or false").optional().meta({
      description:
        "A LeRobot v3.0 subset: keep the data files as delivered and the episodes' indices as they are, rather than have them written renumbered 0..k-1.",
      example: false,
    }),
  })
  .meta({
    id: "PlanRequest",
    description:
      "What to pull: every episode of the version, or those listed and/or matching a filter, in some or all streams.",
  });

/** POST /v1/previews: one episode, in a version (by default the newest licensed one that holds it), some or all of its video streams. */
export const PreviewBody = z
  .strictObject({
    episode_id: identifier("a string")
      .min(1, "must not be empty")
      .max(200, "is too long")
      .meta({ example: "kpp-000042" }),
    version: identifier("a string").min(1, "must not be empty").max(40, "is too long").optional().meta({
      description:
        "Preview the episode in this version instead of the newest licensed one that contains it (as for annotations).",
      example: "1.1.0",
    }),
    streams: z
      .array(z.string("must be strings").regex(STREAM_NAME, "must be stream names"), "must be an array of stream names")
      .min(1, "must list at least one stream (leave it out for every video stream)")
      .max(100, "is too long")
      .refine(unique, "must not repeat a stream")
      .optional()
      .meta({
        override: { uniqueItems: true },
        description:
          "Only these video streams of the episode. Leave out for all of them. A stream that is not video (or not the episode's) is 400.",
        example: ["wrist_cam"],
      }),
  })
  .meta({
    id: "PreviewRequest",
    description:
      "An episode to watch: signed URLs of its video streams, recorded in the disclosure log with channel `preview`.",
  }) satisfies z.ZodType<PreviewRequest>;

export type PreviewBody = z.infer<typeof PreviewBody>;

// The limit is the domain's; the API states it as part of its contract, and API clients (lib/client) read it here.
export { MAX_FILES_PER_DOWNLOAD };

/** `Idempotency-Key`: any printable ASCII up to 255 characters (a UUID is typical). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The request headers POST /v1/downloads reads besides Authorization. */
export const DownloadHeaders = idempotencyHeaders("download");

/** The request headers POST /v1/datasets/{id}/versions/{version}/plan reads besides Authorization. */
export const PlanHeaders = idempotencyHeaders("plan");

function idempotencyHeaders(what: "download" | "plan") {
  return z.object({
    "Idempotency-Key": z
      .string()
      .regex(IDEMPOTENCY_KEY, {
        error: "it must be 1 to 255 printable ASCII characters without spaces (a UUID is typical).",
      })
      .optional()
      .meta({
        description:
          what === "download"
            ? "Makes the request safe to retry: a retry with the same key and body returns the same download (200) without a second disclosure-log entry; the same key with another body is 409 `idempotency_conflict`."
            : "Makes the request safe to retry: a retry with the same key and body returns the same plan, its URLs signed at the same time, without a second disclosure-log entry; the same key with another body, or once the version has changed, is 409 `idempotency_conflict`.",
        example: "5b0c6f3e-8f0a-4c4e-9d8e-2f1b7a9c3d10",
      }),
  });
}

/** POST /v1/notices/{notice_id}/acknowledgements: what the recipient did about a notice. */
export const AcknowledgementBody = z
  .strictObject({
    statement: z
      .string("must be a string")
      .min(1, "must not be empty")
      .max(4000, "must be at most 4000 characters")
      .regex(NOT_BLANK_FREE_TEXT, `must say something, without ${FREE_TEXT_DESCRIPTION}`)
      .meta({
        description:
          "What the organisation did, in its own words (for example that it deleted every copy). Kept trimmed of white space at either end.",
        example: "Deleted the withdrawn episodes' files from our training store and every copy we know of.",
      }),
    deleted_paths: z
      .array(
        z
          .string("must be an array of strings")
          .min(1, "must not hold empty strings")
          .max(1024, "must hold paths of at most 1024 characters")
          .regex(WITHOUT_CONTROL_CHARACTERS, "must not contain control characters"),
        "must be an array of paths",
      )
      .max(100_000, "must list at most 100000 paths")
      .refine((paths) => new Set(paths).size === paths.length, "must not name a path more than once")
      .default([])
      .meta({
        uniqueItems: true,
        description:
          "The files the organisation deleted, each once, by the path the manifest of the download or preview that delivered it names. Only files this notice's downloads and previews delivered may be named: another path is 400 naming it. Optional: none is `[]`.",
        example: ["videos/cam_front/episode_000042.mp4"],
      }),
  })
  .meta({ id: "AcknowledgementRequest" });

export const NoticePath = z.object({
  notice_id: z
    .string()
    .regex(/^nt_[0-9a-f]{32}$/, "must be a notice id (nt_ and 32 hex digits)")
    .meta({ description: "Identifier of the notice.", example: "nt_0f3a5c2e9b7d4a1c8e6f2b0d9c7a5e3f" }),
});
