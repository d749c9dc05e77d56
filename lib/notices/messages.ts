import type { Sql } from "../db/client";
import { enqueueNoticeDeliveries, type EnqueuedNoticeDelivery } from "../notice-delivery/enqueue";
import type { NoticeMessage, NoticeRenderer } from "../notice-delivery/jobs";
import {
  NOTICE_EVENT_TYPES,
  noticeRecord,
  WITHDRAWAL_REMINDER_EVENT,
  type LicenceEndingNotice,
  type NewVersionNotice,
  type NoticeKind,
  type NoticeRow,
  type WithdrawalNotice,
} from "./records";

// How a notice leaves: its delivery jobs carry only which notice and which telling of it (the
// notice itself, or its n-th reminder); the worker hands each batch's jobs to noticeMessages, which
// reads their notices once and writes what each says. A withdrawal notice names every log entry
// that carried the organisation's episodes (tens of kilobytes at a million entries), so no job
// carries a message (docs/decisions/0100-withdrawal-messages-are-written-at-delivery.md, and 0144
// for every kind). Notices and reminders are append-only, so every attempt writes the same bytes.

/** A notice to deliver by webhook and email: as written, or its n-th reminder. */
export type NoticeTelling = { noticeId: string; organizationId: string; kind: NoticeKind; reminder?: number };

const REMINDER = /^reminder-([1-9][0-9]*)$/;

/**
 * Enqueues the delivery of each telling to its organisation's webhook endpoints and, when SMTP_URL
 * is set, its users: the one way a notice leaves. Call it in the transaction that writes the
 * notice (or the reminder), so that the jobs exist exactly when it does.
 */
export function tellNotices(sql: Sql, tellings: NoticeTelling[]): Promise<EnqueuedNoticeDelivery[]> {
  return enqueueNoticeDeliveries(
    sql,
    tellings.map((t) => ({
      organizationId: t.organizationId,
      noticeId: t.noticeId,
      eventType: t.reminder === undefined ? NOTICE_EVENT_TYPES[t.kind] : WITHDRAWAL_REMINDER_EVENT,
      // Part of the message id, so that a receiver that deduplicates keeps each reminder.
      occurrence: t.reminder === undefined ? undefined : `reminder-${t.reminder}`,
    })),
  );
}

type ReminderRow = { notice_id: string; number: number; reminded_at: Date };

/**
 * What each job of a batch says, by message id: its notices read in one query (and the reminders
 * it tells of in another). A job whose notice cannot be read has none.
 */
export const noticeMessages: NoticeRenderer = async (sql, jobs) => {
  const out = new Map<string, NoticeMessage>();
  if (!jobs.length) return out;
  const reminders = jobs.flatMap((j) => {
    const number = REMINDER.exec(j.occurrence ?? "")?.[1];
    return number === undefined ? [] : [{ noticeId: j.noticeId, number: Number(number) }];
  });
  const [notices, reminded] = await Promise.all([
    sql<NoticeRow[]>`
      select n.id as notice_id, n.kind, n.created_at, n.withdrawal_id, n.episode_ids, n.deliveries, n.details
      from notices n where n.id = any(${[...new Set(jobs.map((j) => j.noticeId))]}::text[])`,
    reminders.length
      ? sql<ReminderRow[]>`
          select r.notice_id, r.number, r.reminded_at from notice_reminders r
          join unnest(${reminders.map((r) => r.noticeId)}::text[], ${reminders.map((r) => r.number)}::int[]) as t(notice_id, number)
            using (notice_id, number)`
      : [],
  ]);
  const noticeOf = new Map(notices.map((n) => [n.notice_id, n]));
  const reminderOf = new Map(reminded.map((r) => [`${r.notice_id}/${r.number}`, r.reminded_at]));
  for (const job of jobs) {
    const notice = noticeOf.get(job.noticeId);
    if (!notice) continue;
    const number = REMINDER.exec(job.occurrence ?? "")?.[1];
    if (number === undefined) {
      out.set(job.messageId, firstTelling(notice));
      continue;
    }
    const remindedAt = reminderOf.get(`${job.noticeId}/${number}`);
    if (remindedAt && notice.kind === "withdrawal")
      out.set(job.messageId, withdrawalReminder(notice, Number(number), remindedAt));
  }
  return out;
};

