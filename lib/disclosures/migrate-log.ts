import postgres from "postgres";
import type { Ctx } from "../context";
import { createDb } from "../db/client";
import { migrateDatabase } from "../db/migrate";
import { AppError } from "../errors";
import { verifyChainDetailed, type ChainReport } from "./verify";

/**
 * `migrateDatabase`, walking the whole chain before and after when the migrations are about to move
 * an unpartitioned log into monthly partitions (migration 0026): a log that does not verify is not
 * moved (what the move did could not be told from what was there before), and after the move the
 * walk must end at the same seq with the same head hash. The migration itself compares every row
 * of the copy with the original before it drops anything; this is the chain's own word on it.
 */
export async function migrateKeepingChain(url: string, options: { serviceRole?: string } = {}): Promise<void> {
  if (!(await unpartitionedLogWithEntries(url))) return migrateDatabase(url, options);
  const before = await walk(url, { unpartitioned: true });
  if (!before.intact)
    throw new AppError(
      "unavailable",
      `The disclosure log does not verify (broken at seq ${before.firstBadSeq}: ${before.reason}): it is not moved into monthly partitions until it does.`,
    );
  await migrateDatabase(url, options);
  const after = await walk(url);
  if (!after.intact || after.count !== before.count || after.headHash !== before.headHash)
    throw new AppError(
      "unavailable",
      `The disclosure log does not verify as it did after the move into monthly partitions (${before.count} entries, head ${before.headHash} before): investigate before serving.`,
    );
}

async function unpartitionedLogWithEntries(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [table] = await sql<
      { kind: string }[]
    >`select relkind as kind from pg_class where oid = to_regclass('public.disclosures')`;
    if (table?.kind !== "r") return false;
    const [any] = await sql`select 1 from disclosures limit 1`;
    return Boolean(any);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * A full walk of the log on one connection. Before the move the walk (written for the partitioned
 * log) reads the old tables through temporary objects of the new shape on that connection, which
 * come first on its search path: the episodes and files with their entry's occurred_at, and no
 * month closed.
 */
async function walk(url: string, options: { unpartitioned?: boolean } = {}): Promise<ChainReport> {
  const db = createDb(url, { max: 1 });
  const ctx: Ctx = {
    db,
    requestId: "migrate",
    principal: { kind: "operator", name: "migration", organizationId: null },
  };
  try {
    if (options.unpartitioned)
      await db.$client.unsafe(`
        create temp view disclosure_episodes as
          select e.disclosure_id, e.version_id, e.episode_id, d.occurred_at
          from public.disclosure_episodes e join public.disclosures d on d.id = e.disclosure_id;
        create temp view disclosure_files as
          select f.disclosure_id, f.path, f.sha256, d.occurred_at
          from public.disclosure_files f join public.disclosures d on d.id = f.disclosure_id;
        create temp table disclosure_months (month date, first_seq bigint, last_seq bigint, prev_hash text, last_hash text);
        create temp table disclosure_archives (id bigint, month date, action text)`);
    return (await verifyChainDetailed(ctx, { mode: "full", writeCheckpoint: false })).report;
  } finally {
    await db.$client.end({ timeout: 5 });
  }
}
