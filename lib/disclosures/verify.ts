import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { requireReviewer } from "../auth/authorize";
import { entryHash, entryOfRow, GENESIS_HASH, type DisclosureRow } from "./chain";

export type ChainReport =
  | { intact: true; count: number; headHash: string }
  | { intact: false; count: number; firstBadSeq: number; reason: string };

type Row = DisclosureRow & {
  seq: string;
  hash: string;
  actual_episode_count: number;
  actual_episodes_sha256: string;
  version_consistent: boolean;
};

const BATCH = 1000;

/**
 * Walks the whole chain in `seq` order: every seq follows the one before, links to its hash, and
 * hashes to what it says; the resolved episodes still digest to what the entry recorded (the
 * digest is recomputed by the database, so memory stays flat however long the log is) and point
 * at the entry's dataset version.
 */
export async function verifyChain(ctx: Ctx): Promise<ChainReport> {
  requireReviewer(ctx);
  return walkChain(sqlOf(ctx.db));
}

async function walkChain(sql: Sql): Promise<ChainReport> {
  let previous = { seq: 0, hash: GENESIS_HASH };
  for (;;) {
    const rows = await sql<Row[]>`
      select d.*,
        (select count(*)::int from disclosure_episodes de where de.disclosure_id = d.id) as actual_episode_count,
        encode(sha256(convert_to(coalesce(
          (select string_agg(de.episode_id, E'\\n' order by de.episode_id) from disclosure_episodes de where de.disclosure_id = d.id),
          ''), 'UTF8')), 'hex') as actual_episodes_sha256,
        exists (select 1 from dataset_versions v where v.id = d.version_id and v.dataset_id = d.dataset_id and v.version = d.version)
          and not exists (select 1 from disclosure_episodes de where de.disclosure_id = d.id and de.version_id <> d.version_id) as version_consistent
      from disclosures d where d.seq > ${previous.seq} order by d.seq limit ${BATCH}`;
    for (const row of rows) {
      const seq = Number(row.seq);
      const fail = (reason: string, at = seq): ChainReport => ({ intact: false, count: previous.seq, firstBadSeq: at, reason });
      if (seq !== previous.seq + 1) return fail(`seq ${previous.seq + 1} is missing`, previous.seq + 1);
      if (row.prev_hash !== previous.hash) return fail("prev_hash does not match the previous entry's hash");
      if (row.actual_episode_count !== row.episode_count || row.actual_episodes_sha256 !== row.episodes_sha256) {
        return fail("the resolved episodes differ from those recorded");
      }
      const recomputed = entryHash(entryOfRow(row));
      if (recomputed !== row.hash) return fail("the entry does not hash to its recorded hash (altered)");
      // version_id is not in the hash, but the contributor query and replays rely on it: it must
      // be the hashed dataset_id@version, for the entry and for each of its resolved episodes.
      if (!row.version_consistent) return fail("the entry's or its resolved episodes' version_id is not its dataset version");
      previous = { seq, hash: row.hash };
    }
    if (rows.length < BATCH) return { intact: true, count: previous.seq, headHash: previous.hash };
  }
}
