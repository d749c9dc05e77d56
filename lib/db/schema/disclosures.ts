import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { byteOrderText, timestamptz } from "../columns";
import { datasetVersions } from "./catalog";
import { licences } from "./licences";
import { apiKeys } from "./api-keys";
import { organizations, users } from "./organizations";
import { termsDocuments } from "./terms";

/**
 * The log's tables and the summaries derived from its entries at append, each append-only by a
 * trigger named `<table>_append_only` (migrations 0002, 0009, 0011, 0014 and 0025), and each
 * partitioned by month of its entry's `occurred_at` (migration 0026): a month of them is archived
 * together.
 */
export const DISCLOSURE_LOG_TABLES = [
  "disclosures",
  "disclosure_episodes",
  "disclosure_contributors",
  "disclosure_episode_entries",
  "disclosure_files",
] as const;

export const DISCLOSURE_CHANNELS = ["api", "portal", "preview", "hub"] as const;
export type DisclosureChannel = (typeof DISCLOSURE_CHANNELS)[number];

/** The role under which a reviewer or admin previewed, disclosed without an organisation's licence. */
export type ReviewerRole = "reviewer" | "admin";

/** The scope as the client asked for it (the body of POST /v1/downloads, normalised). */
export type RequestedScope = {
  episode_ids?: string[];
  /** lib/catalog/episode-filter.ts's EpisodeFilter (the store cannot import the catalog). */
  filter?: {
    outcome?: string;
    environment?: string;
    task?: string;
    contributor?: string;
    has_recovery?: boolean;
    min_duration_s?: number;
    max_duration_s?: number;
  };
  streams?: string[];
  /** Every file of the whole version along with the scope (recorded only when true). */
  include_version_files?: true;
  /** Files named by path: a file of a dataset repository fetched through the Hub protocol (channel `hub`). */
  paths?: string[];
};

/**
 * The disclosure log: one row per download request or preview, written in the transaction that
 * resolves the scope, before any URL leaves the server. Append-only (triggers refuse UPDATE,
 * DELETE and TRUNCATE, migration 0001) and hash-chained: `hash` covers the entry and `prev_hash`.
 * The row's id is the download's (`dl_`) or the preview's (`pv_`) id.
 *
 * Every entry is made under an organisation's licence, except a preview by a reviewer or an admin:
 * they hold no licence, so such an entry has no organisation and no licence but records the role
 * it was made under (`reviewer_role`). The checks below allow exactly that and nothing else.
 */
