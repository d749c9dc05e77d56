import type { PendingQuery, Row } from "postgres";
import { readsOf, type Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { requireReviewer } from "../auth/authorize";
import { csvLine, CsvRecords } from "../csv";
import { filteredEntries, type DisclosureFilter } from "./filter";
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
  /** The licence's terms document; null when it has none or the entry names no terms (made before migration 0017). */
  terms_sha256: string | null;
  episode_count: number;
  file_count: number;
  total_bytes: number;
  expires_at: string;
  request_id: string;
  requested_scope: unknown;
  hash: string;
};

const CSV_COLUMNS: (keyof ExportRow)[] = [
  "seq",
  "id",
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
  "terms_sha256",
  "episode_count",
  "file_count",
  "total_bytes",
  "expires_at",
  "request_id",
  "requested_scope",
  "hash",
];

// Entries per query: large enough that a round trip is a small part of each, small enough that a batch is a few MB.
const BATCH = 5_000;
// Episode ids per query of a JSON Lines export: a batch of whole-version entries could otherwise hold millions.
const EPISODE_BATCH = 50_000;

/**
 * The log matching a filter, oldest first, as CSV or JSON Lines, read in keyset batches on seq so
 * that millions of entries stream with flat memory: each batch is one index walk from where the
 * last one stopped, never a skip over what came before. The next batch is already being read
 * while this one is written out (two batches in memory at most), so the database and the writing
 * overlap. JSON Lines also carries each entry's episode ids, read for a run of the batch's entries
 * at once (the primary key of `disclosure_episodes` in order) rather than by a query per entry.
 * The caller's permission is checked now, before the first line is asked for, so that a refusal
 * is an answer of its own rather than a stream that breaks off.
 */
export function exportDisclosures(
  ctx: Ctx,
  filter: DisclosureFilter,
  format: ExportFormat,
  options: { batchSize?: number; episodesPerRead?: number; onRows?: (rows: number) => void } = {},
): AsyncGenerator<string | Buffer> {
  requireReviewer(ctx);
  const sql = sqlOf(readsOf(ctx));
  const size = options.batchSize ?? BATCH;
  if (format === "csv") return csvInBatches(sql, filter, size, options.onRows);
  return exportLines(
    rowsInBatches(sql, filter, size, options.episodesPerRead ?? EPISODE_BATCH),
    CSV_COLUMNS,
    format,
    options.onRows,
  );
}

type Raw = ExportRow;

/** An instant as JSON writes it (toISOString), formatted by the database rather than parsed into a Date and back for every row. */
const isoText = (sql: Sql, column: PendingQuery<Row[]>) =>
  sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * One batch of the log matching a filter, oldest first after `after`: the reads of both formats,
 * their columns in `CSV_COLUMNS`' order. For CSV, whose raw rows are written out as the database
 * sends them, numbers stay integers (a float8 of 10^15 bytes would arrive as "1e+15", not as
 * JavaScript writes the number) and the scope is JSON as the database writes it (with a space after
 * each colon and comma): parsed and written again, the scope cost a fifth of a CSV export's time.
 */
function entriesAfter(sql: Sql, filter: DisclosureFilter, after: number, size: number, format: ExportFormat) {
  const { from, where, seq } = filteredEntries(sql, filter, "oldest");
  const csv = format === "csv";
  const requestedScope = csv ? sql`d.requested_scope::text` : sql`d.requested_scope`;
  const seqColumn = csv ? sql`d.seq` : sql`d.seq::float8`;
  const totalBytes = csv ? sql`d.total_bytes` : sql`d.total_bytes::float8`;
  return sql<Raw[]>`
    select ${seqColumn} as seq, d.id, ${isoText(sql, sql`d.occurred_at`)} as occurred_at, ${recipientColumns(sql)}, d.dataset_id, d.version,
           d.licence_id, d.terms_sha256, d.episode_count, d.file_count, ${totalBytes} as total_bytes, ${isoText(sql, sql`d.expires_at`)} as expires_at,
           d.request_id, ${requestedScope} as requested_scope, d.hash
    from (select d.* from ${from} where ${seq} > ${after} and ${where} order by ${seq} limit ${size}) d
    ${recipientJoins(sql)}
    order by d.seq`;
}

const NUMBER_COLUMNS = new Set<keyof ExportRow>(["seq", "episode_count", "file_count", "total_bytes"]);
const CSV_KINDS = CSV_COLUMNS.map((column) => (NUMBER_COLUMNS.has(column) ? "number" : "text") as "number" | "text");

/**
 * CSV: each batch's rows raw, as the database sends them (bytes, no string per column), written
 * into one batch of records as they arrive (`CsvRecords`: csvLine's output, byte for byte); only
 * a field that may need quoting or neutralising is decoded. Decoding twenty columns into strings
 * and writing each out again was most of this process's time per row, a third of it collecting them.
 */
