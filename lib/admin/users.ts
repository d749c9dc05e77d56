import { hashPassword } from "../auth/passwords";
import { users, USER_ROLES, type UserRole } from "../db/schema";
import type { Ctx } from "../context";
import { AppError } from "../errors";
import { newId } from "../ids";
import { withTx } from "../db/tx";
import { recordAdminAction } from "./audit";
import { requireAdmin } from "./authorize";
import { requireOrganization } from "./organizations";
import { EMAIL_PATTERN, FREE_TEXT, MIN_PASSWORD_LENGTH } from "./rules";

export type CreateUserInput = { email: string; role: UserRole; organizationId?: string | null; password?: string; name?: string };

export async function createUser(ctx: Ctx, input: CreateUserInput): Promise<{ id: string; email: string; role: UserRole }> {
  requireAdmin(ctx);
  const email = input.email.trim().toLowerCase();
  if (!EMAIL_PATTERN.test(email)) throw new AppError("invalid_parameter", `${JSON.stringify(input.email)} is not an email address.`);
  if (input.name !== undefined && !FREE_TEXT.test(input.name)) {
    throw new AppError("invalid_parameter", "A name must not contain control characters other than tabs and line breaks.");
  }
  if (!USER_ROLES.includes(input.role)) throw new AppError("invalid_parameter", `Role must be one of ${USER_ROLES.join(", ")}.`);
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
      .values({ id: newId("usr"), email, role: input.role, organizationId: input.organizationId ?? null, passwordHash, name: input.name ?? null })
      .onConflictDoNothing()
      .returning({ id: users.id, email: users.email, role: users.role });
    if (!created) throw new AppError("invalid_parameter", `A user with email ${email} already exists.`);
    await recordAdminAction(tx, "user.create", created.id, { email, role: input.role, organizationId: input.organizationId ?? null });
    return created;
  });
}
