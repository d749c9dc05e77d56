import type PgBoss from "pg-boss";
import { inArray } from "drizzle-orm";
import { noticeDeliveryAttempts, webhookEndpoints, type DeliveryChannel } from "../db/schema";
import { sqlOf, type Db } from "../db/client";
import { env } from "../env";
import { JOB_QUEUES, startJobQueue, type JobQueueName } from "../db/job-queue";
import { openSecret } from "./secret-box";
import { postWebhook, type AttemptOutcome } from "./post-webhook";
import { sendNoticeEmail } from "./email";
import type { Ctx } from "../context";
import type { EmailJobData, JobCommon, NoticeMessage, NoticeRenderer, WebhookJobData } from "./jobs";

export type NoticeDeliveryWorker = {
  /** Finishes the attempts in flight, then stops fetching; jobs not yet fetched wait in the database. */
  stop(): Promise<void>;
};

export type WorkerOptions = {
  /** The database the jobs and attempts are in. */
  url: string;
  db: Db;
  /** Jobs fetched at once by each fetcher, sent concurrently. */
  batchSize?: number;
  /** Concurrent fetchers of webhook jobs. */
  webhookFetchers?: number;
  /** How often an idle fetcher looks for due jobs (at least 0.5 s). */
  pollingIntervalSeconds?: number;
  /** Default: WEBHOOKS_ALLOW_PRIVATE. */
  allowPrivate?: boolean;
  /** Default: WEBHOOK_TIMEOUT_MS. */
  timeoutMs?: number;
  /** What each job's notice says, written at each attempt (lib/notices/messages.ts). */
  render: NoticeRenderer;
  /**
   * Work due with time that this worker also keeps (licence-end warnings, reminders): it registers
   * the cron, sends its job when due and works it. Every server's worker does (lib/notices/worker.ts).
   */
  schedule?: { cron: string; run: (ctx: Ctx) => Promise<void> };
};

/**
 * Works the notice queues: posts each webhook job to its endpoint and sends each email job,
 * records every attempt, and hands failures back to pg-boss, which retries them with backoff.
 */
export async function startNoticeDeliveryWorker(options: WorkerOptions): Promise<NoticeDeliveryWorker> {
  const scheduled = options.schedule;
  const boss = await startJobQueue(options.url, { schedule: scheduled !== undefined });
  const batchSize = options.batchSize ?? 50;
  const pollingIntervalSeconds = options.pollingIntervalSeconds ?? 2;
  const env_ = env();
  const e = {
    ...env_,
    WEBHOOKS_ALLOW_PRIVATE: options.allowPrivate ?? env_.WEBHOOKS_ALLOW_PRIVATE,
    WEBHOOK_TIMEOUT_MS: options.timeoutMs ?? env_.WEBHOOK_TIMEOUT_MS,
  };

  const work = async <T extends JobCommon>(
    queue: JobQueueName,
    prepare: (jobs: T[]) => Promise<Attempter<T>>,
    describe: (data: T) => { channel: DeliveryChannel; endpointId: string | null },
  ) => {
    const id: string = await boss.work<T>(
      queue,
      { batchSize, pollingIntervalSeconds, includeMetadata: true },
      async (jobs: PgBoss.JobWithMetadata<T>[]) => {
        await runBatch(boss, options.db, queue, jobs, prepare, describe);
        // A full batch means more are probably due: fetch again at once instead of after the interval.
        if (jobs.length === batchSize) boss.notifyWorker(id);
      },
    );
    return id;
  };

  const webhookTarget = (data: WebhookJobData) => ({ channel: "webhook" as const, endpointId: data.endpointId });
  for (let i = 0; i < (options.webhookFetchers ?? 2); i++)
    await work(
      JOB_QUEUES.noticeWebhook,
      (jobs: WebhookJobData[]) => webhookAttempter(options.db, jobs, options.render, e),
      webhookTarget,
    );
  await work(
    JOB_QUEUES.noticeEmail,
    (jobs: EmailJobData[]) =>
      emailAttempter(options.db, jobs, options.render, { smtpUrl: e.SMTP_URL, from: e.SMTP_FROM }),
    () => ({ channel: "email", endpointId: null }),
  );
  if (scheduled) {
    // Registering is idempotent (one row per queue), so every worker does it at start; pg-boss
    // lets one of them a minute send the job, and the queue holds at most one waiting.
    await boss.schedule(JOB_QUEUES.noticeSchedule, scheduled.cron, {}, { tz: "UTC", retryLimit: 2 });
    const ctx: Ctx = {
      db: options.db,
      requestId: "notice-schedule",
      principal: { kind: "operator", name: "notice schedule", organizationId: null },
    };
    await boss.work(JOB_QUEUES.noticeSchedule, { pollingIntervalSeconds }, () => scheduled.run(ctx));
  }
  return {
    stop: async () => {
      await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
    },
  };
}

