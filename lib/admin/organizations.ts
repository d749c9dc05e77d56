import { eq } from "drizzle-orm";
import { organizations } from "../db/schema";
import type { Ctx } from "../context";
import { AppError } from "../errors";
import { newId } from "../ids";
import { withTx } from "../db/tx";
import { recordAdminAction } from "./audit";
import { requireAdmin } from "../auth/authorize";
import { SLUG_PATTERN } from "./rules";
import { FREE_TEXT } from "../characters";

export type Organization = typeof organizations.$inferSelect;

export async function createOrganization(ctx: Ctx, input: { slug: string; name?: string }): Promise<Organization> {
  requireAdmin(ctx);
  if (!SLUG_PATTERN.test(input.slug)) {
    throw new AppError(
      "invalid_parameter",
      "An organisation slug is lower-case letters, digits and inner '-', at most 63 characters.",
    );
  }
  if (input.name !== undefined && !FREE_TEXT.test(input.name)) {
    throw new AppError(
      "invalid_parameter",
      "An organisation name must not contain control characters other than tabs and line breaks.",
    );
  }
  return withTx(ctx, async (tx) => {
    const [created] = await tx.db
      .insert(organizations)
      .values({ id: newId("org"), slug: input.slug, name: input.name?.trim() || input.slug })
      .onConflictDoNothing()
      .returning();
    if (!created) throw new AppError("invalid_parameter", `An organisation with slug '${input.slug}' already exists.`);
    await recordAdminAction(tx, "organization.create", created.id, { slug: created.slug, name: created.name });
    return created;
  });
}

export async function organizationBySlug(ctx: Ctx, slug: string): Promise<Organization> {
  requireAdmin(ctx);
  const [found] = await ctx.db.select().from(organizations).where(eq(organizations.slug, slug));
  if (!found) throw new AppError("not_found", `No organisation with slug '${slug}'.`);
  return found;
}

/** Fails with "not found" for an unknown organisation id, rather than a foreign-key error surfacing as a 500. */
export async function requireOrganization(ctx: Ctx, id: string): Promise<Organization> {
  requireAdmin(ctx);
  const [found] = await ctx.db.select().from(organizations).where(eq(organizations.id, id));
  if (!found) throw new AppError("not_found", `No organisation with id '${id}'.`);
  return found;
}
