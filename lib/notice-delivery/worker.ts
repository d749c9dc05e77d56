import type PgBoss from "pg-boss";
import { inArray } from "drizzle-orm";
import { noticeDeliveryAttempts, webhookEndpoints, type DeliveryChannel } from "../db/schema";
import { getDb, sqlOf, type Db } from "../db/client";
import { env, requireEnv } from "../env";
import { errorFields, log } from "../log";
import { JOB_QUEUES, startJobQueue, type JobQueueName } from "../db/job-queue";
import { openSecret } from "./secret-box";
import { postWebhook, type AttemptOutcome } from "./post-webhook";
import { sendNoticeEmail } from "./email";
import { NOTICE_SCHEDULE_CRON, runNoticeSchedule } from "../notices/schedule";
import { withdrawalMessage, withdrawalNoticesById, type WithdrawalNoticeRow } from "../notices/withdrawal-message";
import type { EmailJobData, JobCommon, WebhookJobData } from "./jobs";

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
  /**
   * Whether this worker also keeps the schedule (licence-end warnings, reminders): registers it,
   * sends its job when due and works it. Default true; every server's worker does.
   */
  schedule?: boolean;
};

/**
 * Works the notice queues: posts each webhook job to its endpoint and sends each email job,
 * records every attempt, and hands failures back to pg-boss, which retries them with backoff.
 */
export async function startNoticeDeliveryWorker(options: WorkerOptions): Promise<NoticeDeliveryWorker> {
  const scheduled = options.schedule ?? true;
  const boss = await startJobQueue(options.url, { schedule: scheduled });
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
      (jobs: WebhookJobData[]) => webhookAttempter(options.db, jobs, e),
      webhookTarget,
    );
  await work(
    JOB_QUEUES.noticeEmail,
    (jobs: EmailJobData[]) => emailAttempter(options.db, jobs, { smtpUrl: e.SMTP_URL, from: e.SMTP_FROM }),
    () => ({ channel: "email", endpointId: null }),
  );
  if (scheduled) {
    // Registering is idempotent (one row per queue), so every worker does it at start; pg-boss
    // lets one of them a minute send the job, and the queue holds at most one waiting.
    await boss.schedule(JOB_QUEUES.noticeSchedule, NOTICE_SCHEDULE_CRON, {}, { tz: "UTC", retryLimit: 2 });
    const ctx = {
      db: options.db,
      requestId: "notice-schedule",
      principal: { kind: "operator" as const, name: "notice schedule", organizationId: null },
    };
    await boss.work(JOB_QUEUES.noticeSchedule, { pollingIntervalSeconds }, async () => {
      const run = await runNoticeSchedule(ctx);
      if (run.licence_endings || run.reminders) log.info("notices due with time written", run);
    });
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

/** The withdrawal notices a batch's jobs are told from, read once for the batch. */
function withdrawalNoticesOf(
  db: Db,
  jobs: (WebhookJobData | EmailJobData)[],
): Promise<Map<string, WithdrawalNoticeRow>> {
  return withdrawalNoticesById(
    sqlOf(db),
    jobs.flatMap((j) => ("withdrawal" in j ? [j.noticeId] : [])),
  );
}

/** One query for the endpoints of a whole batch, each secret opened once; one for its withdrawal notices. */
async function webhookAttempter(
  db: Db,
  jobs: WebhookJobData[],
  e: { WEBHOOK_TIMEOUT_MS: number; WEBHOOKS_ALLOW_PRIVATE: boolean },
): Promise<Attempter<WebhookJobData>> {
  const [rows, notices] = await Promise.all([
    db
      .select()
      .from(webhookEndpoints)
      .where(inArray(webhookEndpoints.id, [...new Set(jobs.map((j) => j.endpointId))])),
    withdrawalNoticesOf(db, jobs),
  ]);
  const endpoints = new Map(
    rows
      .filter((r) => !r.removedAt)
      .map((r) => [r.id, { url: r.url, secret: openSecret(r.secretSealed, r.id) }] as const),
  );
  const bodyOf = (data: WebhookJobData): string | null => {
    if ("body" in data) return data.body;
    const notice = notices.get(data.noticeId);
    if (!notice) return null;
    const { payload } = withdrawalMessage(notice, data.withdrawal);
    return JSON.stringify({ type: data.eventType, timestamp: data.timestamp, data: payload });
  };
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
    const body = bodyOf(data);
    if (body === null) return NOTICE_GONE;
    return postWebhook(
      { url: endpoint.url, secret: endpoint.secret, messageId: data.messageId, body },
      { timeoutMs: e.WEBHOOK_TIMEOUT_MS, allowPrivate: e.WEBHOOKS_ALLOW_PRIVATE },
    );
  };
}

/** Emails of a batch, withdrawal notices' written from the notices read once for the batch. */
async function emailAttempter(
  db: Db,
  jobs: EmailJobData[],
  settings: { smtpUrl: string | undefined; from: string },
): Promise<Attempter<EmailJobData>> {
  const notices = await withdrawalNoticesOf(db, jobs);
  return async (data) => {
    if (!("withdrawal" in data)) return sendNoticeEmail(db, data, settings);
    const notice = notices.get(data.noticeId);
    if (!notice) return NOTICE_GONE;
    return sendNoticeEmail(db, { ...data, ...withdrawalMessage(notice, data.withdrawal).email }, settings);
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
