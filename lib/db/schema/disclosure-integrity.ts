import { bigint, check, index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { timestamptz } from "../columns";

export const VERIFICATION_MODES = ["full", "incremental"] as const;
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
    /** `full` walked from the genesis; `incremental` from the checkpoint before. */
    mode: text().$type<VerificationMode>().notNull(),
    entriesChecked: bigint("entries_checked", { mode: "number" }).notNull(),
    durationMs: integer("duration_ms").notNull(),
  },
  (t) => [
    index("disclosure_checkpoints_seq_idx").on(t.seq, t.verifiedAt),
    index("disclosure_checkpoints_full_idx").on(t.verifiedAt).where(sql`${t.mode} = 'full'`),
    check("disclosure_checkpoints_mode_check", sql`${t.mode} in ('full', 'incremental')`),
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
