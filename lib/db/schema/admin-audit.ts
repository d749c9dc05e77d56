import { sql } from "drizzle-orm";
import { bigint, index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt } from "../columns";

/**
 * Every administrative change, with who made it and when, written in the change's own transaction.
 * Append-only and hash-chained by the database (migration 0023): its trigger sets `seq`,
 * `prevHash` and `hash` on insert, whatever is given for them; the others refuse UPDATE, DELETE
 * and TRUNCATE. lib/admin/audit.ts's `verifyAdminAudit` walks the chain.
 */
export const adminAudit = pgTable(
  "admin_audit",
  {
    id: bigint({ mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    occurredAt: createdAt("occurred_at"),
    /** `user` (portal) or `operator` (das-admin). */
    actorKind: text("actor_kind").notNull(),
    /** A user id, or the operator's login name. */
    actorId: text("actor_id").notNull(),
    actorLabel: text("actor_label").notNull(),
    action: text().notNull(),
    targetId: text("target_id").notNull(),
    details: jsonb().$type<Record<string, unknown>>().notNull().default({}),
    // Set by the chain's trigger: the insert sends DEFAULT (there is none, so null) and the trigger fills them in.
    seq: bigint({ mode: "number" }).notNull().default(sql`null`),
    prevHash: text("prev_hash").notNull().default(sql`null`),
    hash: text().notNull().default(sql`null`),
  },
  (t) => [index("admin_audit_occurred_idx").on(t.occurredAt), uniqueIndex("admin_audit_seq_key").on(t.seq)],
);
