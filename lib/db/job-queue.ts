import PgBoss from "pg-boss";
import { log, errorFields } from "../log";
import { sqlOf, type Db } from "./client";

// The service's job queue: pg-boss, its jobs in PostgreSQL beside everything else
// (docs/decisions/0091-notice-deliveries-through-pg-boss.md). A job is a row, so one enqueued in
// the transaction that writes a notice exists exactly when the notice does, and one that a worker
// was working on when its process died is handed out again once its expiry passes.

/** pg-boss's own schema, created and migrated by pg-boss itself (at `migrateDatabase`). */
export const JOB_QUEUE_SCHEMA = "pgboss";

/** The queues the service uses; each is created when the database is migrated. */
export const JOB_QUEUES = { noticeWebhook: "notice-webhook", noticeEmail: "notice-email" } as const;
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
      if (!(await boss.getQueue(name))) await boss.createQueue(name, { name, policy: "standard" });
    }
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

/**
 * A pg-boss of its own pool on `url`, started, for a process that works jobs (or maintains the
 * queue: expiring jobs whose worker vanished, archiving finished ones).
 */
export async function startJobQueue(url: string, options: { max?: number } = {}): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema: JOB_QUEUE_SCHEMA,
    max: options.max ?? 4,
    application_name: "dataset-access-service-jobs",
    // No cron schedules: nothing of ours uses them, and their clock monitor would poll for nothing.
    schedule: false,
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
 * Inserts jobs through `db`, inside its transaction when it is one: they become visible to workers
 * when (and only if) that transaction commits.
 */
export async function insertJobs(db: Db, jobs: NewJob[]): Promise<void> {
  if (!jobs.length) return;
  const sql = sqlOf(db);
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
