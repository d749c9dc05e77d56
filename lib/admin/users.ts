import { eq, sql } from "drizzle-orm";
import { hashPassword } from "../auth/passwords";
import { endingSessions } from "../auth/sessions";
import { users, USER_ROLES, type UserRole } from "../db/schema";
import { sqlOf } from "../db/client";
import type { Ctx } from "../context";
import { AppError } from "../errors";
import { newId } from "../ids";
import { withTx } from "../db/tx";
import { recordAdminAction } from "./audit";
import { requireAdmin, type AdminPrincipal } from "../auth/authorize";
import { requireOrganization } from "./organizations";
import { EMAIL_PATTERN, MIN_PASSWORD_LENGTH } from "./rules";
import { FREE_TEXT } from "../characters";

/**
 * The admin's verbs on portal users, reads and changes alike. (Who a signed-in user is, for
 * sign-in and sessions, is read in lib/auth/accounts.ts: authentication sits below the admin.)
 */

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
  const rows = await sql<
    (Omit<UserRecord, "created_at" | "disabled_at"> & { created_at: Date; disabled_at: Date | null })[]
  >`
    select u.id, u.email, u.name, u.role, u.organization_id, o.slug as organization_slug, o.name as organization_name,
           u.created_at, u.disabled_at
    from users u
    left join organizations o on o.id = u.organization_id
    where (${role}::text is null or u.role = ${role})
      and (${org}::text is null or u.organization_id = ${org})
    order by u.email`;
  return rows.map((r) => ({
    ...r,
    created_at: r.created_at.toISOString(),
    disabled_at: r.disabled_at?.toISOString() ?? null,
  }));
}

export type CreateUserInput = {
  email: string;
  role: UserRole;
  organizationId?: string | null;
  password?: string;
  name?: string;
};

export async function createUser(
  ctx: Ctx,
  input: CreateUserInput,
): Promise<{ id: string; email: string; role: UserRole }> {
  requireAdmin(ctx);
  const email = input.email.trim().toLowerCase();
  if (!EMAIL_PATTERN.test(email))
    throw new AppError("invalid_parameter", `${JSON.stringify(input.email)} is not an email address.`);
  if (input.name !== undefined && !FREE_TEXT.test(input.name)) {
    throw new AppError(
      "invalid_parameter",
      "A name must not contain control characters other than tabs and line breaks.",
    );
  }
  if (!USER_ROLES.includes(input.role))
    throw new AppError("invalid_parameter", `Role must be one of ${USER_ROLES.join(", ")}.`);
  if (input.role === "licensee" && !input.organizationId) {
    throw new AppError("invalid_parameter", "A licensee belongs to an organisation: give one.");
  }
  if (input.password !== undefined && input.password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError("invalid_parameter", `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`);
  }
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  return withTx(ctx, async (tx) => {
    if (input.organizationId) await requireOrganization(tx, input.organizationId);
    const [created] = await tx.db
      .insert(users)
      .values({
        id: newId("usr"),
        email,
        role: input.role,
        organizationId: input.organizationId ?? null,
        passwordHash,
        name: input.name ?? null,
      })
      .onConflictDoNothing()
      .returning({ id: users.id, email: users.email, role: users.role });
    if (!created) throw new AppError("invalid_parameter", `A user with email ${email} already exists.`);
    await recordAdminAction(tx, "user.create", created.id, {
      email,
      role: input.role,
      organizationId: input.organizationId ?? null,
    });
    return created;
  });
}

type UserRef = { id: string; email: string };

/** The user, locked for the change; an admin never changes their own account (they could lock every admin out). */
async function userToChange(ctx: Ctx<AdminPrincipal>, id: string): Promise<UserRef & { disabledAt: Date | null }> {
  if (ctx.principal.kind === "user" && ctx.principal.userId === id) {
    throw new AppError(
      "invalid_parameter",
      "You cannot disable your own account or change your own role; ask another admin.",
    );
  }
  const [found] = await ctx.db
    .select({ id: users.id, email: users.email, disabledAt: users.disabledAt })
    .from(users)
    .where(eq(users.id, id))
    .for("update");
  if (!found) throw new AppError("not_found", `No user with id '${id}'.`);
  return found;
}

/** Disables an account: it can no longer sign in, and every session it has ends at once. */
export async function disableUser(ctx: Ctx, input: { id: string }): Promise<UserRef> {
  requireAdmin(ctx);
  return withTx(ctx, async (tx) => {
    const user = await userToChange(tx, input.id);
    if (user.disabledAt) throw new AppError("invalid_parameter", `${user.email} is already disabled.`);
    await tx.db
      .update(users)
      .set({ disabledAt: sql`now()`, ...endingSessions })
      .where(eq(users.id, user.id));
    await recordAdminAction(tx, "user.disable", user.id, { email: user.email });
    return { id: user.id, email: user.email };
  });
}

export type ChangeRoleInput = { id: string; role: UserRole; organizationId?: string | null };

/**
 * Gives a user another role (and organisation: a licensee needs one). Every session of the user
 * ends at once, so they sign in again under the new role.
 */
export async function changeUserRole(ctx: Ctx, input: ChangeRoleInput): Promise<UserRef & { role: UserRole }> {
  requireAdmin(ctx);
  if (!USER_ROLES.includes(input.role))
    throw new AppError("invalid_parameter", `Role must be one of ${USER_ROLES.join(", ")}.`);
  if (input.role === "licensee" && !input.organizationId) {
    throw new AppError("invalid_parameter", "A licensee belongs to an organisation: give one.");
  }
  const organizationId = input.organizationId ?? null;
  return withTx(ctx, async (tx) => {
    const user = await userToChange(tx, input.id);
    if (organizationId) await requireOrganization(tx, organizationId);
    await tx.db
      .update(users)
      .set({ role: input.role, organizationId, ...endingSessions })
      .where(eq(users.id, user.id));
    await recordAdminAction(tx, "user.role", user.id, { email: user.email, role: input.role, organizationId });
    return { id: user.id, email: user.email, role: input.role };
  });
}
