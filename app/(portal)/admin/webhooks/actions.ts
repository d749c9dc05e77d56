"use server";

import { AddWebhookInput, parseInput, RemoveWebhookInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";
import { addWebhookEndpoint, removeWebhookEndpoint } from "@/lib/admin/webhook-endpoints";

export type AddedWebhookView = { id: string; url: string; description: string | null; secret: string };

/** The signing secret travels back in this one response only, as das-admin webhook add prints it once. */
export async function addWebhookAction(input: unknown): Promise<ActionResult<AddedWebhookView>> {
  return runAction("admin", async (ctx) => {
    const added = await addWebhookEndpoint(ctx, parseInput(AddWebhookInput, input));
    return { id: added.id, url: added.url, description: added.description, secret: added.secret };
  });
}

export async function removeWebhookAction(input: unknown): Promise<ActionResult<{ id: string; url: string }>> {
  return runAction("admin", (ctx) => removeWebhookEndpoint(ctx, parseInput(RemoveWebhookInput, input)));
}
