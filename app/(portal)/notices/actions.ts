"use server";

import { z } from "zod";
import { parseBody } from "@/lib/http/body";
import { runAction, type ActionResult } from "@/lib/http/portal";
import { acknowledgeNotice } from "@/lib/notices/acknowledge";

const AcknowledgeInput = z.strictObject({
  noticeId: z.string().regex(/^nt_[0-9a-f]{32}$/, "must be a notice id"),
  statement: z.string().min(1, "must not be empty").max(4000, "must be at most 4000 characters"),
  deletedPaths: z.array(z.string().min(1).max(1024)).max(100_000).default([]),
});

/** A member acknowledges a notice of their organisation: the same verb as the API's, so the same chain. */
export async function acknowledgeNoticeAction(
  input: unknown,
): Promise<ActionResult<{ acknowledgement_id: string; acknowledged_at: string }>> {
  return runAction("catalog", async (ctx) => {
    const { noticeId, statement, deletedPaths } = parseBody(AcknowledgeInput, input);
    const made = await acknowledgeNotice(ctx, { noticeId, statement, deletedPaths });
    return { acknowledgement_id: made.acknowledgement_id, acknowledged_at: made.acknowledged_at };
  });
}
