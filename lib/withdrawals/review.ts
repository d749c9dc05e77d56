import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireReviewer } from "../auth/authorize";

export type WithdrawalRecipient = {
  notice_id: string;
  organization_id: string;
  organization: string;
  organization_name: string;
  notified_at: string;
  episodes: number;
  deliveries: number;
  /** The first acknowledgement, or null while outstanding. */
  acknowledged_at: string | null;
  statement: string | null;
  deleted_paths: number | null;
  /** Reminders sent while it was outstanding, and when the latest went out. */
  reminders: number;
  last_reminded_at: string | null;
};

export type WithdrawalReview = {
  withdrawal_id: string;
  withdrawn_at: string;
  withdrawn_by: string;
  reason: string;
  contributor: string | null;
  episodes: number;
  recipients: WithdrawalRecipient[];
};

/**
 * The latest withdrawals as a reviewer follows them up: for each, every organisation notified,
 * when, with how many of its episodes and deliveries, whether it acknowledged (with what it
 * stated) or is still outstanding, and how many reminders went out and when the latest did. Outstanding recipients first, then by organisation.
 */
export async function reviewWithdrawals(ctx: Ctx, input: { limit: number }): Promise<WithdrawalReview[]> {
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  const withdrawals = await sql<
    {
      withdrawal_id: string;
      withdrawn_at: Date;
      withdrawn_by: string;
      reason: string;
      contributor: string | null;
      episodes: number;
    }[]
  >`
    select id as withdrawal_id, withdrawn_at, actor_label as withdrawn_by, reason, contributor, episode_count as episodes
    from withdrawals order by withdrawn_at desc, id desc limit ${input.limit}`;
  if (!withdrawals.length) return [];
  const recipients = await sql<
    (Omit<WithdrawalRecipient, "notified_at" | "acknowledged_at" | "last_reminded_at"> & {
      withdrawal_id: string;
      notified_at: Date;
      acknowledged_at: Date | null;
      last_reminded_at: Date | null;
    })[]
  >`
    select n.withdrawal_id, n.id as notice_id, n.organization_id, o.slug as organization, o.name as organization_name,
           n.created_at as notified_at, cardinality(n.episode_ids) as episodes, jsonb_array_length(n.deliveries) as deliveries,
           a.acknowledged_at, a.statement, cardinality(a.deleted_paths) as deleted_paths,
           coalesce(r.reminders, 0) as reminders, r.last_reminded_at
    from notices n
    join organizations o on o.id = n.organization_id
    left join lateral (
      select acknowledged_at, statement, deleted_paths from notice_acknowledgements x
      where x.notice_id = n.id order by x.seq limit 1) a on true
    left join lateral (
      select count(*)::int as reminders, max(reminded_at) as last_reminded_at from notice_reminders y
      where y.notice_id = n.id) r on true
    where n.withdrawal_id = any(${withdrawals.map((w) => w.withdrawal_id)}::text[])
    order by (a.acknowledged_at is not null), o.slug`;
  return withdrawals.map((w) => ({
    ...w,
    withdrawn_at: w.withdrawn_at.toISOString(),
    recipients: recipients
      .filter((r) => r.withdrawal_id === w.withdrawal_id)
      .map(({ withdrawal_id: _, ...r }) => ({
        ...r,
        notified_at: r.notified_at.toISOString(),
        acknowledged_at: r.acknowledged_at?.toISOString() ?? null,
        last_reminded_at: r.last_reminded_at?.toISOString() ?? null,
      })),
  }));
}
