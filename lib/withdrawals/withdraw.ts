import { lockChain } from "../disclosures/append";
import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { withTx } from "../db/tx";
import { AppError } from "../errors";
import { newId } from "../ids";
import { requireAdmin } from "../auth/authorize";
import { FREE_TEXT } from "../characters";
import { EPISODE_ID_PATTERN } from "../catalog/identifiers";
import { recordAdminAction } from "../admin/audit";
import { computeWithdrawalNotices } from "./notices";
import { NOTICE_EVENT_TYPES } from "../notices/records";
import { enqueueNoticeDeliveries, type NoticeDeliveryInput } from "../notice-delivery/enqueue";

export const REASON_MAX_CHARS = 2_000;
/** Episodes named one by one in one withdrawal; a contributor's are found by the database. */
export const MAX_NAMED_EPISODES = 10_000;

export type WithdrawInput = {
  contributor?: string;
  episodeIds?: string[];
  /** Named episodes must all be of this dataset (they are still withdrawn from every version holding them). */
  datasetId?: string;
  reason: string;
  /**
   * How many episodes the caller confirmed after a preview: the withdrawal is refused, writing
   * nothing, when it would now take a different number (another withdrawal or an import came between).
   */
  expectedEpisodes?: number;
};

export type WithdrawalRecord = {
  withdrawal_id: string;
  withdrawn_at: string;
  reason: string;
  contributor: string | null;
  /** Distinct episode ids withdrawn. */
  episode_ids: string[];
  /** dataset@version → how many of the episodes were withdrawn from it. */
  versions: { dataset_id: string; version: string; episodes: number }[];
  /** How many organisations were sent a notice. */
  notices: number;
};

/**
 * Withdraws episodes (a contributor's, or named ones) from every version that holds them, in one
 * transaction: the withdrawal record (who, when, why), which episodes in which versions, the admin
 * audit, and a notice to every organisation that ever received one of them (lib/withdrawals/notices.ts).
 * From its commit on every read leaves them out (lib/catalog/withdrawn.ts), and every instance's
 * API cache is flushed by the database's notification (migration 0019). Episodes already withdrawn
 * are left as they are; a withdrawal that finds nothing new to withdraw is refused, so that each
 * record says what it did.
 */
