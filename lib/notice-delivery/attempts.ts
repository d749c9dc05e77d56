import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireAdmin } from "../auth/authorize";
import { JOB_QUEUE_SCHEMA, JOB_QUEUES } from "../db/job-queue";
import type { DeliveryChannel } from "../db/schema";

export type DeliveryAttemptRecord = {
  id: number;
  attempted_at: Date;
  channel: DeliveryChannel;
  organization_slug: string;
  endpoint_id: string | null;
  endpoint_url: string | null;
  notice_id: string;
  event_type: string;
  message_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  delivered: boolean;
  duration_ms: number;
  /** When the queue tries again, for the latest attempt of a job still waiting to retry; else null. */
  next_retry_at: Date | null;
};

export type AttemptFilter = { organizationId?: string; endpointId?: string; noticeId?: string; limit?: number };

/** The latest delivery attempts, newest first, with when each job still waiting will be tried again. */
export async function listDeliveryAttempts(ctx: Ctx, filter: AttemptFilter = {}): Promise<DeliveryAttemptRecord[]> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  const limit = Math.min(Math.max(filter.limit ?? 100, 1), 10_000);
  const jobs = sql(`${JOB_QUEUE_SCHEMA}.job`);
  return sql<DeliveryAttemptRecord[]>`
    select a.id::int as id, a.attempted_at, a.channel, o.slug as organization_slug, a.endpoint_id,
      e.url as endpoint_url, a.notice_id, a.event_type, a.message_id, a.attempt, a.status_code,
      a.error, a.delivered, a.duration_ms,
      case when a.will_retry and j.state = 'retry'
        and a.id = (select max(later.id) from notice_delivery_attempts later where later.job_id = a.job_id)
        then j.start_after end as next_retry_at
    from notice_delivery_attempts a
    join organizations o on o.id = a.organization_id
    left join webhook_endpoints e on e.id = a.endpoint_id
    left join ${jobs} j on j.id = a.job_id
      and j.name = (case a.channel when 'webhook' then ${JOB_QUEUES.noticeWebhook} else ${JOB_QUEUES.noticeEmail} end)
    where (${filter.organizationId ?? null}::text is null or a.organization_id = ${filter.organizationId ?? null})
      and (${filter.endpointId ?? null}::text is null or a.endpoint_id = ${filter.endpointId ?? null})
      and (${filter.noticeId ?? null}::text is null or a.notice_id = ${filter.noticeId ?? null})
    order by a.id desc
    limit ${limit}`;
}
