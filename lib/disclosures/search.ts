import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import type { RequestedScope } from "../db/schema";
import { AppError } from "../errors";
import { requireReviewer } from "../auth/authorize";
import { disclosureConditions, type DisclosureFilter } from "./filter";
import { entryHash, entryOfRow } from "./chain";
import { recipientColumns, recipientJoins, type Recipient } from "./recipient";

export type DisclosureSummary = Recipient & {
  id: string;
  seq: number;
  occurred_at: Date;
  dataset_id: string;
  version: string;
  episode_count: number;
  file_count: number;
  total_bytes: number;
};

/**
 * One page of the log matching a search, newest first, by keyset on `seq` (`before`): the same
 * cost on page 1 and page 10,000 of a log of millions.
 */
export async function searchDisclosures(
  ctx: Ctx,
  input: { filter: DisclosureFilter; before?: number; limit: number },
): Promise<{ entries: DisclosureSummary[]; nextBefore: number | null }> {
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  const rows = await sql<DisclosureSummary[]>`
    select d.id, d.seq::float8 as seq, d.occurred_at, ${recipientColumns(sql)},
           d.dataset_id, d.version, d.episode_count, d.file_count, d.total_bytes::float8 as total_bytes
    from disclosures d ${recipientJoins(sql)}
    where ${input.before === undefined ? sql`true` : sql`d.seq < ${input.before}`} and ${disclosureConditions(sql, input.filter)}
    order by d.seq desc limit ${input.limit + 1}`;
  const entries = rows.slice(0, input.limit);
  return { entries, nextBefore: rows.length > input.limit ? entries.at(-1)!.seq : null };
}

export type DisclosureDetail = DisclosureSummary & {
  /** Null for a reviewer's or admin's preview, made without a licence. */
  licence_id: string | null;
  request_id: string;
  expires_at: Date;
  requested_scope: RequestedScope;
  episodes_sha256: string;
  prev_hash: string;
  hash: string;
  /** Whether the entry still hashes to its recorded hash (the chain check covers links and episodes). */
  hash_matches: boolean;
  episode_ids: string[];
};

export async function getDisclosure(ctx: Ctx, id: string): Promise<DisclosureDetail> {
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  // Downloads are dl_…, previews pv_…
  const [row] = /^(dl|pv)_[0-9A-Za-z]{1,40}$/.test(id)
    ? await sql<(DisclosureDetail & { organization_id: string | null; api_key_id: string | null; user_id: string | null })[]>`
        select d.id, d.seq::float8 as seq, d.occurred_at, ${recipientColumns(sql)},
               d.dataset_id, d.version, d.episode_count, d.file_count, d.total_bytes::float8 as total_bytes,
               d.licence_id, d.request_id, d.expires_at, d.requested_scope, d.episodes_sha256, d.prev_hash, d.hash,
               d.organization_id, d.api_key_id, d.user_id,
               array(select episode_id from disclosure_episodes de where de.disclosure_id = d.id order by episode_id) as episode_ids
        from disclosures d ${recipientJoins(sql)}
        where d.id = ${id}`
    : [];
  if (!row) throw new AppError("not_found", "No disclosure with this id.");
  const recomputed = entryHash(entryOfRow(row));
  return { ...row, hash_matches: recomputed === row.hash };
}

/** What the search form offers to choose from: organisations and dataset versions seen in the log. */
export async function reviewFacets(ctx: Ctx): Promise<{ organizations: { slug: string; name: string }[]; datasets: string[] }> {
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  const [organizations, datasets] = await Promise.all([
    sql<{ slug: string; name: string }[]>`select slug, name from organizations order by name`,
    sql<{ id: string }[]>`select id from datasets order by id`,
  ]);
  return { organizations: [...organizations], datasets: datasets.map((d) => d.id) };
}