export async function withdrawEpisodes(ctx: Ctx, input: WithdrawInput): Promise<WithdrawalRecord> {
  requireAdmin(ctx);
  const reason = input.reason.trim();
  if (!reason || reason.length > REASON_MAX_CHARS || !FREE_TEXT.test(reason))
    throw new AppError(
      "invalid_parameter",
      `A withdrawal needs a reason of 1 to ${REASON_MAX_CHARS} characters without control characters other than line breaks.`,
    );
  if ((input.contributor === undefined) === (input.episodeIds === undefined))
    throw new AppError("invalid_parameter", "Withdraw either a contributor's episodes or named episodes, not both.");
  const named = input.episodeIds ? [...new Set(input.episodeIds)] : null;
  if (named) {
    if (!named.length) throw new AppError("invalid_parameter", "Name at least one episode to withdraw.");
    if (named.length > MAX_NAMED_EPISODES)
      throw new AppError("invalid_parameter", `At most ${MAX_NAMED_EPISODES} episodes can be named in one withdrawal.`);
    const bad = named.find((id) => !EPISODE_ID_PATTERN.test(id));
    if (bad !== undefined) throw new AppError("invalid_parameter", `'${bad}' is not an episode id.`);
  }
  if (input.datasetId !== undefined && !named)
    throw new AppError(
      "invalid_parameter",
      "A dataset narrows named episodes only; a contributor's are taken from every dataset.",
    );
  const contributor = input.contributor?.trim() ?? null;
  if (contributor !== null && !contributor)
    throw new AppError("invalid_parameter", "Name the contributor whose episodes to withdraw.");

  return withTx(ctx, async (tx) => {
    const sql = sqlOf(tx.db);
    // Withdrawals one at a time: two naming the same episode would otherwise both find it new.
    await sql`select pg_advisory_xact_lock(hashtext('das:withdrawal'))`;
    if (named) {
      const found = await sql<{ episode_id: string }[]>`
        select distinct episode_id from episodes where episode_id = any(${named}::text[])`;
      if (found.length !== named.length) {
        const present = new Set(found.map((r) => r.episode_id));
        const missing = named.filter((id) => !present.has(id));
        throw new AppError(
          "not_found",
          `No version holds these episodes: ${missing.slice(0, 20).join(", ")}${missing.length > 20 ? ` (and ${missing.length - 20} more)` : ""}.`,
        );
      }
    }
    if (named && input.datasetId !== undefined) {
      const [dataset] = await sql`select 1 from datasets where id = ${input.datasetId}`;
      if (!dataset) throw new AppError("not_found", `There is no dataset '${input.datasetId}'.`);
      const inDataset = await sql<{ episode_id: string }[]>`
        select distinct e.episode_id from episodes e join dataset_versions v on v.id = e.version_id
        where v.dataset_id = ${input.datasetId} and e.episode_id = any(${named}::text[])`;
      if (inDataset.length !== named.length) {
        const present = new Set(inDataset.map((r) => r.episode_id));
        const elsewhere = named.filter((id) => !present.has(id));
        throw new AppError(
          "invalid_parameter",
          `Not episodes of ${input.datasetId}: ${elsewhere.slice(0, 20).join(", ")}${elsewhere.length > 20 ? ` (and ${elsewhere.length - 20} more)` : ""}.`,
        );
      }
    }
    const chosen = named
      ? sql`select episode_id from episodes where episode_id = any(${named}::text[])`
      : sql`select episode_id from episodes where contributor = ${contributor}`;
    const id = newId("wd");
    const [made] = await sql<{ withdrawn_at: Date }[]>`
      insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, contributor, episode_count)
      select ${id}, ${actorKind(tx)}, ${actorId(tx)}, ${actorLabel(tx)}, ${reason}, ${contributor}, count(distinct e.episode_id)
      from episodes e
      where e.episode_id in (${chosen})
        and not exists (select 1 from withdrawn_episodes w where w.version_id = e.version_id and w.episode_id = e.episode_id)
      having count(*) > 0
      returning withdrawn_at`;
    if (!made)
      throw new AppError(
        "not_found",
        contributor !== null
          ? `No episode of contributor '${contributor}' is left to withdraw (none exists, or all are withdrawn already).`
          : "Every named episode is withdrawn already.",
      );
    // Every version that holds one of them, whoever is named as its contributor there.
    await sql`
      insert into withdrawn_episodes (version_id, episode_id, withdrawal_id)
      select e.version_id, e.episode_id, ${id} from episodes e
      where e.episode_id in (${chosen})
        and not exists (select 1 from withdrawn_episodes w where w.version_id = e.version_id and w.episode_id = e.episode_id)
      order by e.version_id, e.episode_id`;
    const record = await withdrawalSummary(sql, id);
    if (input.expectedEpisodes !== undefined && input.expectedEpisodes !== record.episode_ids.length)
      throw new AppError(
        "invalid_parameter",
        `This withdrawal would now take ${record.episode_ids.length} episode(s), not the ${input.expectedEpisodes} confirmed: something changed since the preview. Preview it again.`,
      );
    await recordAdminAction(tx, "episodes.withdraw", id, {
      reason,
      contributor,
      episodes: record.episode_ids.length,
      versions: record.versions.map((v) => `${v.dataset_id}@${v.version}`),
    });
    // Every entry appended before this takes the chain's lock is in the log the notices are computed
    // from; every entry after it sees the withdrawal under that lock and is refused (appendBatch).
    await lockChain(sql);
    const notices = await computeWithdrawalNotices(sql, id);
    await enqueueWithdrawalNotices(tx, id);
    return { ...record, withdrawn_at: made.withdrawn_at.toISOString(), notices };
  });
}

export type WithdrawalPreview = Omit<WithdrawalRecord, "withdrawal_id" | "withdrawn_at">;

