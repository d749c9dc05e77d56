import { readsOf, type Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { requireReviewer } from "../auth/authorize";
import { AppError } from "../errors";
import { CONTROL_CHARACTERS } from "../characters";
import { exportLines, type ExportFormat } from "./export";
import { recipientColumns, recipientJoins, type Recipient } from "./recipient";
import { cappedCount, COUNT_CAP, type CappedCount } from "./search";
import { filteredEntries } from "./filter";

export type ContributorRecipient = Recipient & {
  /** Whose episodes: repeated on every row so that an exported file says it by itself. */
  contributor: string;
  download_id: string;
  seq: number;
  occurred_at: string;
  dataset_id: string;
  version: string;
  /** The licence the entry was made under; null for a reviewer's or admin's preview. */
  licence_id: string | null;
  /** How many of the contributor's episodes the entry held. */
  episode_count: number;
};

/**
 * What all of a contributor's entries add up to: downloads and previews apart, the organisations
 * that received them, and the episodes downloaded (counted once per download). Only while they
 * are no more than the count's cap; past it the page says how many there are at least.
 */
export type ContributorSummary = {
  downloads: number;
  previews: number;
  organizations: number;
  episodes_downloaded: number;
};

const CSV_COLUMNS: (keyof ContributorRecipient)[] = [
  "contributor",
  "seq",
  "occurred_at",
  "organization",
  "organization_name",
  "api_key",
  "user",
  "reviewer_role",
  "channel",
  "dataset_id",
  "version",
  "licence_id",
  "episode_count",
  "download_id",
];

const BATCH = 2_000;

/**
 * Who received a contributor's episodes: one page, newest first, of the entries that held at
 * least one of them, with how many and under which licence, by keyset on seq (`before`), and how
 * many such entries there are, counted up to `countCap`. Read from `disclosure_contributors`
 * (filled as each entry is appended), so a page is one walk of (contributor, seq) however many
 * episodes the log has disclosed.
 */
export async function recipientsOfContributor(
  ctx: Ctx,
  input: { contributor: string; before?: number; limit: number; countCap?: number },
): Promise<{
  rows: ContributorRecipient[];
  nextBefore: number | null;
  total: CappedCount;
  summary: ContributorSummary | null;
}> {
  const sql = checkedSql(ctx, input.contributor);
  const cap = input.countCap ?? COUNT_CAP;
  const [rows, [counted]] = await Promise.all([
    recipientsQuery(sql, input.contributor, input.before, input.limit + 1),
    // One more than the cap is read, so that past it the answer is only that there are more. The
    // summary holds each entry's channel and organisation (migration 0011): the count reads one
    // index, not the entries.
    sql<(ContributorSummary & { entries: number })[]>`
      select count(*)::int as entries,
             count(*) filter (where c.channel <> 'preview')::int as downloads,
             count(*) filter (where c.channel = 'preview')::int as previews,
             count(distinct c.organization_id)::int as organizations,
             coalesce(sum(c.episode_count) filter (where c.channel <> 'preview'), 0)::int as episodes_downloaded
      from (select organization_id, channel, episode_count from disclosure_contributors where contributor = ${input.contributor}
            order by seq desc limit ${cap + 1}) c`,
  ]);
  const page = rows.slice(0, input.limit).map(presented);
  const total = cappedCount(counted!.entries, cap);
  const { entries: _entries, ...summary } = counted!;
  return {
    rows: page,
    nextBefore: rows.length > input.limit ? page.at(-1)!.seq : null,
    total,
    summary: total.more ? null : summary,
  };
}

/** Every such entry, newest first, as CSV or JSON Lines, read in keyset batches as the lines are asked for. */
export function exportRecipientsOfContributor(
  ctx: Ctx,
  contributor: string,
  format: ExportFormat,
): AsyncGenerator<string> {
  const sql = checkedSql(ctx, contributor);
  return exportLines(rowsInBatches(sql, contributor), CSV_COLUMNS, format);
}

function checkedSql(ctx: Ctx, contributor: string): Sql {
  requireReviewer(ctx);
  // PostgreSQL cannot compare a NUL: a contributor with a control character is refused before SQL.
  if (CONTROL_CHARACTERS.test(contributor))
    throw new AppError("invalid_parameter", "A contributor must not contain control characters.");
  return sqlOf(readsOf(ctx));
}

type Row = Omit<ContributorRecipient, "occurred_at"> & { occurred_at: Date };

/** The search's own walk of a contributor's entries (filteredEntries), with how many of their episodes each held. */
function recipientsQuery(sql: Sql, contributor: string, before: number | undefined, limit: number) {
  const { from, where, seq } = filteredEntries(sql, { contributor });
  return sql<Row[]>`
    select c.contributor, d.id as download_id, d.seq::float8 as seq, d.occurred_at, ${recipientColumns(sql)},
           d.dataset_id, d.version, d.licence_id, c.episode_count
    from ${from}
    ${recipientJoins(sql)}
    where ${where} ${before === undefined ? sql`` : sql`and ${seq} < ${before}`}
    order by ${seq} desc limit ${limit}`;
}

async function* rowsInBatches(sql: Sql, contributor: string): AsyncGenerator<ContributorRecipient[]> {
  let before: number | undefined;
  for (;;) {
    const rows = await recipientsQuery(sql, contributor, before, BATCH);
    yield rows.map(presented);
    if (rows.length < BATCH) return;
    before = rows.at(-1)!.seq;
  }
}

const presented = (row: Row): ContributorRecipient => ({ ...row, occurred_at: row.occurred_at.toISOString() });
