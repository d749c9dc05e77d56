"use server";

import { PreviewBody } from "@/lib/api/requests";
import { parseBody } from "@/lib/http/body";
import { runAction, type ActionResult } from "@/lib/http/portal";
import { createPreview, type Preview } from "@/lib/previews/create-preview";

/**
 * The player's preview for a licensee: the same verb as POST /v1/previews, so it is disclosed the
 * same way, with channel "preview" and the signed-in user as recipient.
 */
export async function previewEpisode(input: unknown): Promise<ActionResult<Preview>> {
  // A server action is a public endpoint: its input gets the same check as the API's body.
  return runAction("catalog", async (ctx) => (await createPreview(ctx, parseBody(PreviewBody, input))).preview);
}
