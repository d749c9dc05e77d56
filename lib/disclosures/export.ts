import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { requireReviewer } from "../auth/authorize";
import { csvLine } from "../csv";
import { disclosureConditions, type DisclosureFilter } from "./filter";
import { recipientColumns, recipientJoins, type Recipient } from "./recipient";

export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export type ExportRow = Recipient & {
  seq: number;
  id: string;
  occurred_at: string;
  dataset_id: string;
  version: string;
  licence_id: string | null;
  episode_count: number;
  file_count: number;
  total_bytes: number;
  expires_at: string;
  request_id: string;
  requested_scope: unknown;
  hash: string;
};

const CSV_COLUMNS: (keyof ExportRow)[] = [
  "seq", "id", "occurred_at", "organization", "organization_name", "api_key", "user", "reviewer_role", "channel", "dataset_id", "version",
  "licence_id", "episode_count", "file_count", "total_bytes", "expires_at", "request_id", "requested_scope", "hash",
];

const BATCH = 500;

/**
 * The log matching a filter, oldest first, as CSV or JSON Lines, read in keyset batches so that
 * millions of entries stream with flat memory. JSON Lines also carries each entry's episode ids.
 * The caller's permission is checked now, before the first line is asked for, so that a refusal
 * is an answer of its own rather than a stream that breaks off.
 */
export function exportDisclosures(ctx: Ctx, filter: DisclosureFilter, format: ExportFormat): AsyncGenerator<string> {
  requireReviewer(ctx);
  return exportLines(rowsInBatches(sqlOf(ctx.db), filter, format), CSV_COLUMNS, format);
}

async function* rowsInBatches(sql: Sql, filter: DisclosureFilter, format: ExportFormat): AsyncGenerator<ExportRow & { episode_ids?: string[] }> {
  let after = 0;
  for (;;) {
    const rows = await sql<(Omit<ExportRow, "occurred_at" | "expires_at"> & { occurred_at: Date; expires_at: Date; episode_ids?: string[] })[]>`
      select d.seq::float8 as seq, d.id, d.occurred_at, ${recipientColumns(sql)}, d.dataset_id, d.version, d.licence_id, d.episode_count,
             d.file_count, d.total_bytes::float8 as total_bytes, d.expires_at, d.request_id,
             d.requested_scope, d.hash
             ${format === "jsonl" ? sql`, array(select episode_id from disclosure_episodes de where de.disclosure_id = d.id order by episode_id) as episode_ids` : sql``}
      from disclosures d ${recipientJoins(sql)}
      where d.seq > ${after} and ${disclosureConditions(sql, filter)}
      order by d.seq limit ${BATCH}`;
    for (const raw of rows) yield { ...raw, occurred_at: raw.occurred_at.toISOString(), expires_at: raw.expires_at.toISOString() };
    if (rows.length < BATCH) return;
    after = rows.at(-1)!.seq;
  }
}

/** Rows as CSV (a header, then the columns of each row) or as JSON Lines (each row whole), line by line. */
export async function* exportLines<R>(rows: AsyncIterable<R>, columns: readonly (keyof R & string)[], format: ExportFormat): AsyncGenerator<string> {
  if (format === "csv") yield csvLine(columns);
  for await (const row of rows) yield format === "csv" ? csvLine(columns.map((c) => row[c])) : `${JSON.stringify(row)}\n`;
}
