import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireRole } from "../admin/authorize";
import { AppError } from "../errors";
import { CONTROL_CHARACTERS } from "../catalog/identifiers";
import { recipientColumns, recipientJoins, type Recipient } from "./recipient";

export type ContributorRecipient = Recipient & {
  download_id: string;
  seq: number;
  occurred_at: string;
  dataset_id: string;
  version: string;
  episode_count: number;
};

/** Who received a contributor's episodes: every disclosure that included at least one, with how many. One query. */
export async function recipientsOfContributor(ctx: Ctx, contributor: string): Promise<ContributorRecipient[]> {
  requireRole(ctx, ["reviewer", "admin"]);
  // PostgreSQL cannot compare a NUL: a contributor with a control character is refused before SQL.
  if (CONTROL_CHARACTERS.test(contributor)) throw new AppError("invalid_parameter", "A contributor must not contain control characters.");
  const sql = sqlOf(ctx.db);
  const rows = await sql<(Omit<ContributorRecipient, "occurred_at"> & { occurred_at: Date })[]>`
    select d.id as download_id, d.seq::float8 as seq, d.occurred_at, ${recipientColumns(sql)},
           d.dataset_id, d.version, count(*)::int as episode_count
    from episodes e
    join disclosure_episodes de on de.version_id = e.version_id and de.episode_id = e.episode_id
    join disclosures d on d.id = de.disclosure_id
    ${recipientJoins(sql)}
    where e.contributor = ${contributor}
    group by d.id, o.id, k.id, u.id
    order by d.seq desc`;
  return rows.map((r) => ({ ...r, occurred_at: r.occurred_at.toISOString() }));
}
