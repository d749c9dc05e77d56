import { createHash } from "node:crypto";
import { adminAudit } from "../db/schema";
import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireAdmin, type AdminPrincipal } from "../auth/authorize";
import type { AuditAction } from "./audit-actions";

/** The hash before the first entry of the audit's chain. */
export const AUDIT_GENESIS_HASH = "0".repeat(64);

/**
 * Appends an administrative change to the audit, in the change's transaction. The database places
 * it in the audit's hash chain (migration 0023's trigger, under the chain's lock until commit).
 */
export async function recordAdminAction(
  ctx: Ctx<AdminPrincipal>,
  action: AuditAction,
  targetId: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  const p = ctx.principal;
  await ctx.db.insert(adminAudit).values({
    actorKind: p.kind,
    actorId: p.kind === "user" ? p.userId : p.name,
    actorLabel: p.kind === "user" ? p.email : `${p.name} (das-admin)`,
    action,
    targetId,
    details,
  });
}

export type AuditChainStatus =
  | { ok: true; entries: number }
  | { ok: false; entries: number; broken_at_seq: number; reason: string };

/**
 * Walks the audit in chain order, recomputing every hash from the previous one and the row's
 * content: a row changed or removed behind the append-only trigger (which a superuser can turn off)
 * shows as the first seq where the chain breaks. The content is the text of migration 0023's
 * `admin_audit_entry_hash`, written out again here, so that the check does not rest on the function
 * it checks.
 */
export async function verifyAdminAudit(ctx: Ctx): Promise<AuditChainStatus> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  let prev = AUDIT_GENESIS_HASH;
  let expected = 1;
  for (let after = 0; ; ) {
    const rows = await sql<{ seq: string; prev_hash: string; hash: string; content: string }[]>`
      select a.seq::text as seq, a.prev_hash, a.hash, jsonb_build_object(
          'seq', a.seq,
          'occurred_at', to_char(a.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
          'actor_kind', a.actor_kind, 'actor_id', a.actor_id, 'actor_label', a.actor_label,
          'action', a.action, 'target_id', a.target_id, 'details', a.details)::text as content
      from admin_audit a where a.seq > ${after} order by a.seq limit 5000`;
    if (!rows.length) return { ok: true, entries: expected - 1 };
    for (const row of rows) {
      const seq = Number(row.seq);
      const reason =
        seq !== expected
          ? `seq ${expected} is missing`
          : row.prev_hash !== prev
            ? "its prev_hash is not the previous entry's hash"
            : createHash("sha256").update(`${prev}\n${row.content}`).digest("hex") !== row.hash
              ? "its content does not match its hash"
              : null;
      if (reason) return { ok: false, entries: expected - 1, broken_at_seq: seq, reason };
      prev = row.hash;
      expected++;
    }
    after = Number(rows.at(-1)!.seq);
  }
}
