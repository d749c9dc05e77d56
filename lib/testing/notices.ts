import { randomBytes } from "node:crypto";
import type { Sql } from "../db/client";
import { tellNotices } from "../notices/messages";
import type { EnqueuedNoticeDelivery } from "../notice-delivery/enqueue";

/**
 * A withdrawal notice to the organisation (its withdrawal too), told as the product tells one:
 * for tests of delivery, which renders every message from a notice that exists. Episodes
 * ep-1 and ep-7, no log entries.
 */
export async function tellTestNotice(
  sql: Sql,
  organizationId: string,
): Promise<{ noticeId: string; enqueued: EnqueuedNoticeDelivery }> {
  const noticeId = `nt_${randomBytes(16).toString("hex")}`;
  const withdrawalId = `wd_${randomBytes(12).toString("hex")}`;
  await sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count)
    values (${withdrawalId}, 'operator', 'test', 'test (das-admin)', 'a test notice', 2)`;
  await sql`insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
    values (${noticeId}, ${organizationId}, 'withdrawal', ${withdrawalId}, ${["ep-1", "ep-7"]}::text[], '[]'::jsonb)`;
  const [enqueued] = await tellNotices(sql, [{ noticeId, organizationId, kind: "withdrawal" }]);
  return { noticeId, enqueued: enqueued! };
}
