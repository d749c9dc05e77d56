import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { AppError, NOT_VISIBLE } from "../errors";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";
import { noticeColumns, noticeRecord, type NoticeRecord, type NoticeRow } from "./records";

export type { NoticeDelivery, NoticeRecord } from "./records";

export type NoticeList = { notices: NoticeRecord[]; next_cursor: string | null };

type PagedRow = NoticeRow & { seq_order: string };

/** The organisation notices are addressed to: the key's, or the signed-in member's. */
export function noticeRecipient(ctx: Ctx): string {
  const p = ctx.principal;
  if ((p.kind === "api_key" || p.kind === "user") && p.organizationId) return p.organizationId;
  throw new AppError("forbidden", "Notices are addressed to organisations: their members and API keys read them.");
}

const toRecord = ({ seq_order: _, ...row }: PagedRow): NoticeRecord => noticeRecord(row);

/**
 * The caller's organisation's notices, newest first, by keyset on (created_at, id). Never
 * another organisation's: the condition is the caller's organisation, not a parameter.
 */
export async function listNotices(ctx: Ctx, input: { limit: number; cursor?: string }): Promise<NoticeList> {
  const organizationId = noticeRecipient(ctx);
  const binding = queryBinding(["notices"]);
  const after = input.cursor ? decodeCursor(input.cursor, binding, ["string", "string"]) : null;
  const sql = sqlOf(ctx.db);
  const rows = await sql<PagedRow[]>`
    select ${noticeColumns(sql)}, to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as seq_order
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
    ? await sql<PagedRow[]>`
        select ${noticeColumns(sql)}, '' as seq_order from notices n
        where n.id = ${noticeId} and n.organization_id = ${organizationId}`
    : [];
  if (!row) throw new AppError("not_found", NOT_VISIBLE.notice);
  return toRecord(row);
}

/**
 * How many of the organisation's withdrawal notices have no acknowledgement yet (the portal's
 * badge): the other kinds tell, they ask for nothing.
 */
export async function outstandingNotices(ctx: Ctx): Promise<number> {
  const organizationId = noticeRecipient(ctx);
  const [row] = await sqlOf(ctx.db)<{ n: number }[]>`
    select count(*)::int as n from notices n
    where n.organization_id = ${organizationId} and n.kind = 'withdrawal'
      and not exists (select 1 from notice_acknowledgements a where a.notice_id = n.id)`;
  return row!.n;
}
