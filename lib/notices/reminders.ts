import type { Sql } from "../db/client";
import { enqueueNoticeJobs } from "../notice-delivery/enqueue";
import { WITHDRAWAL_REMINDER_EVENT } from "./records";

type DueReminder = { notice_id: string; organization_id: string; number: number; reminded_at: Date };

/**
 * Reminds each organisation of its withdrawal notices still not acknowledged `days` days after
 * the notice or its latest reminder: a numbered row in `notice_reminders` (what reviewers see),
 * and a delivery by webhook and email with its own message id, so a receiver that deduplicates
 * keeps each reminder. The (notice, number) key makes each reminder exactly once however often and
 * on however many workers this runs; a schedule that stopped for several periods sends one
 * reminder when it runs again, not one per period missed. Returns how many went out.
 */
export async function remindOutstandingNotices(sql: Sql, now: Date, days: number): Promise<number> {
  if (days <= 0) return 0;
  const due = await sql<DueReminder[]>`
    with due as (
      select n.id, n.organization_id, coalesce(max(r.number), 0) + 1 as number
      from notices n left join notice_reminders r on r.notice_id = n.id
      where n.kind = 'withdrawal' and n.created_at <= ${now}::timestamptz - make_interval(days => ${days}::int)
        and not exists (select 1 from notice_acknowledgements a where a.notice_id = n.id)
      group by n.id
      having coalesce(max(r.reminded_at), n.created_at) <= ${now}::timestamptz - make_interval(days => ${days}::int)
    ), inserted as (
      insert into notice_reminders (notice_id, number, reminded_at)
      select id, number, ${now}::timestamptz from due order by id
      on conflict do nothing
      returning notice_id, number, reminded_at
    )
    select d.id as notice_id, d.organization_id, i.number, i.reminded_at
    from inserted i join due d on d.id = i.notice_id
    order by d.id`;
  await enqueueNoticeJobs(
    sql,
    due.map((n) => ({
      organizationId: n.organization_id,
      noticeId: n.notice_id,
      eventType: WITHDRAWAL_REMINDER_EVENT,
      occurrence: `reminder-${n.number}`,
      // The notice as GET /api/v1/notices shows it with this reminder counted, written by the worker.
      withdrawal: { reminder: { number: n.number, remindedAt: n.reminded_at.toISOString() } },
    })),
  );
  return due.length;
}
