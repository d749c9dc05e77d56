import { createHash } from "node:crypto";
import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import type { RequestedScope } from "../db/schema";
import { filesInScope } from "../downloads/resolve-scope";
import { withTx } from "../db/tx";
import { AppError } from "../errors";
import { newId } from "../ids";
import { canonicalJson } from "../canonical-json";
import { characterCount, FREE_TEXT, WITHOUT_CONTROL_CHARACTERS } from "../characters";
import { requireReviewer } from "../auth/authorize";
import { requireNotice, type NoticeRecord } from "./list-notices";

export const STATEMENT_MAX_CHARS = 4_000;
export const MAX_DELETED_PATHS = 100_000;
/**
 * Acknowledgements a notice takes: a portal user and `das sync` on a few machines, and again after
 * a later sync; each is kept for ever, so a notice cannot be made to grow the table without bound.
 */
export const MAX_ACKNOWLEDGEMENTS_PER_NOTICE = 10;
/** The hash before the first acknowledgement. */
export const ACK_GENESIS_HASH = "0".repeat(64);

export type AcknowledgementRecord = {
  acknowledgement_id: string;
  notice_id: string;
  acknowledged_at: string;
  statement: string;
  deleted_paths: string[];
  hash: string;
};

/** What an acknowledgement's hash covers: every column but its seq and hashes, as canonical JSON. */
export type ChainedAcknowledgement = {
  id: string;
  notice_id: string;
  organization_id: string;
  acknowledged_at: string;
  api_key_id: string | null;
  user_id: string | null;
  statement: string;
  deleted_paths: string[];
};

/** sha256(prev_hash + "\n" + canonical JSON): the chain of acknowledgements, simpler than the log's. */
export function acknowledgementHash(prevHash: string, ack: ChainedAcknowledgement): string {
  return createHash("sha256")
    .update(`${prevHash}\n${canonicalJson(ack)}`)
    .digest("hex");
}

/** Two appends never take the same place in the chain. */
const ACK_CHAIN_LOCK = "das:acknowledgements";

/**
 * A recipient's acknowledgement of a notice: its statement of what it did and the paths it
 * deleted, appended to the acknowledgements' hash chain. The paths may name only files the
 * notice's downloads and previews delivered (400 naming the first other one), each once; a notice
 * takes at most MAX_ACKNOWLEDGEMENTS_PER_NOTICE (a portal user, then `das sync`, ...), each kept,
 * then 409. Another organisation's notice is 404.
 */
export async function acknowledgeNotice(
  ctx: Ctx,
  input: { noticeId: string; statement: string; deletedPaths: string[] },
): Promise<AcknowledgementRecord> {
  const statement = input.statement.trim();
  if (!statement || characterCount(statement) > STATEMENT_MAX_CHARS || !FREE_TEXT.test(statement))
    throw new AppError(
      "invalid_body",
      `statement must be 1 to ${STATEMENT_MAX_CHARS} characters without control characters other than line breaks.`,
    );
  checkPathsShape(input.deletedPaths);
  const p = ctx.principal;
  return withTx(ctx, async (tx) => {
    const notice = await requireNotice(tx, input.noticeId);
    const sql = sqlOf(tx.db);
    const stranger = await firstUndelivered(sql, notice, input.deletedPaths);
    if (stranger !== null)
      throw new AppError(
        "invalid_body",
        `deleted_paths may name only files this notice's downloads and previews delivered, as their manifests name them: '${stranger}' is not one of them.`,
      );
    await sql`select pg_advisory_xact_lock(hashtext(${ACK_CHAIN_LOCK}))`;
    // Counted under the chain's lock: two acknowledgements at once cannot both be the tenth.
    const [made] = await sql<{ n: number }[]>`
      select count(*)::int as n from notice_acknowledgements where notice_id = ${notice.notice_id}`;
    if (made!.n >= MAX_ACKNOWLEDGEMENTS_PER_NOTICE)
      throw new AppError(
        "acknowledgement_limit",
        `Notice ${notice.notice_id} has ${made!.n} acknowledgements already, the most a notice takes; they are all kept.`,
      );
    const [head] = await sql<{ seq: string; hash: string; now: Date }[]>`
      select coalesce((select seq from notice_acknowledgements order by seq desc limit 1), 0)::text as seq,
             coalesce((select hash from notice_acknowledgements order by seq desc limit 1), ${ACK_GENESIS_HASH}) as hash,
             date_trunc('milliseconds', clock_timestamp()) as now`;
    const ack: ChainedAcknowledgement = {
      id: newId("ack"),
      notice_id: notice.notice_id,
      organization_id: p.organizationId!,
      acknowledged_at: head!.now.toISOString(),
      api_key_id: p.kind === "api_key" ? p.keyId : null,
      user_id: p.kind === "user" ? p.userId : null,
      statement,
      deleted_paths: [...input.deletedPaths],
    };
    const hash = acknowledgementHash(head!.hash, ack);
    await sql`
      insert into notice_acknowledgements (seq, id, notice_id, organization_id, acknowledged_at, api_key_id, user_id, statement, deleted_paths, prev_hash, hash)
      values (${Number(head!.seq) + 1}, ${ack.id}, ${ack.notice_id}, ${ack.organization_id}, ${ack.acknowledged_at}, ${ack.api_key_id},
              ${ack.user_id}, ${ack.statement}, ${ack.deleted_paths}::text[], ${head!.hash}, ${hash})`;
    return {
      acknowledgement_id: ack.id,
      notice_id: ack.notice_id,
      acknowledged_at: ack.acknowledged_at,
      statement,
      deleted_paths: ack.deleted_paths,
      hash,
    };
  });
}

