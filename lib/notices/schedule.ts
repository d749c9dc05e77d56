import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { withTx } from "../db/tx";
import { env } from "../env";
import { requireAdmin } from "../auth/authorize";
import { warnEndingLicences } from "./licence-ending";
import { remindOutstandingNotices } from "./reminders";

/**
 * When the delivery worker's scheduled job runs (pg-boss cron, UTC): hourly, so a warning or a
 * reminder goes out within the hour it falls due.
 */
export const NOTICE_SCHEDULE_CRON = "7 * * * *";

export type NoticeScheduleRun = { licence_endings: number; reminders: number };

/**
 * The notices that fall due with time rather than with an action: licence-end warnings and
 * reminders of withdrawal notices not acknowledged after NOTICE_REMINDER_DAYS. One transaction,
 * one run at a time (an advisory lock: a second worker waits and then finds nothing left to do);
 * the notices' and reminders' unique keys hold even without it. `now` is the clock they are judged
 * by (tests move it).
 */
export async function runNoticeSchedule(
  ctx: Ctx,
  input: { now?: Date; reminderDays?: number } = {},
): Promise<NoticeScheduleRun> {
  requireAdmin(ctx);
  const now = input.now ?? new Date();
  const reminderDays = input.reminderDays ?? env().NOTICE_REMINDER_DAYS;
  return withTx(ctx, async (tx) => {
    const sql = sqlOf(tx.db);
    await sql`select pg_advisory_xact_lock(hashtext('das:notice-schedule'))`;
    const licence_endings = await warnEndingLicences(sql, now);
    const reminders = await remindOutstandingNotices(sql, now, reminderDays);
    return { licence_endings, reminders };
  });
}
