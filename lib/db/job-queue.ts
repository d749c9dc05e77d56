import PgBoss from "pg-boss";
import { log, errorFields } from "../log";
import type { Sql } from "./client";

// The service's job queue: pg-boss, its jobs in PostgreSQL beside everything else
// (docs/decisions/0091-notice-deliveries-through-pg-boss.md). A job is a row, so one enqueued in
// the transaction that writes a notice exists exactly when the notice does, and one that a worker
// was working on when its process died is handed out again once its expiry passes.

/** pg-boss's own schema, created and migrated by pg-boss itself (at `migrateDatabase`). */
export const JOB_QUEUE_SCHEMA = "pgboss";

/**
 * The queues the service uses; each is created when the database is migrated. `notice-schedule`
 * takes the scheduled job (pg-boss's cron) that writes licence-end warnings and reminders;
 * `fingerprint-copy` one licence's copy of one file of a fingerprinted version (lib/fingerprints).
 */
export const JOB_QUEUES = {
  noticeWebhook: "notice-webhook",
  noticeEmail: "notice-email",
  noticeSchedule: "notice-schedule",
  fingerprintCopy: "fingerprint-copy",
} as const;
export type JobQueueName = (typeof JOB_QUEUES)[keyof typeof JOB_QUEUES];

/**
 * Creates or migrates pg-boss's schema and the service's queues. Part of `migrateDatabase`, so a
 * database that is migrated can take jobs at once, before any worker has started.
 */
export async function setUpJobQueue(url: string): Promise<void> {
  const boss = new PgBoss({
    connectionString: url,
    schema: JOB_QUEUE_SCHEMA,
    max: 1,
    supervise: false,
    schedule: false,
  });
  boss.on("error", (error: Error) => log.warn("job queue set-up error", errorFields(error)));
  await boss.start();
  try {
    for (const name of Object.values(JOB_QUEUES)) {
      // The schedule's queue holds one job waiting at most: a tick while one waits adds nothing.
      const policy = name === JOB_QUEUES.noticeSchedule ? "stately" : "standard";
      if (!(await boss.getQueue(name))) await boss.createQueue(name, { name, policy });
    }
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

/**
 * A pg-boss of its own pool on `url`, started, for a process that works jobs (or maintains the
 * queue: expiring jobs whose worker vanished, archiving finished ones). With `schedule`, it also
 * keeps the cron schedules: every such process checks them, and pg-boss lets one of them a minute
 * send each due job.
 */
export async function startJobQueue(url: string, options: { max?: number; schedule?: boolean } = {}): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema: JOB_QUEUE_SCHEMA,
    max: options.max ?? 4,
    application_name: "dataset-access-service-jobs",
    schedule: options.schedule ?? false,
  });
  boss.on("error", (error: Error) => log.warn("job queue error", errorFields(error)));
  await boss.start();
  return boss;
}

export type NewJob = {
  name: JobQueueName;
  data: object;
  retryLimit: number;
  retryDelay: number;
  retryBackoff: boolean;
  /** Seconds a worker may hold the job before it is handed out again (and counts as a failed try). */
  expireInSeconds: number;
};

/**
 * Inserts jobs through `sql`, inside its transaction when it is one: they become visible to
 * workers when (and only if) that transaction commits.
 */
export async function insertJobs(sql: Sql, jobs: NewJob[]): Promise<void> {
  if (!jobs.length) return;
  // pg-boss writes its SQL for node-postgres; postgres.js takes the same text and positional values.
  const producer = new PgBoss({
    schema: JOB_QUEUE_SCHEMA,
    supervise: false,
    schedule: false,
    migrate: false,
    db: {
      executeSql: async (text: string, values: unknown[] = []) => ({
        rows: await sql.unsafe(text, values.map((v) => (v === undefined ? null : v)) as never[]),
      }),
    },
  });
  await producer.insert(jobs);
}
