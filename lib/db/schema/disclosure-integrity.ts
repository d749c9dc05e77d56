import { bigint, check, date, index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { timestamptz } from "../columns";

/** `month`: the checkpoint at a month's last entry, recorded when the month closed (migration 0027). */
export const VERIFICATION_MODES = ["full", "incremental", "month"] as const;
export type VerificationMode = (typeof VERIFICATION_MODES)[number];

/**
 * The heads of the disclosure log that a verification reached intact (lib/disclosures/verify.ts):
 * incremental verification starts from the newest instead of the genesis. Append-only (triggers,
 * migration 0008). A speed-up, not evidence: whoever can rewrite the log can rewrite this table
 * too; the signed digests in the object store are what a reviewer relies on.
 */
export const disclosureCheckpoints = pgTable(
  "disclosure_checkpoints",
  {
    id: bigint({ mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    seq: bigint({ mode: "number" }).notNull(),
    hash: text().notNull(),
    verifiedAt: timestamptz("verified_at").notNull().defaultNow(),
    /** `full` walked from the genesis; `incremental` from the checkpoint before; `month` a month's close. */
    mode: text().$type<VerificationMode>().notNull(),
    entriesChecked: bigint("entries_checked", { mode: "number" }).notNull(),
    durationMs: integer("duration_ms").notNull(),
  },
  (t) => [
    index("disclosure_checkpoints_seq_idx").on(t.seq, t.verifiedAt),
    index("disclosure_checkpoints_full_idx").on(t.verifiedAt).where(sql`${t.mode} = 'full'`),
    check("disclosure_checkpoints_mode_check", sql`${t.mode} in ('full', 'incremental', 'month')`),
    check("disclosure_checkpoints_seq_positive", sql`${t.seq} > 0`),
  ],
);

/**
 * The signed head digests this service wrote to the object store (lib/disclosures/digest.ts): what
 * the periodic writer reads to decide whether one is due and what the next links to. The objects
 * are the evidence; this is their index. Append-only (migration 0008).
 */
export const disclosureDigests = pgTable(
  "disclosure_digests",
  {
    key: text().primaryKey(),
    bucket: text().notNull(),
    seq: bigint({ mode: "number" }).notNull(),
    hash: text().notNull(),
    digestTime: timestamptz("digest_time").notNull(),
    /** SHA-256 of the object's bytes: the next digest's previous_digest_sha256. */
    sha256: text().notNull(),
  },
  (t) => [index("disclosure_digests_time_idx").on(t.digestTime)],
);

/**
 * The months of the log that have closed (migration 0027): what each held, the checkpoint at its
 * last entry, and its signed digest in the archive bucket. Append-only. Joins an archived month to
 * its neighbours: `prev_hash` is what its first entry links to, `last_hash` its last entry's hash.
 */
export const disclosureMonths = pgTable(
  "disclosure_months",
  {
    month: date().primaryKey(),
    entries: bigint({ mode: "number" }).notNull(),
    firstSeq: bigint("first_seq", { mode: "number" }).notNull(),
    lastSeq: bigint("last_seq", { mode: "number" }).notNull(),
    prevHash: text("prev_hash").notNull(),
    lastHash: text("last_hash").notNull(),
    /** disclosure_checkpoints.id of the month's checkpoint (no foreign key: migration 0027 says why). */
    checkpointId: bigint("checkpoint_id", { mode: "number" }).notNull(),
    digestKey: text("digest_key"),
    closedAt: timestamptz("closed_at").notNull().defaultNow(),
  },
  (t) => [
    check("disclosure_months_first_day", sql`${t.month} = date_trunc('month', ${t.month})::date`),
    check(
      "disclosure_months_range",
      sql`${t.firstSeq} > 0 and ${t.lastSeq} >= ${t.firstSeq} and ${t.entries} = ${t.lastSeq} - ${t.firstSeq} + 1`,
    ),
  ],
);

export const ARCHIVE_ACTIONS = ["archived", "restored"] as const;

/** Each month archived to the object store (its partitions then dropped) or restored from it; the latest row says where it is. */
export const disclosureArchives = pgTable(
  "disclosure_archives",
  {
    id: bigint({ mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    month: date()
      .notNull()
      .references(() => disclosureMonths.month),
    action: text().$type<(typeof ARCHIVE_ACTIONS)[number]>().notNull(),
    bucket: text().notNull(),
    manifestKey: text("manifest_key").notNull(),
    manifestSha256: text("manifest_sha256").notNull(),
    at: timestamptz().notNull().defaultNow(),
  },
  (t) => [
    index("disclosure_archives_month_idx").on(t.month, t.id),
    check("disclosure_archives_action_check", sql`${t.action} in ('archived', 'restored')`),
  ],
);