type Outcome = AttemptOutcome & { permanent?: boolean };
type Attempter<T> = (data: T) => Promise<Outcome>;

/** A job whose notice is gone: nothing to tell, and no retry brings it back. */
const NOTICE_GONE: Outcome = {
  delivered: false,
  statusCode: null,
  error: "the notice is gone: not sent",
  durationMs: 0,
  permanent: true,
};

/** One query for the endpoints of a whole batch, each secret opened once; its messages written at once. */
async function webhookAttempter(
  db: Db,
  jobs: WebhookJobData[],
  render: NoticeRenderer,
  e: { WEBHOOK_TIMEOUT_MS: number; WEBHOOKS_ALLOW_PRIVATE: boolean },
): Promise<Attempter<WebhookJobData>> {
  const [rows, messages] = await Promise.all([
    db
      .select()
      .from(webhookEndpoints)
      .where(inArray(webhookEndpoints.id, [...new Set(jobs.map((j) => j.endpointId))])),
    render(sqlOf(db), jobs),
  ]);
  const endpoints = new Map(
    rows
      .filter((r) => !r.removedAt)
      .map((r) => [r.id, { url: r.url, secret: openSecret(r.secretSealed, r.id) }] as const),
  );
  return async (data) => {
    const endpoint = endpoints.get(data.endpointId);
    if (!endpoint)
      return {
        delivered: false,
        statusCode: null,
        error: "the endpoint was removed: not sent",
        durationMs: 0,
        permanent: true,
      };
    const message = messages.get(data.messageId);
    if (!message) return NOTICE_GONE;
    const body = JSON.stringify({ type: data.eventType, timestamp: data.timestamp, data: message.data });
    return postWebhook(
      { url: endpoint.url, secret: endpoint.secret, messageId: data.messageId, body },
      { timeoutMs: e.WEBHOOK_TIMEOUT_MS, allowPrivate: e.WEBHOOKS_ALLOW_PRIVATE },
    );
  };
}

/** Emails of a batch, their messages written at once. */
async function emailAttempter(
  db: Db,
  jobs: EmailJobData[],
  render: NoticeRenderer,
  settings: { smtpUrl: string | undefined; from: string },
): Promise<Attempter<EmailJobData>> {
  const messages: Map<string, NoticeMessage> = await render(sqlOf(db), jobs);
  return async (data) => {
    const message = messages.get(data.messageId);
    if (!message) return NOTICE_GONE;
    return sendNoticeEmail(db, { ...data, ...message.email }, settings);
  };
}

/**
 * Attempts every job of a batch at once, records all attempts in one insert, completes the ones
 * that are done in one call and hands each failure back to pg-boss, which retries it while tries
 * remain and then marks it failed. One that no retry can mend (the endpoint was removed, nobody to
 * email) is done. If the batch cannot be recorded (the database is away), pg-boss retries it whole.
 */
async function runBatch<T extends JobCommon>(
  boss: PgBoss,
  db: Db,
  queue: JobQueueName,
  jobs: PgBoss.JobWithMetadata<T>[],
  prepare: (jobs: T[]) => Promise<Attempter<T>>,
  describe: (data: T) => { channel: DeliveryChannel; endpointId: string | null },
): Promise<void> {
  const attempt = await prepare(jobs.map((j) => j.data));
  const outcomes = await Promise.all(
    jobs.map((job) =>
      attempt(job.data).catch(
        (error: Error): Outcome => ({ delivered: false, statusCode: null, error: error.message, durationMs: 0 }),
      ),
    ),
  );
  await db.insert(noticeDeliveryAttempts).values(
    jobs.map((job, i) => {
      const outcome = outcomes[i]!;
      return {
        jobId: job.id,
        ...describe(job.data),
        organizationId: job.data.organizationId,
        noticeId: job.data.noticeId,
        eventType: job.data.eventType,
        messageId: job.data.messageId,
        attempt: job.retryCount + 1,
        durationMs: outcome.durationMs,
        statusCode: outcome.statusCode,
        error: outcome.error,
        delivered: outcome.delivered,
        willRetry: !outcome.delivered && !outcome.permanent && job.retryCount < job.retryLimit,
      };
    }),
  );
  const done = jobs.filter((_, i) => outcomes[i]!.delivered || outcomes[i]!.permanent).map((j) => j.id);
  if (done.length) await boss.complete(queue, done);
  for (const [i, job] of jobs.entries()) {
    const outcome = outcomes[i]!;
    if (!outcome.delivered && !outcome.permanent)
      await boss.fail(queue, job.id, { message: outcome.error ?? "not delivered" });
  }
}
