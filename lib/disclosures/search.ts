import { readsOf, type Ctx } from "../context";
import { sqlOf } from "../db/client";
import type { RequestedScope } from "../db/schema";
import { AppError } from "../errors";
import { requireReviewer } from "../auth/authorize";
import { countedEntries, filteredEntries, type DisclosureFilter } from "./filter";
import { hashOfRow, isoOfDate } from "./chain";
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
 * cost on page 1 and page 10,000 of a log of millions (see `filteredEntries` for why every
 * filter, and every combination of them, stays a bounded walk).
 */
export async function searchDisclosures(
  ctx: Ctx,
  input: { filter: DisclosureFilter; before?: number; limit: number },
): Promise<{ entries: DisclosureSummary[]; nextBefore: number | null }> {
  requireReviewer(ctx);
  const sql = sqlOf(readsOf(ctx));
  const { from, where, seq } = filteredEntries(sql, input.filter);
  // The page first, then who its entries went to: joined for the page's entries only.
  const rows = await sql<DisclosureSummary[]>`
    select d.id, d.seq::float8 as seq, d.occurred_at, ${recipientColumns(sql)},
           d.dataset_id, d.version, d.episode_count, d.file_count, d.total_bytes::float8 as total_bytes
    from (
      select d.* from ${from}
      where ${input.before === undefined ? sql`true` : sql`${seq} < ${input.before}`} and ${where}
      order by ${seq} desc limit ${input.limit + 1}
    ) d ${recipientJoins(sql)}
    order by d.seq desc`;
  const entries = rows.slice(0, input.limit);
  return { entries, nextBefore: rows.length > input.limit ? entries.at(-1)!.seq : null };
}

/** How many there are, up to a cap: `more` when there are more than `count` (which is then the cap). */
export type CappedCount = { count: number; more: boolean };

/** Above this, a count says "more than 10,000" rather than read on through millions of entries. */
export const COUNT_CAP = 10_000;

/**
 * How many entries match a search, counted no further than `cap`: an exact count of a broad
 * search over ten million entries would read them all, so past the cap the answer is only that
 * there are more. One more than the cap is read to know which.
 */
export async function countDisclosures(ctx: Ctx, filter: DisclosureFilter, cap = COUNT_CAP): Promise<CappedCount> {
  requireReviewer(ctx);
  const sql = sqlOf(readsOf(ctx));
  const { from, where } = countedEntries(sql, filter);
  const [row] = await sql<
    { n: number }[]
  >`select count(*)::int as n from (select 1 from ${from} where ${where} limit ${cap + 1}) matched`;
  return cappedCount(row!.n, cap);
}

export const cappedCount = (n: number, cap: number): CappedCount =>
  n > cap ? { count: cap, more: true } : { count: n, more: false };

export type DisclosureDetail = DisclosureSummary & {
  /** Null for a reviewer's or admin's preview, made without a licence. */
  licence_id: string | null;
  /** Whether the entry names its licence's terms: every entry under a licence since migration 0017. */
  names_terms: boolean;
  /** The SHA-256 of the terms document the licence was granted under; null when it has none (or the entry names none). */
  terms_sha256: string | null;
  /** That document's title. */
  terms_title: string | null;
  request_id: string;
  expires_at: Date;
  requested_scope: RequestedScope;
  episodes_sha256: string;
  files_sha256: string | null;
  prev_hash: string;
  hash: string;
  /** Whether the entry still hashes to its recorded hash (the chain check covers links and episodes). */
  hash_matches: boolean;
};

export async function getDisclosure(ctx: Ctx, id: string): Promise<DisclosureDetail> {
  requireReviewer(ctx);
  const sql = sqlOf(readsOf(ctx));
  // Downloads are dl_…, previews pv_…
  const [row] = /^(dl|pv)_[0-9A-Za-z]{1,40}$/.test(id)
    ? await sql<
        (DisclosureDetail & { organization_id: string | null; api_key_id: string | null; user_id: string | null })[]
      >`
        select d.id, d.seq::float8 as seq, d.occurred_at, ${recipientColumns(sql)},
               d.dataset_id, d.version, d.episode_count, d.file_count, d.total_bytes::float8 as total_bytes,
               d.licence_id, d.names_terms, d.terms_sha256, t.title as terms_title,
               d.request_id, d.expires_at, d.requested_scope, d.episodes_sha256, d.files_sha256, d.prev_hash, d.hash,
               d.organization_id, d.api_key_id, d.user_id
        from disclosures d ${recipientJoins(sql)}
        left join terms_documents t on t.sha256 = d.terms_sha256
        where d.id = ${id}`
    : [];
  if (!row) throw new AppError("not_found", "No disclosure with this id.");
  const recomputed = hashOfRow(row, isoOfDate);
  return { ...row, hash_matches: recomputed === row.hash };
}

/**
 * One page of the episodes an entry disclosed, in byte order after `after`: a whole version can
 * be 50,000 of them, so the entry page lists them a page at a time (keyset on the primary key
 * (disclosure_id, episode_id), no OFFSET).
 */
export async function disclosedEpisodes(
  ctx: Ctx,
  input: { id: string; after?: string; limit: number },
): Promise<{ episodeIds: string[]; nextAfter: string | null }> {
  requireReviewer(ctx);
  const sql = sqlOf(readsOf(ctx));
  const rows = await sql<{ episode_id: string }[]>`
    select episode_id from disclosure_episodes
    where disclosure_id = ${input.id} ${input.after === undefined ? sql`` : sql`and episode_id > ${input.after}`}
    order by episode_id limit ${input.limit + 1}`;
  const episodeIds = rows.slice(0, input.limit).map((r) => r.episode_id);
  return { episodeIds, nextAfter: rows.length > input.limit ? episodeIds.at(-1)! : null };
}

/** What the search form offers to choose from: organisations and dataset versions seen in the log. */
export async function reviewFacets(
  ctx: Ctx,
): Promise<{ organizations: { slug: string; name: string }[]; datasets: string[] }> {
  requireReviewer(ctx);
  const sql = sqlOf(readsOf(ctx));
  const [organizations, datasets] = await Promise.all([
    sql<{ slug: string; name: string }[]>`select slug, name from organizations order by name`,
    sql<{ id: string }[]>`select id from datasets order by id`,
  ]);
  return { organizations: [...organizations], datasets: datasets.map((d) => d.id) };
}
