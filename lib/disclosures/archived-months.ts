import type { Sql } from "../db/client";

/**
 * A month of the log that is archived (its partitions are in the object store, not the database),
 * as the walk joins it: the entries first_seq..last_seq, the hash the first links to and the last's
 * hash, recorded when the month closed (migration 0027) and checked against the archive when it was
 * made (lib/disclosures/archive.ts).
 */
export type ArchivedMonth = { month: string; firstSeq: number; lastSeq: number; prevHash: string; lastHash: string };

/** The months whose latest archive action is `archived`, as SQL rows (first_seq, last_seq, prev_hash, last_hash). */
export const archivedMonthsSql = (sql: Sql) => sql`(
  select to_char(m.month, 'YYYY-MM') as month, m.first_seq, m.last_seq, m.prev_hash, m.last_hash
  from disclosure_months m
  where (select a.action from disclosure_archives a where a.month = m.month order by a.id desc limit 1) = 'archived')`;

/** The archived months, in seq order. */
export async function archivedMonths(sql: Sql): Promise<ArchivedMonth[]> {
  const rows = await sql<
    { month: string; first_seq: string; last_seq: string; prev_hash: string; last_hash: string }[]
  >`
    select * from ${archivedMonthsSql(sql)} a order by first_seq`;
  return rows.map((r) => ({
    month: r.month,
    firstSeq: Number(r.first_seq),
    lastSeq: Number(r.last_seq),
    prevHash: r.prev_hash,
    lastHash: r.last_hash,
  }));
}
