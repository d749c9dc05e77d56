import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireAdmin } from "../auth/authorize";

export type OrganizationRecord = {
  id: string;
  slug: string;
  name: string;
  created_at: string;
  user_count: number;
  active_licence_count: number;
  /** Keys that would authenticate now: neither revoked nor expired. */
  live_key_count: number;
};

/** Every organisation with its users, active licences and live keys, by slug. */
export async function listOrganizations(ctx: Ctx): Promise<OrganizationRecord[]> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  // Correlated counts rather than joins: three one-to-many joins would multiply each other.
  const rows = await sql<(Omit<OrganizationRecord, "created_at"> & { created_at: Date })[]>`
    select o.id, o.slug, o.name, o.created_at,
           (select count(*)::int from users u where u.organization_id = o.id) as user_count,
           (select count(*)::int from licences l where l.organization_id = o.id and l.revoked_at is null) as active_licence_count,
           (select count(*)::int from api_keys k
             where k.organization_id = o.id and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())) as live_key_count
    from organizations o
    order by o.slug`;
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
}
