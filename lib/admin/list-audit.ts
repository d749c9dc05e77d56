import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireAdmin } from "../auth/authorize";
import type { AuditAction } from "./audit-actions";

export type AuditRecord = {
  id: number;
  occurred_at: string;
  actor_kind: "user" | "operator";
  actor_id: string;
  actor_label: string;
  action: AuditAction;
  target_id: string;
  /** What the target is, in words a person recognises (a slug, an email, dataset@version, a key prefix). */
  target_label: string;
  /** The change's particulars in a line (a new user's role, a key's expiry and scope), or null. */
  summary: string | null;
  details: Record<string, unknown>;
};

export type AuditPage = { entries: AuditRecord[]; next_before: number | null };

export const AUDIT_PAGE_MAX = 200;

type Row = Omit<AuditRecord, "occurred_at" | "target_label" | "summary" | "id"> & {
  id: number;
  occurred_at: Date;
  organization_slug: string | null;
  key_name: string | null;
  key_prefix: string | null;
};

/** The admin audit trail, newest first; `before` (an entry id) pages back in time. */
export async function listAdminAudit(ctx: Ctx, input: { limit?: number; before?: number } = {}): Promise<AuditPage> {
  requireAdmin(ctx);
  const limit = Math.min(Math.max(1, Math.trunc(input.limit ?? 50)), AUDIT_PAGE_MAX);
  const before = input.before ?? null;
  const sql = sqlOf(ctx.db);
  const rows = await sql<Row[]>`
    select a.id::float8 as id, a.occurred_at, a.actor_kind, a.actor_id, a.actor_label, a.action, a.target_id, a.details,
           o.slug as organization_slug, k.name as key_name, k.prefix as key_prefix
    from admin_audit a
    left join api_keys k on a.action like 'key.%' and k.id = a.target_id
    left join organizations o on o.id = coalesce(a.details->>'organizationId', k.organization_id,
                                                 case when a.action like 'organization.%' then a.target_id end)
    where (${before}::bigint is null or a.id < ${before})
    order by a.id desc
    limit ${limit + 1}`;
  const page = rows.slice(0, limit);
  return {
    entries: page.map(({ organization_slug, key_name, key_prefix, ...r }) => ({
      ...r,
      occurred_at: r.occurred_at.toISOString(),
      target_label: targetLabel(r.action, r.target_id, r.details, { organization_slug, key_name, key_prefix }),
      summary: summaryOf(r.action, r.details, organization_slug),
    })),
    next_before: rows.length > limit ? page.at(-1)!.id : null,
  };
}

function targetLabel(
  action: string,
  targetId: string,
  details: Record<string, unknown>,
  joined: { organization_slug: string | null; key_name: string | null; key_prefix: string | null },
): string {
  const text = (value: unknown) => (typeof value === "string" && value ? value : null);
  const org = joined.organization_slug ?? text(details.organizationId);
  switch (action.split(".")[0]) {
    case "organization":
      return text(details.slug) ?? targetId;
    case "user":
      return text(details.email) ?? targetId;
    case "licence":
      return details.datasetId ? `${details.datasetId}@${details.version} for ${org ?? "?"}` : targetId;
    case "key": {
      const prefix = joined.key_prefix ?? text(details.prefix);
      const name = joined.key_name ?? text(details.name);
      return [prefix ? `${prefix}…` : targetId, name ? `“${name}”` : null, org ? `of ${org}` : null]
        .filter(Boolean)
        .join(" ");
    }
    default:
      return targetId;
  }
}

function summaryOf(action: AuditAction, details: Record<string, unknown>, organization: string | null): string | null {
  switch (action) {
    case "organization.create":
      return typeof details.name === "string" ? `named “${details.name}”` : null;
    case "user.create":
    case "user.role":
      return `role ${String(details.role)}${details.organizationId ? ` in ${organization ?? String(details.organizationId)}` : ""}`;
    case "key.issue": {
      const expiry = typeof details.expiresAt === "string" ? `expires ${details.expiresAt.slice(0, 10)}` : "no expiry";
      const scope = Array.isArray(details.scope) ? (details.scope as { datasetId?: string; version?: string }[]) : [];
      return `${expiry}; ${scope.length ? `narrowed to ${scope.map((s) => `${s.datasetId}@${s.version}`).join(", ")}` : "all licences"}`;
    }
    default:
      return null;
  }
}