export const disclosures = pgTable(
  "disclosures",
  {
    id: text().notNull(),
    seq: bigint({ mode: "number" }).notNull(),
    occurredAt: timestamptz("occurred_at").notNull(),
    organizationId: text("organization_id").references(() => organizations.id),
    apiKeyId: text("api_key_id").references(() => apiKeys.id),
    userId: text("user_id").references(() => users.id),
    channel: text().$type<DisclosureChannel>().notNull(),
    datasetId: text("dataset_id").notNull(),
    version: text().notNull(),
    versionId: integer("version_id")
      .notNull()
      .references(() => datasetVersions.id),
    licenceId: text("licence_id").references(() => licences.id),
    /**
     * Whether the entry names its licence's terms, as every entry under a licence has since
     * migration 0017: its hash then covers `terms_sha256` (lib/disclosures/chain.ts, version 3).
     * False for the entries before it and for reviewers' previews, which hash as they always did.
     */
    namesTerms: boolean("names_terms").notNull().default(false),
    /** SHA-256 of the terms document of the licence the entry was delivered under; null when it has none. */
    termsSha256: text("terms_sha256").references(() => termsDocuments.sha256),
    reviewerRole: text("reviewer_role").$type<ReviewerRole>(),
    requestedScope: jsonb("requested_scope").$type<RequestedScope>().notNull(),
    episodeCount: integer("episode_count").notNull(),
    fileCount: integer("file_count").notNull(),
    totalBytes: bigint("total_bytes", { mode: "number" }).notNull(),
    /** SHA-256 over the sorted resolved episode ids, one per line: the hash chain covers them through it. */
    episodesSha256: text("episodes_sha256").notNull(),
    /**
     * An entry that delivered per-licence copies (a fingerprinted version): SHA-256 over its files'
     * paths and sha256s (`filesDigest`), whose rows are in `disclosure_files`; null otherwise.
     */
    filesSha256: text("files_sha256"),
    expiresAt: timestamptz("expires_at").notNull(),
    requestId: text("request_id").notNull(),
    /**
     * The key or user an Idempotency-Key belongs to, and the key itself: recorded with the entry;
     * their uniqueness is `disclosure_idempotency_keys`'s (migration 0026).
     */
    idempotencyScope: text("idempotency_scope"),
    idempotencyKey: text("idempotency_key"),
    /** SHA-256 of the canonical request body: a retry with another body under the same key is a conflict. */
    requestSha256: text("request_sha256").notNull(),
    prevHash: text("prev_hash").notNull(),
    hash: text().notNull(),
  },
  // Partitioned by month of occurred_at (migration 0026): a unique key holds it.
  (t) => [
    primaryKey({ name: "disclosures_pkey", columns: [t.id, t.occurredAt] }),
    uniqueIndex("disclosures_seq_key").on(t.seq, t.occurredAt),
    // Each filter of the reviewer's search ends in seq, so any page of it is a bounded index walk
    // newest first; a time range becomes a seq range through (occurred_at, seq) (migration 0009).
    index("disclosures_occurred_idx").on(t.occurredAt, t.seq),
    index("disclosures_organization_idx").on(t.organizationId, t.seq),
    index("disclosures_dataset_idx").on(t.datasetId, t.version, t.seq),
    index("disclosures_version_idx").on(t.version, t.seq),
    index("disclosures_api_key_idx").on(t.apiKeyId, t.seq),
    index("disclosures_user_idx").on(t.userId, t.seq),
    index("disclosures_channel_idx").on(t.channel, t.seq),
    index("disclosures_organization_channel_idx").on(t.organizationId, t.channel, t.seq),
    index("disclosures_organization_dataset_idx").on(t.organizationId, t.datasetId, t.seq),
    index("disclosures_licence_idx").on(t.licenceId, t.seq),
    index("disclosures_terms_idx").on(t.termsSha256, t.seq).where(sql`${t.termsSha256} is not null`),
    // A repeated preview or Hub download finds the entry whose URLs are still valid (migration 0024).
    index("disclosures_reusable_idx").on(t.requestSha256, t.expiresAt).where(sql`${t.channel} in ('preview', 'hub')`),
    check("disclosures_channel_check", sql`${t.channel} in ('api', 'portal', 'preview', 'hub')`),
    check(
      "disclosures_basis_check",
      sql`(${t.reviewerRole} is null and ${t.organizationId} is not null and ${t.licenceId} is not null)
        or (${t.reviewerRole} in ('reviewer', 'admin') and ${t.channel} = 'preview' and ${t.userId} is not null
            and ${t.apiKeyId} is null and ${t.organizationId} is null and ${t.licenceId} is null)`,
    ),
    // Terms only with a licence, and only when the entry names them (migration 0017, not validated against older rows).
    check(
      "disclosures_terms_check",
      sql`(${t.termsSha256} is null or ${t.namesTerms}) and (not ${t.namesTerms} or ${t.licenceId} is not null)`,
    ),
    check("disclosures_recipient_check", sql`${t.apiKeyId} is not null or ${t.userId} is not null`),
    check("disclosures_seq_positive", sql`${t.seq} > 0`),
  ],
);

/**
 * The episodes each disclosure resolved to, so "who received contributor X's episodes?" is one
 * join with `episodes`. The rows are written before the disclosure itself, in its transaction,
 * outside the short section that extends the chain; the append checks they are all there, and no
 * foreign key is checked at commit under the chain's lock (migration 0015).
 */