/** A notice as first written: the record GET /api/v1/notices shows, without what the recipient did since. */
function firstTelling(row: NoticeRow): NoticeMessage {
  if (row.kind === "withdrawal") {
    const data = withdrawalData(row);
    return { data, email: withdrawalEmail(data) };
  }
  const { acknowledged_at: _, ...data } = noticeRecord({
    ...row,
    acknowledged_at: null,
    reminders: 0,
    last_reminded_at: null,
  });
  return { data, email: noticeEmail(data as FirstTold<NewVersionNotice | LicenceEndingNotice>) };
}

type WithdrawalData = Omit<WithdrawalNotice, "acknowledged_at" | "reminders" | "last_reminded_at">;

/** A withdrawal notice's body, in the order it has always had (its kind before its time). */
function withdrawalData(row: NoticeRow): WithdrawalData {
  return {
    notice_id: row.notice_id,
    kind: "withdrawal",
    created_at: row.created_at.toISOString(),
    withdrawal_id: row.withdrawal_id!,
    episode_ids: row.episode_ids!,
    deliveries: row.deliveries!,
  };
}

const ACKNOWLEDGE = "Delete every copy of their files, then acknowledge notice";
const WHERE = "in the portal (Notices), through the API or with das sync.";
const episodeList = (notice: WithdrawalData) => `Episodes: ${notice.episode_ids.join(", ")}\n`;

function withdrawalEmail(notice: WithdrawalData): NoticeMessage["email"] {
  const count = notice.episode_ids.length;
  return {
    subject: `Dataset Access Service: ${count} episode(s) you received were withdrawn`,
    text: `Consent for ${count} episode(s) your organisation received was withdrawn. ${ACKNOWLEDGE} ${notice.notice_id} ${WHERE}\n\n${episodeList(notice)}`,
  };
}

/** The n-th reminder of a withdrawal notice not acknowledged: the notice with this reminder counted. */
function withdrawalReminder(row: NoticeRow, number: number, remindedAt: Date): NoticeMessage {
  const notice = withdrawalData(row);
  const count = notice.episode_ids.length;
  const episodes = `${count} withdrawn episode${count === 1 ? "" : "s"}`;
  return {
    data: { ...notice, acknowledged_at: null, reminders: number, last_reminded_at: remindedAt.toISOString() },
    email: {
      subject: `Reminder: Dataset Access Service notice ${notice.notice_id} (${episodes}) is not acknowledged`,
      text: `On ${notice.created_at.slice(0, 10)} your organisation was told that consent for ${episodes} it received was withdrawn, and it has not acknowledged the notice yet (reminder ${number}). ${ACKNOWLEDGE} ${notice.notice_id} ${WHERE}\n\n${episodeList(notice)}`,
    },
  };
}

/** A notice as first told: without what the recipient did since (each kind on its own). */
type FirstTold<T> = T extends unknown ? Omit<T, "acknowledged_at"> : never;

function noticeEmail(notice: FirstTold<NewVersionNotice | LicenceEndingNotice>): NoticeMessage["email"] {
  const name = `${notice.dataset_id}@${notice.version}`;
  if (notice.kind === "new_version")
    return {
      subject: `Dataset Access Service: ${name} is released`,
      text: `Version ${notice.version} of dataset ${notice.dataset_id} was released on ${notice.released_at.slice(0, 10)}. Your organisation holds a licence for ${notice.licensed_versions.join(", ")}; ask your administrator or request access in the portal to use the new version.\n\nNotice ${notice.notice_id}.\n`,
    };
  const date = notice.ends_at.slice(0, 10);
  return {
    subject: `Dataset Access Service: your licence to ${name} ends on ${date}`,
    text: `Your organisation's licence to ${name} ends on ${notice.ends_at} (UTC), within ${notice.days_before} days. After that the version's episodes and files are no longer available to you; ask your administrator to extend it if you need them.\n\nNotice ${notice.notice_id}.\n`,
  };
}
