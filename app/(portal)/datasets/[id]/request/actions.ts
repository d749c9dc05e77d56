"use server";

import { requestAccess } from "@/lib/catalog/access-requests";
import { AccessRequestInput, parseInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";

/**
 * A member's request for a licence, with their acceptance of the terms they were shown (their
 * SHA-256 comes back with the form, so a change of terms meanwhile is refused, not accepted unread).
 */
export async function requestAccessAction(input: unknown): Promise<ActionResult<{ id: string }>> {
  return runAction("catalog", async (ctx) => {
    const { datasetId, version, purpose, termsSha256 } = parseInput(AccessRequestInput, input);
    const made = await requestAccess(ctx, { datasetId, version, purpose, termsSha256 });
    return { id: made.id };
  });
}