export const disclosureEpisodes = pgTable(
  "disclosure_episodes",
  {
    disclosureId: text("disclosure_id").notNull(),
    versionId: integer("version_id").notNull(),
    episodeId: byteOrderText("episode_id").notNull(),
    /** The entry's: its month's partition (migration 0026). */
    occurredAt: timestamptz("occurred_at").notNull(),
  },
  (t) => [primaryKey({ name: "disclosure_episodes_pk", columns: [t.disclosureId, t.episodeId, t.occurredAt] })],
);

/**
 * Each Idempotency-Key of a download and the entry it made, unique for ever per key or user
 * (migration 0026): the log is partitioned by month, and a unique index of a partitioned table can
 * only be unique within a month. Written in the entry's statement; append-only.
 */
export const disclosureIdempotencyKeys = pgTable(
  "disclosure_idempotency_keys",
  {
    scope: text().notNull(),
    key: text().notNull(),
    disclosureId: text("disclosure_id").notNull(),
    /** The entry's: a retry with another body under the same key is a conflict. */
    requestSha256: text("request_sha256").notNull(),
  },
  (t) => [primaryKey({ name: "disclosure_idempotency_keys_pk", columns: [t.scope, t.key] })],
);

/**
 * Which entries disclosed each episode, in the log's order: derived from `disclosure_episodes`
 * and the entry when it is appended (lib/disclosures/append.ts), so that "who received episode E"
 * is one range of one index, newest first, however many entries hold it. It carries the entry's
 * organisation and channel, which its key's index INCLUDEs (migration 0014, which this builder
 * cannot say), so an episode searched with either reads no table row until a page is cut.
 */
export const disclosureEpisodeEntries = pgTable(
  "disclosure_episode_entries",
  {
    episodeId: byteOrderText("episode_id").notNull(),
    seq: bigint({ mode: "number" }).notNull(),
    /** The entry's: null for a reviewer's or admin's preview. */
    organizationId: text("organization_id"),
    channel: text().$type<DisclosureChannel>().notNull(),
    occurredAt: timestamptz("occurred_at").notNull(),
  },
  (t) => [primaryKey({ name: "disclosure_episode_entries_pk", columns: [t.episodeId, t.seq, t.occurredAt] })],
);

/**
 * Whose episodes each entry disclosed, and how many of each contributor's: derived from
 * `disclosure_episodes` and the catalog when the entry is appended (lib/disclosures/append.ts), so
 * "who received contributor C's episodes" walks (contributor, seq) instead of joining tens of
 * millions of disclosed episodes with the catalog. Append-only like the log (migration 0009). It
 * carries the entry's organisation and channel, so a contributor searched with either is answered
 * from its indexes (migration 0011).
 */
export const disclosureContributors = pgTable(
  "disclosure_contributors",
  {
    // No foreign key: every read joins `disclosures` (migration 0009 says why).
    disclosureId: text("disclosure_id").notNull(),
    seq: bigint({ mode: "number" }).notNull(),
    contributor: text().notNull(),
    episodeCount: integer("episode_count").notNull(),
    /** The entry's: null for a reviewer's or admin's preview. */
    organizationId: text("organization_id"),
    channel: text().$type<DisclosureChannel>().notNull(),
    occurredAt: timestamptz("occurred_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "disclosure_contributors_pk", columns: [t.disclosureId, t.contributor, t.occurredAt] }),
    // Migrations 0011–0013 also INCLUDE the rest of the row in each, which this builder cannot
    // say: a walk of a contributor's entries, alone or with an organisation or a channel, reads no table row.
    index("disclosure_contributors_contributor_idx").on(t.contributor, t.seq),
    index("disclosure_contributors_organization_idx").on(t.contributor, t.organizationId, t.seq),
    index("disclosure_contributors_channel_idx").on(t.contributor, t.channel, t.seq),
  ],
);
