import type { Sql } from "../db/client";
import type { NoticeDelivery, WithdrawalNotice } from "./records";

// A withdrawal notice names every log entry that carried the organisation's withdrawn episodes: at
// a million entries, tens of kilobytes a notice and tens of megabytes a withdrawal. Its deliveries'
// jobs therefore carry only which telling they are (the notice, or its n-th reminder), and the
// worker writes the message from the notice at each attempt
// (docs/decisions/0100-withdrawal-messages-are-written-at-delivery.md). A notice is append-only,
// so every attempt writes the same bytes.

/** Which telling of a withdrawal notice a delivery is: the notice itself, or its n-th reminder. */
export type WithdrawalTelling = { reminder?: { number: number; remindedAt: string } };

/** A withdrawal notice as the notices table holds it, what its messages are written from. */
export type WithdrawalNoticeRow = {
  notice_id: string;
  created_at: Date;
  withdrawal_id: string;
  episode_ids: string[];
  deliveries: NoticeDelivery[];
};

type WithdrawalPayload = Omit<WithdrawalNotice, "acknowledged_at" | "reminders" | "last_reminded_at"> &
  Partial<Pick<WithdrawalNotice, "acknowledged_at" | "reminders" | "last_reminded_at">>;

/** The withdrawal notices of these ids, by id. */
export async function withdrawalNoticesById(sql: Sql, ids: string[]): Promise<Map<string, WithdrawalNoticeRow>> {
  if (!ids.length) return new Map();
  const rows = await sql<WithdrawalNoticeRow[]>`
    select id as notice_id, created_at, withdrawal_id, episode_ids, deliveries
    from notices where id = any(${[...new Set(ids)]}::text[]) and kind = 'withdrawal'`;
  return new Map(rows.map((r) => [r.notice_id, r]));
}

/**
 * What a telling of a withdrawal notice says: its webhook's `data` (the notice as GET
 * /api/v1/notices shows it: as first written, or with this reminder counted) and its email.
 */
export function withdrawalMessage(
  notice: WithdrawalNoticeRow,
  telling: WithdrawalTelling,
): { payload: WithdrawalPayload; email: { subject: string; text: string } } {
  const payload: WithdrawalPayload = {
    notice_id: notice.notice_id,
    kind: "withdrawal",
    created_at: notice.created_at.toISOString(),
    withdrawal_id: notice.withdrawal_id,
    episode_ids: notice.episode_ids,
    deliveries: notice.deliveries,
  };
  const count = notice.episode_ids.length;
  const episodes = `${count} withdrawn episode${count === 1 ? "" : "s"}`;
  const list = `Episodes: ${notice.episode_ids.join(", ")}\n`;
  const reminder = telling.reminder;
  if (!reminder)
    return {
      payload,
      email: {
        subject: `Dataset Access Service: ${count} episode(s) you received were withdrawn`,
        text: `Consent for ${count} episode(s) your organisation received was withdrawn. Delete every copy of their files, then acknowledge notice ${notice.notice_id} in the portal (Notices), through the API or with das sync.\n\n${list}`,
      },
    };
  return {
    payload: {
      ...payload,
      acknowledged_at: null,
      reminders: reminder.number,
      last_reminded_at: reminder.remindedAt,
    },
    email: {
      subject: `Reminder: Dataset Access Service notice ${notice.notice_id} (${episodes}) is not acknowledged`,
      text: `On ${payload.created_at.slice(0, 10)} your organisation was told that consent for ${episodes} it received was withdrawn, and it has not acknowledged the notice yet (reminder ${reminder.number}). Delete every copy of their files, then acknowledge notice ${notice.notice_id} in the portal (Notices), through the API or with das sync.\n\n${list}`,
    },
  };
}
