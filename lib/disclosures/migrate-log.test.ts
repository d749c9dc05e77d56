import { afterAll, describe, expect, it } from "vitest";
import type { Sql } from "@/lib/db/client";
import { createDownload } from "@/lib/downloads/create-download";
import { buildWorld, downloadPlan, makeSequentially, type World } from "@/lib/testing/disclosure-fixtures";
import { uniqueId } from "@/lib/testing/fixtures";
import { migrateKeepingChain } from "./migrate-log";
import { verifyChain } from "./verify";

// Migration 0026 moves a log that is not partitioned into monthly partitions. Each world here is
// migrated, given entries (one with an Idempotency-Key), then put back into the shape the log had
// before 0026 (plain tables, the key unique on the entries, 0026 and 0027 not applied), and
// migrated again: the chain is walked before and after, and what it held must be what it holds.

const worlds: World[] = [];
afterAll(async () => {
  for (const w of worlds) await w.iso.drop();
});

/** A world with the plan's downloads (and a keyed one) in the log as it stood before migration 0026. */
async function unpartitionedWorld(label: string) {
  const w = await buildWorld(label);
  worlds.push(w);
  await makeSequentially(w, downloadPlan(w));
  const key = uniqueId("idem");
  const [principal, body] = downloadPlan(w)[0]!;
  const { download } = await createDownload(
    { db: w.iso.db, principal, requestId: uniqueId("req") },
    { body, idempotencyKey: key },
  );
  // The walk as it stands (this verify is written for the partitioned log): the same rows, unpartitioned below.
  const before = await verifyChain(w.iso.operator);
  await w.iso.sql.begin((tx) => unpartition(tx as unknown as Sql));
  return { w, keyed: download.download_id, key, before };
}

/** The four tables as plain tables of their columns before 0026, with their keys then; 0026 and 0027 undone. */
async function unpartition(tx: Sql) {
  for (const t of ["disclosures", "disclosure_episodes", "disclosure_contributors", "disclosure_episode_entries"])
    await tx.unsafe(`alter table ${t} rename to ${t}_p`);
  await tx.unsafe(`
    create table disclosures (like disclosures_p including defaults including constraints);
    insert into disclosures select * from disclosures_p;
    create table disclosure_episodes (disclosure_id text not null, version_id integer not null, episode_id text collate "C" not null);
    insert into disclosure_episodes select disclosure_id, version_id, episode_id from disclosure_episodes_p;
    create table disclosure_contributors (disclosure_id text not null, seq bigint not null, contributor text not null,
      episode_count integer not null, organization_id text, channel text not null);
    insert into disclosure_contributors select disclosure_id, seq, contributor, episode_count, organization_id, channel from disclosure_contributors_p;
    create table disclosure_episode_entries (episode_id text collate "C" not null, seq bigint not null, organization_id text,
      channel text not null);
    insert into disclosure_episode_entries select episode_id, seq, organization_id, channel from disclosure_episode_entries_p;
    drop table disclosures_p, disclosure_episodes_p, disclosure_contributors_p, disclosure_episode_entries_p;
    alter table disclosures add primary key (id);
    create unique index disclosures_seq_key on disclosures (seq);
    create unique index disclosures_idempotency_key on disclosures (idempotency_scope, idempotency_key);
    alter table disclosure_episodes add primary key (disclosure_id, episode_id);
    alter table disclosure_contributors add primary key (disclosure_id, contributor);
    alter table disclosure_episode_entries add primary key (episode_id, seq) include (organization_id, channel);
    drop table disclosure_idempotency_keys, disclosure_archives, disclosure_months;
    drop function das_create_disclosure_months(date, date);
    alter table disclosure_checkpoints drop constraint disclosure_checkpoints_mode_check;
    alter table disclosure_checkpoints add constraint disclosure_checkpoints_mode_check check (mode in ('full', 'incremental'));
    delete from drizzle.__drizzle_migrations where created_at >= 1795382800000;`);
}

const kindOf = async (w: World) =>
  (
    await w.iso.sql<{ kind: string }[]>`select relkind::text as kind from pg_class where oid = 'disclosures'::regclass`
  )[0]!.kind;
const counts = (w: World) =>
  w.iso.sql.unsafe(`select (select count(*) from disclosures) as entries, (select count(*) from disclosure_episodes) as episodes,
    (select count(*) from disclosure_contributors) as contributors, (select count(*) from disclosure_episode_entries) as episode_entries`);

describe("moving an unpartitioned log into monthly partitions (migration 0026)", () => {
  it("moves every entry, episode and summary row, and the chain verifies as it did", async () => {
    const { w, keyed, key, before } = await unpartitionedWorld("move");
    expect(await kindOf(w)).toBe("r");
    const rows = await counts(w);
    expect(before).toMatchObject({ intact: true, count: 7 });

    await migrateKeepingChain(w.iso.url);

    expect(await kindOf(w)).toBe("p");
    expect(await verifyChain(w.iso.operator)).toEqual(before);
    expect(await counts(w)).toEqual(rows);
    // Every derived row is in its entry's month, with its entry's time.
    const [misplaced] = await w.iso.sql<{ n: number }[]>`
      select count(*)::int as n from disclosure_episodes e join disclosures d on d.id = e.disclosure_id where e.occurred_at <> d.occurred_at`;
    expect(misplaced!.n).toBe(0);
    // The Idempotency-Key moved to its own table: the same key and body return the same download.
    const [principal, body] = downloadPlan(w)[0]!;
    const again = await createDownload(
      { db: w.iso.db, principal, requestId: uniqueId("req") },
      { body, idempotencyKey: key },
    );
    expect(again).toMatchObject({ replayed: true, download: { download_id: keyed } });
    // And the log goes on: a new entry links to the moved head.
    await makeSequentially(w, downloadPlan(w).slice(0, 1));
    expect(await verifyChain(w.iso.operator)).toMatchObject({ intact: true, count: 8 });
  });

  it("does not move a log whose chain does not verify", async () => {
    const { w } = await unpartitionedWorld("broken");
    await w.iso.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`update disclosures set request_id = 'rewritten' where seq = 3`;
    });
    await expect(migrateKeepingChain(w.iso.url)).rejects.toThrow(/does not verify \(broken at seq 3/);
    expect(await kindOf(w)).toBe("r");
  });

  it("moves nothing when the copy would differ from the original (a row without its entry)", async () => {
    const { w } = await unpartitionedWorld("orphan");
    // An episode row no entry holds: the chain still verifies, but the copy (by entry) leaves it out.
    await w.iso.sql`insert into disclosure_episodes (disclosure_id, version_id, episode_id)
      select 'dl_orphan', version_id, episode_id from disclosure_episodes limit 1`;
    const failure = await migrateKeepingChain(w.iso.url).then(
      () => null,
      (error: Error & { cause?: Error }) => error.cause?.message ?? error.message,
    );
    expect(failure).toMatch(/the copy of disclosure_episodes differs from the original; nothing was moved/);
    expect(await kindOf(w)).toBe("r");
  });
});
