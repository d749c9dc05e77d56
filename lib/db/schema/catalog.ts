import { bigint, boolean, check, integer, jsonb, pgTable, primaryKey, text, unique } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { byteOrderText, createdAt, timestamptz } from "../columns";

/**
 * Whether the portal shows a dataset beyond its licensees: `unlisted` (the default) shows it only to
 * organisations holding a licence; `listed` shows its catalog facts (never its episodes or files) to
 * every signed-in member of an organisation, who may request a licence. The API ignores it.
 */
export const DATASET_LISTINGS = ["unlisted", "listed"] as const;
export type DatasetListing = (typeof DATASET_LISTINGS)[number];

export const datasets = pgTable(
  "datasets",
  {
    id: byteOrderText("id").primaryKey(),
    title: text().notNull(),
    description: text().notNull(),
    createdAt: createdAt(),
    updatedAt: timestamptz("updated_at").notNull().defaultNow(),
    listing: text().$type<DatasetListing>().notNull().default("unlisted"),
  },
  (t) => [check("datasets_listing_check", sql`${t.listing} in ('unlisted', 'listed')`)],
);

/**
 * Episode counts per filter, computed once at import: a released version never changes, so the
 * `total` of any filtered episode page is a lookup, not a count over a million rows.
 * `pairs` is keyed by JSON.stringify([outcome, environment]).
 */
export type FacetCounts = {
  outcome: Record<string, number>;
  environment: Record<string, number>;
  pairs: Record<string, number>;
};

/**
 * A facet's count: own keys only, since an outcome or environment is whatever a dataset names
 * (`__proto__` or `constructor` among them) and must not reach Object.prototype.
 */
export const countOf = (counts: Record<string, number>, key: string): number =>
  Object.hasOwn(counts, key) ? counts[key]! : 0;

/** What a version was imported from: our own import directory (docs/import-format.md) or a LeRobot dataset. */
export const SOURCE_FORMATS = ["jsonl", "lerobot"] as const;
export type SourceFormat = (typeof SOURCE_FORMATS)[number];

/** The LeRobot facts of a version imported from a LeRobot dataset (docs/lerobot.md). */
export type LeRobotFormatInfo = {
  codebase_version: string;
  robot_type: string | null;
  fps: number;
  total_frames: number;
  cameras: {
    key: string;
    storage: "video" | "image";
    codec: string | null;
    height: number | null;
    width: number | null;
    fps: number | null;
  }[];
};

export const datasetVersions = pgTable(
  "dataset_versions",
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    datasetId: byteOrderText("dataset_id")
      .notNull()
      .references(() => datasets.id),
    version: text().notNull(),
    major: integer().notNull(),
    minor: integer().notNull(),
    patch: integer().notNull(),
    releasedAt: timestamptz("released_at").notNull(),
    episodeCount: integer("episode_count").notNull(),
    fileCount: integer("file_count").notNull(),
    totalBytes: bigint("total_bytes", { mode: "number" }).notNull(),
    streams: text().array().notNull(),
    facetCounts: jsonb("facet_counts").$type<FacetCounts>().notNull(),
    /** SHA-256 over the canonical content of the import; decides "identical re-import" vs "changed". */
    contentSha256: text("content_sha256").notNull(),
    importedAt: createdAt("imported_at"),
    sourceFormat: text("source_format").$type<SourceFormat>().notNull().default("jsonl"),
    /** The source format's own facts (for LeRobot: codebase version, robot type, fps, cameras); null for jsonl. */
    formatInfo: jsonb("format_info").$type<LeRobotFormatInfo>(),
    /** Each licence receives its own marked copy of every file (lib/fingerprints); off by default. */
    fingerprinted: boolean().notNull().default(false),
  },
  (t) => [
    unique("dataset_versions_dataset_version_key").on(t.datasetId, t.version),
    check("dataset_versions_source_format_check", sql`${t.sourceFormat} in ('jsonl', 'lerobot')`),
  ],
);

export const CHANGELOG_TYPES = ["added", "changed", "fixed", "removed", "deprecated", "security"] as const;
export type ChangelogType = (typeof CHANGELOG_TYPES)[number];

export const changelogEntries = pgTable(
  "changelog_entries",
  {
    versionId: integer("version_id")
      .notNull()
      .references(() => datasetVersions.id),
    position: integer().notNull(),
    type: text().$type<ChangelogType>().notNull(),
    description: text().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.versionId, t.position] }),
    check(
      "changelog_entries_type_check",
      sql`${t.type} in ('added', 'changed', 'fixed', 'removed', 'deprecated', 'security')`,
    ),
  ],
);
