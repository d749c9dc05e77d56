"use server";

import { approveAccessRequest, rejectAccessRequest } from "@/lib/admin/access-requests";
import { ApproveRequestInput, RejectRequestInput, parseInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";

export async function approveRequestAction(input: unknown): Promise<ActionResult<{ id: string; licence_id: string }>> {
  return runAction("admin", async (ctx) => {
    const { id, startsAt, endsAt } = parseInput(ApproveRequestInput, input);
    return approveAccessRequest(ctx, { id, startsAt: startsAt ?? undefined, endsAt: endsAt ?? null });
  });
}

export async function rejectRequestAction(input: unknown): Promise<ActionResult<{ id: string }>> {
  return runAction("admin", async (ctx) => rejectAccessRequest(ctx, parseInput(RejectRequestInput, input)));
}
