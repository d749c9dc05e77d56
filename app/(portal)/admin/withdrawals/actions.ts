"use server";

import { parseInput, WithdrawalInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";
import { previewWithdrawal, withdrawEpisodes, type WithdrawInput } from "@/lib/withdrawals/withdraw";

/** The episode ids a confirmation lists; a contributor's may run to thousands, which only the count shows. */
const LISTED = 100;

export type WithdrawalPreviewView = {
  episodes: number;
  /** The first LISTED episode ids, in order. */
  episode_ids: string[];
  versions: { dataset_id: string; version: string; episodes: number }[];
  /** Organisations that received any of them and will be notified. */
  notices: number;
};

export type WithdrawalDoneView = WithdrawalPreviewView & { withdrawal_id: string };

function verbInput(input: unknown): WithdrawInput {
  const parsed = parseInput(WithdrawalInput, input);
  return parsed.by === "contributor"
    ? { contributor: parsed.contributor, reason: parsed.reason, expectedEpisodes: parsed.expectedEpisodes }
    : {
        episodeIds: parsed.episodeIds,
        datasetId: parsed.datasetId,
        reason: parsed.reason,
        expectedEpisodes: parsed.expectedEpisodes,
      };
}

/** What the withdrawal would take and whom it would notify: the verb run and rolled back, nothing written. */
export async function previewWithdrawalAction(input: unknown): Promise<ActionResult<WithdrawalPreviewView>> {
  return runAction("admin", async (ctx) => {
    const preview = await previewWithdrawal(ctx, { ...verbInput(input), expectedEpisodes: undefined });
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
    const done = await withdrawEpisodes(ctx, verbInput(input));
    return {
      withdrawal_id: done.withdrawal_id,
      episodes: done.episode_ids.length,
      episode_ids: done.episode_ids.slice(0, LISTED),
      versions: done.versions,
      notices: done.notices,
    };
  });
}
