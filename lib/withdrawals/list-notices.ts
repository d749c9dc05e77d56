import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { AppError, NOT_VISIBLE } from "../errors";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";

/** One log entry that carried withdrawn episodes to the organisation. */
export type NoticeDelivery = {
  download_id: string;
  seq: number;
  occurred_at: string;
  channel: "api" | "portal" | "preview";
  dataset_id: string;
  version: string;
  /** The withdrawn episodes this entry carried. */
  episode_ids: string[];
};

export type NoticeRecord = {
  notice_id: string;
  kind: "withdrawal";
  created_at: string;
  withdrawal_id: string;
  /** The organisation's own withdrawn episodes, in byte order. */
  episode_ids: string[];
  deliveries: NoticeDelivery[];
  /** The first acknowledgement's time, or null while none was made. */
  acknowledged_at: string | null;
};

export type NoticeList = { notices: NoticeRecord[]; next_cursor: string | null };

type NoticeRow = Omit<NoticeRecord, "created_at" | "acknowledged_at"> & {
  created_at: Date;
  acknowledged_at: Date | null;
  seq_order: string;
};

/** The organisation notices are addressed to: the key's, or the signed-in member's. */
export function noticeRecipient(ctx: Ctx): string {
  const p = ctx.principal;
  if ((p.kind === "api_key" || p.kind === "user") && p.organizationId) return p.organizationId;
  throw new AppError("forbidden", "Notices are addressed to organisations: their members and API keys read them.");
}

const columns = (sql: Sql) => sql`n.id as notice_id, n.kind, n.created_at, n.withdrawal_id, n.episode_ids, n.deliveries,
  (select min(a.acknowledged_at) from notice_acknowledgements a where a.notice_id = n.id) as acknowledged_at`;

const toRecord = ({ seq_order: _, ...r }: NoticeRow): NoticeRecord => ({
  ...r,
  created_at: r.created_at.toISOString(),
  acknowledged_at: r.acknowledged_at?.toISOString() ?? null,
});

/**
 * The caller's organisation's notices, newest first, by keyset on (created_at, id). Never
 * another organisation's: the condition is the caller's organisation, not a parameter.
 */
export async function listNotices(ctx: Ctx, input: { limit: number; cursor?: string }): Promise<NoticeList> {
  const organizationId = noticeRecipient(ctx);
  const binding = queryBinding(["notices"]);
  const after = input.cursor ? decodeCursor(input.cursor, binding, ["string", "string"]) : null;
  const sql = sqlOf(ctx.db);
  const rows = await sql<NoticeRow[]>`
    select ${columns(sql)}, to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as seq_order
    from notices n
    where n.organization_id = ${organizationId}
      ${after ? sql`and (to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), n.id) < (${after[0]}::text, ${after[1]}::text)` : sql``}
    order by n.created_at desc, n.id desc
    limit ${input.limit + 1}`;
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    notices: page.map(toRecord),
    next_cursor: rows.length > input.limit && last ? encodeCursor(binding, [last.seq_order, last.notice_id]) : null,
  };
}

/** One notice of the caller's organisation; another's is indistinguishable from none (404). */
export async function requireNotice(ctx: Ctx, noticeId: string): Promise<NoticeRecord> {
  const organizationId = noticeRecipient(ctx);
  const sql = sqlOf(ctx.db);
  const [row] = /^nt_[0-9a-f]{32}$/.test(noticeId)
    ? await sql<NoticeRow[]>`
        select ${columns(sql)}, '' as seq_order from notices n
        where n.id = ${noticeId} and n.organization_id = ${organizationId}`
    : [];
  if (!row) throw new AppError("not_found", NOT_VISIBLE.notice);
  return toRecord(row);
}

/** How many of the organisation's notices have no acknowledgement yet (the portal's badge). */
export async function outstandingNotices(ctx: Ctx): Promise<number> {
  const organizationId = noticeRecipient(ctx);
  const [row] = await sqlOf(ctx.db)<{ n: number }[]>`
    select count(*)::int as n from notices n
    where n.organization_id = ${organizationId}
      and not exists (select 1 from notice_acknowledgements a where a.notice_id = n.id)`;
  return row!.n;
}
