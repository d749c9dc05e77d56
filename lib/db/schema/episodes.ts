import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
} from "drizzle-orm/pg-core";
import { byteOrderText } from "../columns";
import { datasetVersions } from "./catalog";

const versionId = () =>
  integer("version_id")
    .notNull()
    .references(() => datasetVersions.id);

export const episodes = pgTable(
  "episodes",
  {
    versionId: versionId(),
    episodeId: byteOrderText("episode_id").notNull(),
    task: text().notNull(),
    environment: text().notNull(),
    durationS: doublePrecision("duration_s").notNull(),
    outcome: text().notNull(),
    hasRecovery: boolean("has_recovery").notNull(),
    contributor: text().notNull(),
    streams: text().array().notNull(),
  },
  (t) => [
    // One index per filter shape, each ending in episode_id, so every page is an index range scan.
    primaryKey({ columns: [t.versionId, t.episodeId] }),
    index("episodes_outcome_idx").on(t.versionId, t.outcome, t.episodeId),
    index("episodes_environment_idx").on(t.versionId, t.environment, t.episodeId),
    index("episodes_outcome_environment_idx").on(t.versionId, t.outcome, t.environment, t.episodeId),
    // Hash, not btree: it serves lookups by id across versions, and cannot be mistaken by the
    // planner for a way to read a page in id order (a btree on episode_id alone was, skipping
    // every other version's rows first: 15 ms per page instead of 0.5 ms at a million episodes).
    index("episodes_episode_id_idx").using("hash", t.episodeId),
    index("episodes_contributor_idx").on(t.contributor),
    // Migration 0021: task's and contributor's pages, and duration ranges. The migration also
    // INCLUDEs has_recovery and duration_s in the first two (and has_recovery in the third), which
    // this builder cannot express, so that totals under them count from the index alone.
    index("episodes_task_idx").on(t.versionId, t.task, t.episodeId),
    index("episodes_version_contributor_idx").on(t.versionId, t.contributor, t.episodeId),
    index("episodes_duration_idx").on(t.versionId, t.durationS),
  ],
);

/**
 * How many of a version's episodes share each combination of the categorical filters, written at
 * import: the `total` of a page filtered on any of them is a sum over these few rows rather than a
 * count over the version (migration 0021). Withdrawn episodes are subtracted where it is read.
 */
export const episodeFacets = pgTable(
  "episode_facets",
  {
    versionId: versionId(),
    outcome: text().notNull(),
    environment: text().notNull(),
    task: text().notNull(),
    contributor: text().notNull(),
    hasRecovery: boolean("has_recovery").notNull(),
    episodes: integer().notNull(),
  },
  (t) => [
    primaryKey({
      name: "episode_facets_pk",
      columns: [t.versionId, t.outcome, t.environment, t.task, t.contributor, t.hasRecovery],
    }),
  ],
);

export const annotations = pgTable(
  "annotations",
  {
    id: bigint({ mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    versionId: versionId(),
    episodeId: byteOrderText("episode_id").notNull(),
    label: text().notNull(),
    startS: doublePrecision("start_s").notNull(),
    endS: doublePrecision("end_s").notNull(),
    attributes: jsonb().$type<Record<string, unknown>>().notNull().default({}),
  },
  (t) => [index("annotations_episode_idx").on(t.versionId, t.episodeId, t.startS, t.id)],
);

/**
 * A version's files. `episode_id` is the episode when the file holds exactly one, else null (a
 * file of the whole version, or one shared by several episodes); `file_episodes` is the one truth
 * for which episodes a file holds.
 */
export const files = pgTable(
  "files",
  {
    versionId: versionId(),
    path: byteOrderText("path").notNull(),
    episodeId: byteOrderText("episode_id"),
    stream: text(),
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
    sha256: text().notNull(),
    mediaType: text("media_type").notNull(),
  },
  (t) => [primaryKey({ columns: [t.versionId, t.path] }), index("files_episode_idx").on(t.versionId, t.episodeId)],
);

/**
 * Which episodes each file holds, and where each lies in it: a file belongs to no episode (a file
 * of the whole version: no row here), one, or several (a LeRobot v3.0 video or data file holds
 * episodes back to back). `start_s`/`end_s` are the episode's seconds in the file's own time (0
 * and the episode's duration for a file of its own; null where the import did not say);
 * `from_frame`/`to_frame` the episode's frames [from, to) where the source numbers them (LeRobot
 * v3.0 data files: the global frame `index`). Like `files.episode_id` and `annotations`, it has no
 * foreign key to `files` or `episodes`: the importer's cross-checks guarantee both, and a version
 * never changes after its import (checking 300,000 rows one by one would cost the import seconds).
 */
export const fileEpisodes = pgTable(
  "file_episodes",
  {
    versionId: versionId(),
    path: byteOrderText("path").notNull(),
    episodeId: byteOrderText("episode_id").notNull(),
    startS: doublePrecision("start_s"),
    endS: doublePrecision("end_s"),
    fromFrame: bigint("from_frame", { mode: "number" }),
    toFrame: bigint("to_frame", { mode: "number" }),
  },
  (t) => [
    primaryKey({ columns: [t.versionId, t.path, t.episodeId] }),
    // The files of given episodes (download scopes, the manifest of an episode).
    index("file_episodes_episode_idx").on(t.versionId, t.episodeId, t.path),
  ],
);
