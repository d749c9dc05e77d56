import { getDb } from "../db/client";
import { requireEnv, env } from "../env";
import { errorFields, log } from "../log";
import { startNoticeDeliveryWorker, type NoticeDeliveryWorker, type WorkerOptions } from "../notice-delivery/worker";
import { noticeMessages } from "./messages";
import { NOTICE_SCHEDULE_CRON, runNoticeSchedule } from "./schedule";

/**
 * The notice worker: delivery (lib/notice-delivery, transport only) handed what notices say
 * (noticeMessages) and, unless `schedule` is false, the notices due with time (licence-end
 * warnings, reminders), which every server's worker keeps.
 */
export function startNoticeWorker(
  options: Omit<WorkerOptions, "render" | "schedule"> & { schedule?: boolean },
): Promise<NoticeDeliveryWorker> {
  const { schedule = true, ...delivery } = options;
  return startNoticeDeliveryWorker({
    ...delivery,
    render: noticeMessages,
    schedule: schedule
      ? {
          cron: NOTICE_SCHEDULE_CRON,
          run: async (ctx) => {
            const run = await runNoticeSchedule(ctx);
            if (run.licence_endings || run.reminders) log.info("notices due with time written", run);
          },
        }
      : undefined,
  });
}

export type { NoticeDeliveryWorker };

const globalForWorker = globalThis as unknown as { dasNoticeWorker?: Promise<NoticeDeliveryWorker | null> };

/**
 * The notice worker of a server process (instrumentation.ts), unless NOTICE_WORKER=off: every
 * instance works the queue, pg-boss hands each job to one of them. Never a reason not to serve: a
 * worker that cannot start is logged, and the jobs wait in the database for one that can.
 */
export function startNoticeWorkerFromEnv(): void {
  if (globalForWorker.dasNoticeWorker || env().NOTICE_WORKER === "off") return;
  globalForWorker.dasNoticeWorker = startNoticeWorker({ url: requireEnv("DATABASE_URL"), db: getDb() }).catch(
    (error) => {
      log.warn("notice delivery worker not started", errorFields(error));
      return null;
    },
  );
}
