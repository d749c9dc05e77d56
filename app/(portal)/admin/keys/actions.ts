"use server";

import { issueKey, revokeKey } from "@/lib/admin/keys";
import { expiryAfter, IssueKeyInput, parseInput, RevokeKeyInput } from "@/lib/admin/inputs";
import type { IssuedKeyView } from "@/components/admin/issued-secret";
import { runAction, type ActionResult } from "@/lib/http/portal";

/** The secret travels back in this one response only; the page never renders it from the server. */
export async function issueKeyAction(input: unknown): Promise<ActionResult<IssuedKeyView>> {
  return runAction("admin", async (ctx) => {
    const { organizationId, name, expiresInDays, scope } = parseInput(IssueKeyInput, input);
    const key = await issueKey(ctx, { organizationId, name, scope, expiresAt: expiryAfter(expiresInDays) });
    return {
      id: key.id,
      secret: key.secret,
      prefix: key.prefix,
      name: key.name,
      expires_at: key.expiresAt?.toISOString() ?? null,
    };
  });
}

export async function revokeKeyAction(input: unknown): Promise<ActionResult<{ id: string; prefix: string }>> {
  return runAction("admin", (ctx) => revokeKey(ctx, parseInput(RevokeKeyInput, input)));
}