function checkPathsShape(paths: string[]): void {
  if (paths.length > MAX_DELETED_PATHS)
    throw new AppError("invalid_body", `deleted_paths lists at most ${MAX_DELETED_PATHS} paths.`);
  const bad = paths.find((p) => !p || characterCount(p) > 1024 || !WITHOUT_CONTROL_CHARACTERS.test(p));
  if (bad !== undefined)
    throw new AppError("invalid_body", "deleted_paths holds paths of 1 to 1024 characters without control characters.");
  const seen = new Set<string>();
  for (const path of paths) {
    if (seen.has(path)) throw new AppError("invalid_body", `deleted_paths names '${path}' more than once.`);
    seen.add(path);
  }
}

/**
 * The first of `paths` that none of the notice's deliveries delivered, or null. What an entry
 * delivered is its recorded scope resolved again, as a replay of its download resolves it
 * (released versions never change): one query per distinct scope, each looking up only the paths
 * not yet found. A notice of another kind delivered nothing.
 */
async function firstUndelivered(sql: Sql, notice: NoticeRecord, paths: string[]): Promise<string | null> {
  if (!paths.length) return null;
  const left = new Set(paths);
  const entries = notice.kind === "withdrawal" ? notice.deliveries.map((d) => d.download_id) : [];
  const scopes = entries.length
    ? await sql<{ version_id: number; requested_scope: RequestedScope }[]>`
        select distinct version_id, requested_scope from disclosures where id = any(${entries}::text[])`
    : [];
  for (const { version_id, requested_scope } of scopes) {
    const found = await sql<{ path: string }[]>`
      select f.path from files f
      where ${filesInScope(sql, version_id, requested_scope)} and f.path = any(${[...left]}::text[])`;
    for (const { path } of found) left.delete(path);
    if (!left.size) return null;
  }
  return paths.find((p) => left.has(p)) ?? null;
}

export type AcknowledgementChainStatus =
  | { ok: true; acknowledgements: number }
  | { ok: false; acknowledgements: number; broken_at_seq: number; reason: string };

/**
 * Walks the acknowledgements in seq order, recomputing every hash from the previous one and the
 * row's own content: an edit of any row (which the database's trigger refuses, but a superuser
 * could force) or a removed row shows as the first seq where the chain breaks.
 */
export async function verifyAcknowledgements(ctx: Ctx): Promise<AcknowledgementChainStatus> {
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  let prev = ACK_GENESIS_HASH;
  let expectedSeq = 1;
  let count = 0;
  for await (const batch of rowsInOrder(sql)) {
    for (const row of batch) {
      count++;
      const { seq, prev_hash, hash, acknowledged_at, ...rest } = row;
      const ack: ChainedAcknowledgement = { ...rest, acknowledged_at: acknowledged_at.toISOString() };
      const problem =
        Number(seq) !== expectedSeq
          ? `seq ${expectedSeq} is missing`
          : prev_hash !== prev
            ? "its prev_hash is not the previous acknowledgement's hash"
            : acknowledgementHash(prev, ack) !== hash
              ? "its content does not match its hash"
              : null;
      if (problem) return { ok: false, acknowledgements: count, broken_at_seq: Number(seq), reason: problem };
      prev = hash;
      expectedSeq++;
    }
  }
  return { ok: true, acknowledgements: count };
}

type AckRow = Omit<ChainedAcknowledgement, "acknowledged_at"> & {
  seq: string;
  prev_hash: string;
  hash: string;
  acknowledged_at: Date;
};

async function* rowsInOrder(sql: Sql): AsyncGenerator<AckRow[]> {
  let after = 0;
  for (;;) {
    const batch = await sql<AckRow[]>`
      select seq::text, id, notice_id, organization_id, acknowledged_at, api_key_id, user_id, statement, deleted_paths, prev_hash, hash
      from notice_acknowledgements where seq > ${after} order by seq limit 5000`;
    if (!batch.length) return;
    yield batch;
    after = Number(batch.at(-1)!.seq);
  }
}
