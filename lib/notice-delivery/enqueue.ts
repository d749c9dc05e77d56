import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { AppError } from "../errors";
import { env } from "../env";
import { requireAdmin } from "../auth/authorize";
import { insertJobs, JOB_QUEUES, type NewJob } from "../db/job-queue";
import type { WithdrawalTelling } from "../notices/withdrawal-message";
import { messageIdOf, retryPolicy, type EmailJobData, type WebhookJobData } from "./jobs";

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
} & (
  | {
      /** What the recipient receives as the body's `data` (JSON). */
      payload: unknown;
      /** The email's subject and plain text; by default the event type and the payload as JSON. */
      email?: { subject: string; text: string };
    }
  | {
      /**
       * A withdrawal notice (noticeId names it), told as lib/notices/withdrawal-message.ts writes it:
       * the worker writes the body and the email from the notice at each attempt.
       */
      withdrawal: WithdrawalTelling;
    }
);

export type EnqueuedNoticeDelivery = {
  /** The webhook-id every endpoint receives for this notice and event, on every attempt. */
  messageId: string;
  /** The organisation's active endpoints a job was enqueued for. */
  webhookEndpointIds: string[];
  /** Whether an email job was enqueued (SMTP_URL is set). */
  email: boolean;
};

const EVENT_TYPE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;

/**
 * Enqueues the delivery of one notice to one organisation: a job for each of its active webhook
 * endpoints and, when SMTP_URL is set, one email to its users. Call it inside the transaction that
 * writes the notice (pass that transaction's Ctx): the jobs are rows in the same database, so they
 * exist exactly when the notice does. Delivered at least once, retried with backoff, by the
 * delivery worker; every attempt is recorded in notice_delivery_attempts.
 */
export async function enqueueNoticeDelivery(ctx: Ctx, input: NoticeDeliveryInput): Promise<EnqueuedNoticeDelivery> {
  return (await enqueueNoticeDeliveries(ctx, [input]))[0]!;
}

/**
 * The same for many notices at once (one per organisation of a withdrawal): one query for the
 * endpoints of all their organisations and one insert for every job, whatever their number.
 */
export async function enqueueNoticeDeliveries(
  ctx: Ctx,
  inputs: NoticeDeliveryInput[],
): Promise<EnqueuedNoticeDelivery[]> {
  requireAdmin(ctx);
  return enqueueNoticeJobs(sqlOf(ctx.db), inputs);
}

/**
 * The same through a bare connection or transaction, for a step of an operator's own work that
 * has no Ctx (an import writes its version's notices in the import's transaction).
 */
export async function enqueueNoticeJobs(sql: Sql, inputs: NoticeDeliveryInput[]): Promise<EnqueuedNoticeDelivery[]> {
  for (const input of inputs) {
    if (!EVENT_TYPE.test(input.eventType) || input.eventType.length > 100)
      throw new AppError(
        "invalid_parameter",
        "An event type is dot-separated lower-case words, e.g. notice.withdrawal.",
      );
    if (!input.noticeId || !input.organizationId)
      throw new AppError("invalid_parameter", "A notice delivery names its notice and organisation.");
  }
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
  const createdAt = new Date().toISOString();
  const jobs: NewJob[] = [];
  const results = inputs.map((input): EnqueuedNoticeDelivery => {
    const messageId = messageIdOf(input.noticeId, input.eventType, input.occurrence);
    const common = {
      organizationId: input.organizationId,
      noticeId: input.noticeId,
      eventType: input.eventType,
      messageId,
    };
    const told =
      "withdrawal" in input
        ? { webhook: { withdrawal: input.withdrawal, timestamp: createdAt }, email: { withdrawal: input.withdrawal } }
        : {
            webhook: {
              body: JSON.stringify({ type: input.eventType, timestamp: createdAt, data: input.payload ?? null }),
            },
            email: {
              subject: input.email?.subject ?? `Dataset Access Service: ${input.eventType}`,
              text:
                input.email?.text ??
                `A notice for your organisation (${input.eventType}, ${input.noticeId}).\n\n${JSON.stringify(input.payload ?? null, null, 2)}\n`,
            },
          };
    const own = endpointsOf.get(input.organizationId) ?? [];
    for (const { id } of own)
      jobs.push({
        name: JOB_QUEUES.noticeWebhook,
        data: { ...common, endpointId: id, ...told.webhook } satisfies WebhookJobData,
        ...policy,
      });
    if (email)
      jobs.push({
        name: JOB_QUEUES.noticeEmail,
        data: { ...common, ...told.email } satisfies EmailJobData,
        ...policy,
      });
    return { messageId, webhookEndpointIds: own.map((e) => e.id), email };
  });
  await insertJobs(sql, jobs);
  return results;
}
