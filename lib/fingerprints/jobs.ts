import type PgBoss from "pg-boss";
import { getDb, type Db, type Sql } from "../db/client";
import { insertJobs, JOB_QUEUES, startJobQueue, type NewJob } from "../db/job-queue";
import { env, requireEnv } from "../env";
import { errorFields, log } from "../log";
import { makeCopy, type CopyJob } from "./copies";

/**
 * The jobs that make licences' copies ahead of use: one per licence and file without a copy,
 * enqueued in the transaction that makes them due (a version fingerprinted, a licence granted on a
 * fingerprinted version), so they exist exactly when it commits; worked by every server (and
 * `das-admin worker`) one at a time, since marking a 100 MB file holds a few hundred MB.
 */

/** A copy of a 1 GB parquet file is marked in well under this; past it pg-boss hands the job out again. */
const EXPIRE_SECONDS = 15 * 60;

/**
 * Enqueues a copy job for every licence of the version (only `licenceIds`, when given) that is not
 * revoked, for every file it has no copy of. Returns how many. Call it inside the transaction that
 * makes the copies due; a job for a copy made meanwhile finds it and does nothing.
 */
export async function enqueueCopies(
  sql: Sql,
  versionId: number,
  licenceIds?: readonly string[],
): Promise<{ jobs: number; licences: number }> {
  const due = await sql<CopyJob[]>`
    select l.id as "licenceId", f.path
    from licences l join files f on f.version_id = l.version_id
    where l.version_id = ${versionId} and l.revoked_at is null
      ${licenceIds ? sql`and l.id = any(${[...licenceIds]}::text[])` : sql``}
      and not exists (select 1 from licence_copies c where c.licence_id = l.id and c.path = f.path)
    order by l.id, f.path`;
  const jobs: NewJob[] = due.map((data) => ({
    name: JOB_QUEUES.fingerprintCopy,
    data,
    retryLimit: 5,
    retryDelay: 30,
    retryBackoff: true,
    expireInSeconds: EXPIRE_SECONDS,
  }));
  for (let i = 0; i < jobs.length; i += 5000) await insertJobs(sql, jobs.slice(i, i + 5000));
  return { jobs: jobs.length, licences: new Set(due.map((d) => d.licenceId)).size };
}

export type CopyWorker = { stop(): Promise<void> };

/** Works the copy queue in this process, one copy at a time. */
export async function startCopyWorker(options: {
  url: string;
  db: Db;
  pollingIntervalSeconds?: number;
}): Promise<CopyWorker> {
  const boss = await startJobQueue(options.url, { max: 2 });
  await boss.work<CopyJob>(
    JOB_QUEUES.fingerprintCopy,
    { batchSize: 1, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2 },
    async ([job]: PgBoss.Job<CopyJob>[]) => {
      const started = Date.now();
      try {
        const outcome = await makeCopy(options.db, job!.data);
        log.info("licence copy", { ...job!.data, ...outcome, ms: Date.now() - started });
      } catch (error) {
        log.warn("licence copy failed; pg-boss retries it", { ...job!.data, ...errorFields(error) });
        throw error;
      }
    },
  );
  return { stop: () => boss.stop({ graceful: true, wait: true, timeout: 60_000 }) };
}

const globalForCopies = globalThis as unknown as { dasCopyWorker?: Promise<CopyWorker | null> };

/**
 * The copy worker of a server process (instrumentation.ts), unless COPY_WORKER=off. Never a reason
 * not to serve: one that cannot start is logged, and the jobs wait for one that can.
 */
export function startCopyWorkerFromEnv(): void {
  if (globalForCopies.dasCopyWorker || env().COPY_WORKER === "off") return;
  globalForCopies.dasCopyWorker = startCopyWorker({ url: requireEnv("DATABASE_URL"), db: getDb() }).catch((error) => {
    log.warn("licence copy worker not started", errorFields(error));
    return null;
  });
}
