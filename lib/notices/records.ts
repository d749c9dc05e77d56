import type { Sql } from "../db/client";
import type { NoticeDeliveryInput } from "../notice-delivery/enqueue";

// What a notice says, one shape per kind, as GET /api/v1/notices shows it and as its webhook's
// `data` carries it (without what the recipient did since: acknowledgements and reminders).

/** One log entry that carried withdrawn episodes to the organisation. */
export type NoticeDelivery = {
  download_id: string;
  seq: number;
  occurred_at: string;
  channel: "api" | "portal" | "preview" | "hub";
  dataset_id: string;
  version: string;
  /** The withdrawn episodes this entry carried. */
  episode_ids: string[];
};

type Common = {
  notice_id: string;
  created_at: string;
  /** The first acknowledgement's time, or null while none was made. */
  acknowledged_at: string | null;
};

/** Episodes the organisation received were withdrawn: delete them, then acknowledge. */
export type WithdrawalNotice = Common & {
  kind: "withdrawal";
  withdrawal_id: string;
  /** The organisation's own withdrawn episodes, in byte order. */
  episode_ids: string[];
  deliveries: NoticeDelivery[];
  /** How many reminders went out while it was not acknowledged, and the latest one's time. */
  reminders: number;
  last_reminded_at: string | null;
};

/** A new version of a dataset the organisation holds a current licence for an earlier version of. */
export type NewVersionNotice = Common & {
  kind: "new_version";
  dataset_id: string;
  version: string;
  released_at: string;
  /** The earlier versions the organisation held a current licence for when it was released. */
  licensed_versions: string[];
};

/** The organisation's licence ends within 30 (or 7) days. */
export type LicenceEndingNotice = Common & {
  kind: "licence_ending";
  dataset_id: string;
  version: string;
  ends_at: string;
  /** Which warning: 30 or 7 days before the end. */
  days_before: 30 | 7;
};

export type NoticeRecord = WithdrawalNotice | NewVersionNotice | LicenceEndingNotice;
export type NoticeKind = NoticeRecord["kind"];

/** The event types of webhooks (the body's `type`) and emails, one per kind, and the reminder's. */
export const NOTICE_EVENT_TYPES = {
  withdrawal: "notice.withdrawal",
  new_version: "notice.new_version",
  licence_ending: "notice.licence_ending",
} as const satisfies Record<NoticeKind, string>;
export const WITHDRAWAL_REMINDER_EVENT = "notice.withdrawal_reminder";

/** A notice as the notices table holds it, with its acknowledgement and reminders joined. */
export type NoticeRow = {
  notice_id: string;
  kind: NoticeKind;
  created_at: Date;
  withdrawal_id: string | null;
  episode_ids: string[] | null;
  deliveries: NoticeDelivery[] | null;
  details: Record<string, unknown> | null;
  acknowledged_at: Date | null;
  reminders: number;
  last_reminded_at: Date | null;
};

export function noticeRecord(row: NoticeRow): NoticeRecord {
  const common = { notice_id: row.notice_id, created_at: row.created_at.toISOString() };
  const acknowledged_at = row.acknowledged_at?.toISOString() ?? null;
  if (row.kind === "withdrawal")
    return {
      ...common,
      kind: "withdrawal",
      withdrawal_id: row.withdrawal_id!,
      episode_ids: row.episode_ids!,
      deliveries: row.deliveries!,
      acknowledged_at,
      reminders: row.reminders,
      last_reminded_at: row.last_reminded_at?.toISOString() ?? null,
    };
  const d = row.details!;
  if (row.kind === "new_version")
    return {
      ...common,
      kind: "new_version",
      dataset_id: d.dataset_id as string,
      version: d.version as string,
      released_at: d.released_at as string,
      licensed_versions: d.licensed_versions as string[],
      acknowledged_at,
    };
  return {
    ...common,
    kind: "licence_ending",
    dataset_id: d.dataset_id as string,
    version: d.version as string,
    ends_at: d.ends_at as string,
    days_before: d.days_before as 30 | 7,
    acknowledged_at,
  };
}

/** The SQL columns `noticeRecord` reads, for a query over `notices n`. */
export const noticeColumns = (
  sql: Sql,
) => sql`n.id as notice_id, n.kind, n.created_at, n.withdrawal_id, n.episode_ids, n.deliveries, n.details,
  (select min(a.acknowledged_at) from notice_acknowledgements a where a.notice_id = n.id) as acknowledged_at,
  (select count(*)::int from notice_reminders r where r.notice_id = n.id) as reminders,
  (select max(r.reminded_at) from notice_reminders r where r.notice_id = n.id) as last_reminded_at`;

/** A notice new and not yet acknowledged, as its delivery carries it. */
export type WrittenNotice = {
  notice_id: string;
  organization_id: string;
  created_at: Date;
  details: Record<string, unknown>;
};

/** What the delivery of a notice of a new version or licence end carries: the record as first written. */
export function noticeDelivery(kind: "new_version" | "licence_ending", notice: WrittenNotice): NoticeDeliveryInput {
  const { acknowledged_at: _, ...payload } = noticeRecord({
    notice_id: notice.notice_id,
    kind,
    created_at: notice.created_at,
    withdrawal_id: null,
    episode_ids: null,
    deliveries: null,
    details: notice.details,
    acknowledged_at: null,
    reminders: 0,
    last_reminded_at: null,
  });
  return {
    organizationId: notice.organization_id,
    noticeId: notice.notice_id,
    eventType: NOTICE_EVENT_TYPES[kind],
    payload,
    email: noticeEmail(payload as NewVersionNotice | LicenceEndingNotice),
  };
}

function noticeEmail(notice: NewVersionNotice | LicenceEndingNotice): { subject: string; text: string } {
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
