"use server";

import { changeUserRole, createUser, disableUser } from "@/lib/admin/users";
import { ChangeRoleInput, CreateUserInput, parseInput, UserTargetInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";
import type { UserRole } from "@/lib/db/schema";

export async function createUserAction(
  input: unknown,
): Promise<ActionResult<{ id: string; email: string; role: UserRole }>> {
  return runAction("admin", async (ctx) => {
    const { name, organizationId, ...rest } = parseInput(CreateUserInput, input);
    return createUser(ctx, { ...rest, name: name || undefined, organizationId: organizationId || null });
  });
}

/** Ends every session of the user at once, as disabling does. */
export async function changeUserRoleAction(
  input: unknown,
): Promise<ActionResult<{ id: string; email: string; role: UserRole }>> {
  return runAction("admin", async (ctx) => {
    const { organizationId, ...rest } = parseInput(ChangeRoleInput, input);
    return changeUserRole(ctx, { ...rest, organizationId: organizationId || null });
  });
}

export async function disableUserAction(input: unknown): Promise<ActionResult<{ id: string; email: string }>> {
  return runAction("admin", (ctx) => disableUser(ctx, parseInput(UserTargetInput, input)));
}
