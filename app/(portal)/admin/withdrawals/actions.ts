"use server";

import type { WithdrawalDoneView, WithdrawalPreviewView } from "@/components/admin/withdraw-form";
import { runAction, type ActionResult } from "@/lib/http/portal";
import { previewWithdrawal, withdrawEpisodes } from "@/lib/withdrawals/withdraw";
import { parseWithdrawal } from "@/lib/withdrawals/withdrawal-input";

/** The episode ids a confirmation lists; a contributor's may run to thousands, which only the count shows. */
const LISTED = 100;

/** What the withdrawal would take and whom it would notify: the verb run and rolled back, nothing written. */
export async function previewWithdrawalAction(input: unknown): Promise<ActionResult<WithdrawalPreviewView>> {
  return runAction("admin", async (ctx) => {
    const preview = await previewWithdrawal(ctx, { ...parseWithdrawal(input), expectedEpisodes: undefined });
    return {
      episodes: preview.episode_ids.length,
      episode_ids: preview.episode_ids.slice(0, LISTED),
      versions: preview.versions,
      notices: preview.notices,
    };
  });
}

/** The withdrawal das-admin withdraw makes (same verb, audited), refused if it no longer matches the confirmed count. */
export async function withdrawAction(input: unknown): Promise<ActionResult<WithdrawalDoneView>> {
  return runAction("admin", async (ctx) => {
    const done = await withdrawEpisodes(ctx, parseWithdrawal(input));
    return {
      withdrawal_id: done.withdrawal_id,
      episodes: done.episode_ids.length,
      episode_ids: done.episode_ids.slice(0, LISTED),
      versions: done.versions,
      notices: done.notices,
    };
  });
}
