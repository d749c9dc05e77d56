"use server";

import { PreviewBody } from "@/lib/api/requests";
import { parseBody } from "@/lib/http/body";
import { runAction, type ActionResult } from "@/lib/http/portal";
import { createPreview, type Preview } from "@/lib/previews/create-preview";

/**
 * A reviewer's or admin's preview, to check what was disclosed: the same verb as the licensee's,
 * recorded with the user as recipient under their role, without an organisation's licence.
 */
export async function previewEpisodeForReview(input: unknown): Promise<ActionResult<Preview>> {
  return runAction("review", async (ctx) => (await createPreview(ctx, parseBody(PreviewBody, input))).preview);
}
