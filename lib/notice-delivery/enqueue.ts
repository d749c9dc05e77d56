import type { Sql } from "../db/client";
import { env } from "../env";
import { insertJobs, JOB_QUEUES, type NewJob } from "../db/job-queue";
import { messageIdOf, retryPolicy, type EmailJobData, type WebhookJobData } from "./jobs";

/** Which notice to deliver, and which telling of it: no message, which is written at each attempt. */
export type NoticeDeliveryInput = {
  organizationId: string;
  noticeId: string;
  /** What happened, e.g. `notice.withdrawal`: the body's `type`, and part of the message id. */
  eventType: string;
  /**
   * Which telling of the notice this is, when one notice is told more than once by the same event
   * (the n-th reminder): part of the message id, so receivers that deduplicate keep each one.
   */
  occurrence?: string;
};

export type EnqueuedNoticeDelivery = {
  /** The webhook-id every endpoint receives for this notice and event, on every attempt. */
  messageId: string;
  /** The organisation's active endpoints a job was enqueued for. */
  webhookEndpointIds: string[];
  /** Whether an email job was enqueued (SMTP_URL is set). */
  email: boolean;
};

/**
 * Enqueues the delivery of notices: a job for each active webhook endpoint of each one's
 * organisation and, when SMTP_URL is set, one email to its users. One query for the endpoints of
 * all their organisations and one insert for every job, whatever their number. Called through
 * lib/notices/messages.ts's tellNotices, in the transaction that writes the notices: the jobs are
 * rows in the same database, so they exist exactly when the notices do. Delivered at least once,
 * retried with backoff, by the delivery worker; every attempt is recorded in notice_delivery_attempts.
 */
export async function enqueueNoticeDeliveries(
  sql: Sql,
  inputs: NoticeDeliveryInput[],
): Promise<EnqueuedNoticeDelivery[]> {
  if (!inputs.length) return [];
  const organizations = [...new Set(inputs.map((i) => i.organizationId))];
  const endpoints = await sql<{ id: string; organizationId: string }[]>`
    select id, organization_id as "organizationId" from webhook_endpoints
    where organization_id = any(${organizations}::text[]) and removed_at is null
    order by created_at, id`;
  const endpointsOf = new Map<string, { id: string }[]>();
  for (const e of endpoints) endpointsOf.set(e.organizationId, [...(endpointsOf.get(e.organizationId) ?? []), e]);
  const policy = retryPolicy();
  const email = env().SMTP_URL !== undefined;
  const timestamp = new Date().toISOString();
  const jobs: NewJob[] = [];
  const results = inputs.map((input): EnqueuedNoticeDelivery => {
    const messageId = messageIdOf(input.noticeId, input.eventType, input.occurrence);
    const common: EmailJobData = { ...input, messageId };
    const own = endpointsOf.get(input.organizationId) ?? [];
    for (const { id } of own)
      jobs.push({
        name: JOB_QUEUES.noticeWebhook,
        data: { ...common, endpointId: id, timestamp } satisfies WebhookJobData,
        ...policy,
      });
    if (email) jobs.push({ name: JOB_QUEUES.noticeEmail, data: common, ...policy });
    return { messageId, webhookEndpointIds: own.map((e) => e.id), email };
  });
  await insertJobs(sql, jobs);
  return results;
}
