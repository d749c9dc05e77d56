import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { requireReviewer } from "../auth/authorize";
import { AppError } from "../errors";
import { CONTROL_CHARACTERS } from "../characters";
import { exportLines, type ExportFormat } from "./export";
import { recipientColumns, recipientJoins, type Recipient } from "./recipient";

export type ContributorRecipient = Recipient & {
  download_id: string;
  seq: number;
  occurred_at: string;
  dataset_id: string;
  version: string;
  episode_count: number;
};

const CSV_COLUMNS: (keyof ContributorRecipient)[] = [
  "seq", "occurred_at", "organization", "organization_name", "api_key", "user", "reviewer_role", "channel", "dataset_id", "version", "episode_count", "download_id",
];

const BATCH = 500;

/** Who received a contributor's episodes: every disclosure that included at least one, with how many. One query. */
export async function recipientsOfContributor(ctx: Ctx, contributor: string): Promise<ContributorRecipient[]> {
  const sql = checkedSql(ctx, contributor);
  return (await recipientsQuery(sql, contributor)).map(presented);
}

/** The same list as CSV or JSON Lines, read from the database in batches as the lines are asked for. */
export function exportRecipientsOfContributor(ctx: Ctx, contributor: string, format: ExportFormat): AsyncGenerator<string> {
  const sql = checkedSql(ctx, contributor);
  return exportLines(rowsInBatches(sql, contributor), CSV_COLUMNS, format);
}

function checkedSql(ctx: Ctx, contributor: string): Sql {
  requireReviewer(ctx);
  // PostgreSQL cannot compare a NUL: a contributor with a control character is refused before SQL.
  if (CONTROL_CHARACTERS.test(contributor)) throw new AppError("invalid_parameter", "A contributor must not contain control characters.");
  return sqlOf(ctx.db);
}

type Row = Omit<ContributorRecipient, "occurred_at"> & { occurred_at: Date };

function recipientsQuery(sql: Sql, contributor: string) {
  return sql<Row[]>`
    select d.id as download_id, d.seq::float8 as seq, d.occurred_at, ${recipientColumns(sql)},
           d.dataset_id, d.version, count(*)::int as episode_count
    from episodes e
    join disclosure_episodes de on de.version_id = e.version_id and de.episode_id = e.episode_id
    join disclosures d on d.id = de.disclosure_id
    ${recipientJoins(sql)}
    where e.contributor = ${contributor}
    group by d.id, o.id, k.id, u.id
    order by d.seq desc`;
}

async function* rowsInBatches(sql: Sql, contributor: string): AsyncGenerator<ContributorRecipient> {
  for await (const rows of recipientsQuery(sql, contributor).cursor(BATCH)) yield* rows.map(presented);
}

const presented = (row: Row): ContributorRecipient => ({ ...row, occurred_at: row.occurred_at.toISOString() });
