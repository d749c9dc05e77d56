import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { USER_ROLES, type UserRole } from "../db/schema";
import { AppError } from "../errors";
import { requireAdmin } from "../auth/authorize";

export type UserRecord = {
  id: string;
  email: string;
  name: string | null;
  role: UserRole;
  organization_id: string | null;
  organization_slug: string | null;
  organization_name: string | null;
  created_at: string;
  disabled_at: string | null;
};

export type ListUsersInput = { role?: UserRole; organizationId?: string };

/** Portal users by email, optionally only one role and/or one organisation's members. */
export async function listUsers(ctx: Ctx, input: ListUsersInput = {}): Promise<UserRecord[]> {
  requireAdmin(ctx);
  if (input.role !== undefined && !USER_ROLES.includes(input.role)) {
    throw new AppError("invalid_parameter", `Role must be one of ${USER_ROLES.join(", ")}.`);
  }
  const sql = sqlOf(ctx.db);
  const role = input.role ?? null;
  const org = input.organizationId ?? null;
  const rows = await sql<(Omit<UserRecord, "created_at" | "disabled_at"> & { created_at: Date; disabled_at: Date | null })[]>`
    select u.id, u.email, u.name, u.role, u.organization_id, o.slug as organization_slug, o.name as organization_name,
           u.created_at, u.disabled_at
    from users u
    left join organizations o on o.id = u.organization_id
    where (${role}::text is null or u.role = ${role})
      and (${org}::text is null or u.organization_id = ${org})
    order by u.email`;
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString(), disabled_at: r.disabled_at?.toISOString() ?? null }));
}