/** Carries a preview's record out of the transaction it rolls back. */
class PreviewRolledBack extends Error {
  constructor(readonly record: WithdrawalRecord) {
    super("a withdrawal preview is rolled back");
  }
}

/**
 * What withdrawEpisodes would do with this input now, and nothing else: the verb itself runs in a
 * transaction (a savepoint inside the caller's) that is rolled back, so the preview counts the
 * episodes, versions and notified organisations exactly as the withdrawal would, with every refusal
 * it would make, and leaves no withdrawal, audit row, notice or delivery job behind.
 */
export async function previewWithdrawal(ctx: Ctx, input: WithdrawInput): Promise<WithdrawalPreview> {
  requireAdmin(ctx);
  try {
    await ctx.db.transaction(async (tx) => {
      throw new PreviewRolledBack(await withdrawEpisodes({ ...ctx, db: tx as unknown as Ctx["db"] }, input));
    });
  } catch (error) {
    if (!(error instanceof PreviewRolledBack)) throw error;
    const { withdrawal_id: _, withdrawn_at: __, ...preview } = error.record;
    return preview;
  }
  throw new Error("unreachable: a withdrawal preview always rolls back");
}

/**
 * Every notice of the withdrawal leaves by webhook (and email when SMTP_URL is set) through the
 * delivery queue, enqueued in the same transaction: the jobs exist exactly when the notices do.
 */
async function enqueueWithdrawalNotices(ctx: Ctx, withdrawalId: string): Promise<void> {
  await enqueueNoticeDeliveries(ctx, await withdrawalNoticeDeliveries(sqlOf(ctx.db), withdrawalId));
}

/**
 * What each notice of a withdrawal sends: the notice itself, its webhook body and email written by
 * the worker from the notice (lib/notices/withdrawal-message.ts).
 */
export async function withdrawalNoticeDeliveries(sql: Sql, withdrawalId: string): Promise<NoticeDeliveryInput[]> {
  const notices = await sql<{ notice_id: string; organization_id: string }[]>`
    select id as notice_id, organization_id from notices where withdrawal_id = ${withdrawalId} order by organization_id`;
  return notices.map(
    (n): NoticeDeliveryInput => ({
      organizationId: n.organization_id,
      noticeId: n.notice_id,
      eventType: NOTICE_EVENT_TYPES.withdrawal,
      withdrawal: {},
    }),
  );
}

/** What a withdrawal took out, from its rows. */
export async function withdrawalSummary(
  sql: Sql,
  withdrawalId: string,
): Promise<Omit<WithdrawalRecord, "withdrawn_at" | "notices">> {
  const [head] = await sql<{ reason: string; contributor: string | null }[]>`
    select reason, contributor from withdrawals where id = ${withdrawalId}`;
  if (!head) throw new AppError("not_found", `There is no withdrawal '${withdrawalId}'.`);
  const [episodes, versions] = await Promise.all([
    sql<{ episode_id: string }[]>`
      select distinct episode_id from withdrawn_episodes where withdrawal_id = ${withdrawalId} order by episode_id`,
    sql<{ dataset_id: string; version: string; episodes: number }[]>`
      select v.dataset_id, v.version, count(*)::int as episodes
      from withdrawn_episodes w join dataset_versions v on v.id = w.version_id
      where w.withdrawal_id = ${withdrawalId}
      group by v.dataset_id, v.version, v.major, v.minor, v.patch
      order by v.dataset_id, v.major, v.minor, v.patch`,
  ]);
  return {
    withdrawal_id: withdrawalId,
    reason: head.reason,
    contributor: head.contributor,
    episode_ids: episodes.map((e) => e.episode_id),
    versions: [...versions],
  };
}

function actorKind(ctx: Ctx): string {
  return ctx.principal.kind === "user" ? "user" : "operator";
}

function actorId(ctx: Ctx): string {
  const p = ctx.principal;
  return p.kind === "user" ? p.userId : p.kind === "operator" ? p.name : p.keyId;
}

function actorLabel(ctx: Ctx): string {
  const p = ctx.principal;
  if (p.kind === "user") return p.email;
  if (p.kind === "operator") return `${p.name} (das-admin)`;
  return p.keyId;
}
