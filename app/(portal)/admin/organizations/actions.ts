"use server";

import { createOrganization } from "@/lib/admin/organizations";
import { CreateOrganizationInput, parseInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";

export async function createOrganizationAction(
  input: unknown,
): Promise<ActionResult<{ id: string; slug: string; name: string }>> {
  return runAction("admin", async (ctx) => {
    const org = await createOrganization(ctx, parseInput(CreateOrganizationInput, input));
    return { id: org.id, slug: org.slug, name: org.name };
  });
}
