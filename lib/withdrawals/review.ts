import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireReviewer } from "../auth/authorize";
import { env } from "../env";

/**
 * How far a notice got on one channel, from the delivery attempts: `delivered` (at: the first
 * success), `failing` (tried, will be tried again), `failed` (tried, given up), `queued` (not tried
 * yet), `none` (no webhook endpoint was registered), `not_configured` (no SMTP_URL: no email is sent).
 */
export type DeliveryState = "delivered" | "failing" | "failed" | "queued" | "none" | "not_configured";

export type ChannelDelivery = {
  state: DeliveryState;
  /** When delivered, the first success; otherwise the latest attempt, or null before any. */
  at: string | null;
  attempts: number;
  /** The latest answer: an HTTP status or the error, when there was one. */
  status_code: number | null;
  error: string | null;
};

export type WebhookDelivery = ChannelDelivery & { endpoint_id: string; url: string; removed: boolean };

export type RecipientChannels = {
  /** The portal's /notices and GET /api/v1/notices: the notice is there from the moment it is written. */
  inbox: { state: "delivered"; at: string };
  /** One per endpoint the organisation had when it was notified; empty: none registered. */
  webhooks: WebhookDelivery[];
  email: ChannelDelivery;
};

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
  channels: RecipientChannels;
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
  const channelsOf = await deliveryChannels(
    sql,
    recipients.map((r) => ({ noticeId: r.notice_id, organizationId: r.organization_id, notifiedAt: r.notified_at })),
  );
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
        channels: channelsOf.get(r.notice_id)!,
      })),
  }));
}

type AttemptSummary = {
  notice_id: string;
  channel: "webhook" | "email";
  endpoint_id: string | null;
  attempts: number;
  delivered_at: Date | null;
  last_at: Date;
  will_retry: boolean;
  status_code: number | null;
  error: string | null;
};

/**
 * Per notice, what each channel did, from notice_delivery_attempts (one grouped read for all the
 * notices) and the endpoints each organisation had when it was notified: the endpoints a delivery
 * was enqueued for are exactly those active in the notice's transaction.
 */
async function deliveryChannels(
  sql: ReturnType<typeof sqlOf>,
  notices: { noticeId: string; organizationId: string; notifiedAt: Date }[],
): Promise<Map<string, RecipientChannels>> {
  const out = new Map<string, RecipientChannels>();
  if (!notices.length) return out;
  const [attempts, endpoints] = await Promise.all([
    sql<AttemptSummary[]>`
      select notice_id, channel, endpoint_id, count(*)::int as attempts,
             min(attempted_at) filter (where delivered) as delivered_at, max(attempted_at) as last_at,
             (array_agg(will_retry order by id desc))[1] as will_retry,
             (array_agg(status_code order by id desc))[1] as status_code,
             (array_agg(error order by id desc))[1] as error
      from notice_delivery_attempts
      where notice_id = any(${notices.map((n) => n.noticeId)}::text[])
      group by notice_id, channel, endpoint_id`,
    sql<{ id: string; organization_id: string; url: string; created_at: Date; removed_at: Date | null }[]>`
      select id, organization_id, url, created_at, removed_at from webhook_endpoints
      where organization_id = any(${[...new Set(notices.map((n) => n.organizationId))]}::text[])
      order by created_at, id`,
  ]);
  const emailConfigured = env().SMTP_URL !== undefined;
  const stateOf = (a: AttemptSummary | undefined, untried: DeliveryState): ChannelDelivery =>
    !a
      ? { state: untried, at: null, attempts: 0, status_code: null, error: null }
      : {
          state: a.delivered_at ? "delivered" : a.will_retry ? "failing" : "failed",
          at: (a.delivered_at ?? a.last_at).toISOString(),
          attempts: a.attempts,
          status_code: a.status_code,
          error: a.delivered_at ? null : a.error,
        };
  for (const n of notices) {
    const own = attempts.filter((a) => a.notice_id === n.noticeId);
    const attempted = new Set(own.flatMap((a) => (a.endpoint_id ? [a.endpoint_id] : [])));
    const webhooks = endpoints
      .filter(
        (e) =>
          e.organization_id === n.organizationId &&
          (attempted.has(e.id) || (e.created_at <= n.notifiedAt && (!e.removed_at || e.removed_at > n.notifiedAt))),
      )
      .map((e) => ({
        endpoint_id: e.id,
        url: e.url,
        removed: e.removed_at !== null,
        ...stateOf(
          own.find((a) => a.endpoint_id === e.id),
          "queued",
        ),
      }));
    const email = own.find((a) => a.channel === "email");
    out.set(n.noticeId, {
      inbox: { state: "delivered", at: n.notifiedAt.toISOString() },
      webhooks,
      email: stateOf(email, emailConfigured ? "queued" : "not_configured"),
    });
  }
  return out;
}
