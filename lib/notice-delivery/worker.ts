import type PgBoss from "pg-boss";
import { eq } from "drizzle-orm";
import { noticeDeliveryAttempts, webhookEndpoints, type DeliveryChannel } from "../db/schema";
import { getDb, type Db } from "../db/client";
import { env, requireEnv } from "../env";
import { errorFields, log } from "../log";
import { JOB_QUEUES, startJobQueue, type JobQueueName } from "../db/job-queue";
import { openSecret } from "./secret-box";
import { postWebhook, type AttemptOutcome } from "./post-webhook";
import { sendNoticeEmail } from "./email";
import type { EmailJobData, WebhookJobData } from "./jobs";

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
};

/**
 * Works the notice queues: posts each webhook job to its endpoint and sends each email job,
 * records every attempt, and hands failures back to pg-boss, which retries them with backoff.
 */
export async function startNoticeDeliveryWorker(options: WorkerOptions): Promise<NoticeDeliveryWorker> {
  const boss = await startJobQueue(options.url);
  const batchSize = options.batchSize ?? 50;
  const pollingIntervalSeconds = options.pollingIntervalSeconds ?? 2;
  const env_ = env();
  const e = {
    ...env_,
    WEBHOOKS_ALLOW_PRIVATE: options.allowPrivate ?? env_.WEBHOOKS_ALLOW_PRIVATE,
    WEBHOOK_TIMEOUT_MS: options.timeoutMs ?? env_.WEBHOOK_TIMEOUT_MS,
  };

  const work = async <T extends { organizationId: string }>(
    queue: JobQueueName,
    attempt: (data: T) => Promise<AttemptOutcome & { permanent?: boolean }>,
    describe: (data: T) => { channel: DeliveryChannel; endpointId: string | null },
  ) => {
    const id: string = await boss.work<T>(
      queue,
      { batchSize, pollingIntervalSeconds, includeMetadata: true },
      async (jobs: PgBoss.JobWithMetadata<T>[]) => {
        await Promise.all(jobs.map((job) => runOne(boss, options.db, queue, job, attempt, describe)));
        // A full batch means more are probably due: fetch again at once instead of after the interval.
        if (jobs.length === batchSize) boss.notifyWorker(id);
      },
    );
    return id;
  };

  const webhook = (data: WebhookJobData) => attemptWebhook(options.db, data, e);
  const webhookTarget = (data: WebhookJobData) => ({ channel: "webhook" as const, endpointId: data.endpointId });
  for (let i = 0; i < (options.webhookFetchers ?? 2); i++) await work(JOB_QUEUES.noticeWebhook, webhook, webhookTarget);
  await work(
    JOB_QUEUES.noticeEmail,
    (data: EmailJobData) => sendNoticeEmail(options.db, data, { smtpUrl: e.SMTP_URL, from: e.SMTP_FROM }),
    () => ({ channel: "email", endpointId: null }),
  );
  return {
    stop: async () => {
      await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
    },
  };
}

async function attemptWebhook(
  db: Db,
  data: WebhookJobData,
  e: { WEBHOOK_TIMEOUT_MS: number; WEBHOOKS_ALLOW_PRIVATE: boolean },
): Promise<AttemptOutcome & { permanent?: boolean }> {
  const [endpoint] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, data.endpointId));
  if (!endpoint || endpoint.removedAt)
    return {
      delivered: false,
      statusCode: null,
      error: "the endpoint was removed: not sent",
      durationMs: 0,
      permanent: true,
    };
  return postWebhook(
    {
      url: endpoint.url,
      secret: openSecret(endpoint.secretSealed, endpoint.id),
      messageId: data.messageId,
      body: data.body,
    },
    { timeoutMs: e.WEBHOOK_TIMEOUT_MS, allowPrivate: e.WEBHOOKS_ALLOW_PRIVATE },
  );
}

type JobCommon = { organizationId: string; noticeId: string; eventType: string; messageId: string };

async function runOne<T extends { organizationId: string }>(
  boss: PgBoss,
  db: Db,
  queue: JobQueueName,
  job: PgBoss.JobWithMetadata<T>,
  attempt: (data: T) => Promise<AttemptOutcome & { permanent?: boolean }>,
  describe: (data: T) => { channel: DeliveryChannel; endpointId: string | null },
): Promise<void> {
  const data = job.data as T & JobCommon;
  try {
    const outcome = await attempt(data);
    const willRetry = !outcome.delivered && !outcome.permanent && job.retryCount < job.retryLimit;
    await db.insert(noticeDeliveryAttempts).values({
      jobId: job.id,
      ...describe(data),
      organizationId: data.organizationId,
      noticeId: data.noticeId,
      eventType: data.eventType,
      messageId: data.messageId,
      attempt: job.retryCount + 1,
      durationMs: outcome.durationMs,
      statusCode: outcome.statusCode,
      error: outcome.error,
      delivered: outcome.delivered,
      willRetry,
    });
    // A failure pg-boss retries while tries remain and then marks failed; one that no retry can
    // mend (the endpoint was removed, nobody to email) ends here.
    if (outcome.delivered || outcome.permanent) await boss.complete(queue, job.id, { delivered: outcome.delivered });
    else await boss.fail(queue, job.id, { message: outcome.error ?? "not delivered" });
  } catch (error) {
    // The attempt could not even be recorded (the database is away): pg-boss retries the job.
    log.warn("notice delivery attempt failed", { ...errorFields(error), queue, job_id: job.id });
    await boss.fail(queue, job.id, { message: (error as Error).message }).catch(() => {});
  }
}

const globalForWorker = globalThis as unknown as { dasNoticeWorker?: Promise<NoticeDeliveryWorker | null> };

/**
 * The delivery worker of a server process (instrumentation.ts), unless NOTICE_WORKER=off: every
 * instance works the queue, pg-boss hands each job to one of them. Never a reason not to serve: a
 * worker that cannot start is logged, and the jobs wait in the database for one that can.
 */
export function startNoticeDeliveryWorkerFromEnv(): void {
  if (globalForWorker.dasNoticeWorker || env().NOTICE_WORKER === "off") return;
  globalForWorker.dasNoticeWorker = startNoticeDeliveryWorker({ url: requireEnv("DATABASE_URL"), db: getDb() }).catch(
    (error) => {
      log.warn("notice delivery worker not started", errorFields(error));
      return null;
    },
  );
}