async function* csvInBatches(
  sql: Sql,
  filter: DisclosureFilter,
  size: number,
  onRows?: (rows: number) => void,
): AsyncGenerator<string | Buffer> {
  yield csvLine(CSV_COLUMNS);
  // One buffer for every batch (each read takes its bytes before the next read starts), so that it
  // grows to a batch's size once rather than for every batch.
  const records = new CsvRecords();
  const read = async (after: number) => {
    let rows = 0;
    let lastSeq = "";
    await entriesAfter(sql, filter, after, size, "csv")
      .raw()
      .forEach((row) => {
        const columns = row as unknown as (Uint8Array | null)[];
        for (let i = 0; i < CSV_KINDS.length; i++) records.field(columns[i]!, CSV_KINDS[i]!);
        records.end();
        rows++;
        if (rows === size) lastSeq = Buffer.from(columns[0]!).toString("latin1");
      });
    return { lines: records.take(), rows, last: rows === size ? Number(lastSeq) : null };
  };
  for await (const { lines, rows } of readingAhead(read, (batch) => batch.last)) {
    onRows?.(rows);
    if (lines.length) yield lines;
  }
}

/**
 * JSON Lines: rows in batches, each entry with its episode ids, read for a run of the batch's
 * entries at once (the primary key of `disclosure_episodes` in order) rather than by a query per
 * entry. The episode ids of a batch's first run (usually all of it) are read with the batch, ahead.
 */
async function* rowsInBatches(
  sql: Sql,
  filter: DisclosureFilter,
  size: number,
  episodesPerRead: number,
): AsyncGenerator<(ExportRow & { episode_ids?: string[] })[]> {
  const read = async (after: number) => {
    const rows = await entriesAfter(sql, filter, after, size, "jsonl").execute();
    const runs = [...runsOfEpisodes(rows, episodesPerRead)];
    const firstEpisodes = runs.length
      ? await episodeIdsOf(
          sql,
          runs[0]!.map((r) => r.id),
        )
      : null;
    return { rows, runs, firstEpisodes };
  };
  for await (const { runs, firstEpisodes } of readingAhead(read, ({ rows }) =>
    rows.length === size ? rows.at(-1)!.seq : null,
  )) {
    for (const [i, run] of runs.entries()) {
      const episodes =
        i === 0
          ? firstEpisodes!
          : await episodeIdsOf(
              sql,
              run.map((r) => r.id),
            );
      yield run.map((raw) => ({ ...raw, episode_ids: episodes.get(raw.id) ?? [] }));
    }
  }
}

/** Consecutive entries holding at most `limit` episodes together (an entry with more is a run of its own). */
function* runsOfEpisodes(rows: Raw[], limit: number): Generator<Raw[]> {
  let run: Raw[] = [];
  let episodes = 0;
  for (const row of rows) {
    if (run.length && episodes + row.episode_count > limit) {
      yield run;
      run = [];
      episodes = 0;
    }
    run.push(row);
    episodes += row.episode_count;
  }
  if (run.length) yield run;
}

async function episodeIdsOf(sql: Sql, ids: string[]): Promise<Map<string, string[]>> {
  const rows = await sql<{ disclosure_id: string; episode_ids: string[] }[]>`
    select disclosure_id, array_agg(episode_id order by episode_id) as episode_ids
    from disclosure_episodes where disclosure_id = any(${ids}::text[]) group by disclosure_id`;
  return new Map(rows.map((r) => [r.disclosure_id, r.episode_ids]));
}

/**
 * Batches in keyset order, each asked for as soon as the one before it has arrived: the database
 * reads the next while this one is written out, and at most two are in memory. `after` says where
 * the batch after one starts, or null after the last.
 */
async function* readingAhead<B>(
  read: (after: number) => Promise<B>,
  after: (batch: B) => number | null,
): AsyncGenerator<B> {
  const start = (from: number) => {
    const pending = read(from);
    // Awaited in turn; until then (or if the reader stops early), a failure must not count as unhandled.
    pending.catch(() => {});
    return pending;
  };
  let current = start(0);
  for (;;) {
    const batch = await current;
    const from = after(batch);
    const next = from === null ? null : start(from);
    yield batch;
    if (!next) return;
    current = next;
  }
}

/**
 * Batches of rows as CSV (a header, then the columns of each row) or as JSON Lines (each row
 * whole), one piece of text per batch: a step of an async generator costs about as much as
 * writing a line, so a million rows handed on one at a time spent a fifth of the export there.
 */
export async function* exportLines<R>(
  batches: AsyncIterable<readonly R[]>,
  columns: readonly (keyof R & string)[],
  format: ExportFormat,
  /** Told how many rows each piece holds (the header is not a row). */
  onRows?: (rows: number) => void,
): AsyncGenerator<string> {
  if (format === "csv") yield csvLine(columns);
  for await (const batch of batches) {
    let text = "";
    for (const row of batch)
      text += format === "csv" ? csvLine(columns.map((c) => row[c])) : `${JSON.stringify(row)}\n`;
    onRows?.(batch.length);
    if (text) yield text;
  }
}
