import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { Readable, Writable } from "node:stream";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, sqlOf, type Sql } from "@/lib/db/client";
import { MIGRATIONS_DIR } from "@/lib/db/migrate";
import { DISCLOSURE_LOG_TABLES } from "@/lib/db/schema";
import { createDownload } from "@/lib/downloads/create-download";
import {
  appendNamingFiles,
  buildWorld,
  downloadPlan,
  makeSequentially,
  type World,
} from "@/lib/testing/disclosure-fixtures";
import { operatorOn, uniqueId } from "@/lib/testing/fixtures";
import { migrateKeepingChain } from "./migrate-log";
import { verifyChain, type ChainReport } from "./verify";

// Migration 0026 moves a log that is not partitioned into monthly partitions. A world makes
// entries of every kind (downloads, one with an Idempotency-Key, a Hub GET, a delivery of
// per-licence copies with its files); a database migrated only up to 0025, as every installation
// before 0026 is, is given the world's rows, and then migrated on: the chain is walked before and
// after, what it held must be what it holds, and its tables must be exactly those a fresh
// installation gets, which are 0025's with the partitioning and nothing else changed.

const LAST_BEFORE_PARTITIONS = "0025_fingerprints";

let w: World;
let keyed: { id: string; key: string };
let before: ChainReport;
const older: { name: string; url: string }[] = [];
const server = () => postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });

beforeAll(async () => {
  w = await buildWorld("move");
  await makeSequentially(w, downloadPlan(w));
  const key = uniqueId("idem");
  const [principal, body] = downloadPlan(w)[0]!;
  const { download } = await createDownload(
    { db: w.iso.db, principal, requestId: uniqueId("req") },
    { body, idempotencyKey: key },
  );
  keyed = { id: download.download_id, key };
  const [key1] = w.keys1;
  await appendNamingFiles(w.iso.db, key1, { datasetId: w.dsA, version: "1.0.0" }, { hub: "README.md" });
  await appendNamingFiles(
    w.iso.db,
    key1,
    { datasetId: w.dsB, version: "1.0.0" },
    {
      files: [
        { path: "data/chunk-000/episode_000000.parquet", sha256: "a".repeat(64) },
        { path: "README.md", sha256: "b".repeat(64) },
      ],
    },
  );
  before = await verifyChain(w.iso.operator);
}, 180_000);

afterAll(async () => {
  await w?.iso.drop();
  const admin = server();
  for (const db of older) await admin.unsafe(`drop database if exists ${db.name} with (force)`);
  await admin.end();
});

/** A database migrated up to 0025 only: the migrations as they stood before the log was partitioned. */
async function migratedBeforePartitions(): Promise<{ name: string; url: string }> {
  const folder = mkdtempSync(path.join(os.tmpdir(), "das-migrations-"));
  try {
    cpSync(MIGRATIONS_DIR, folder, { recursive: true });
    const journal = JSON.parse(readFileSync(path.join(folder, "meta/_journal.json"), "utf8")) as {
      entries: { tag: string }[];
    };
    const last = journal.entries.findIndex((e) => e.tag === LAST_BEFORE_PARTITIONS);
    journal.entries = journal.entries.slice(0, last + 1);
    writeFileSync(path.join(folder, "meta/_journal.json"), JSON.stringify(journal));
    const name = `das_before_${uniqueId("p").replace(/\W/g, "_").toLowerCase()}`;
    const admin = server();
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    older.push({ name, url: url.toString() });
    const client = postgres(url.toString(), { max: 1, onnotice: () => {} });
    try {
      await migrate(drizzle(client), { migrationsFolder: folder });
    } finally {
      await client.end();
    }
    return { name, url: url.toString() };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * The world's rows copied into `to`, table by table, in the columns `to` has (a table it does not
 * have is left out: the Idempotency-Keys' own table, whose keys `disclosures` holds there too), as a
 * restore of a dump would, with triggers and foreign keys off; then its sequences moved past them.
 */
async function copyWorldInto(to: string): Promise<void> {
  const target = postgres(to, { max: 1, onnotice: () => {} });
  const source = w.iso.sql;
  try {
    const tables = await target<{ name: string; columns: string[] }[]>`
      select c.relname as name, array_agg(quote_ident(a.attname) order by a.attnum) as columns
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
      where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
      group by c.relname order by c.relname`;
    const writer = await target.reserve();
    try {
      await writer`set session_replication_role = replica`;
      for (const t of tables) {
        const [present] = await source`select to_regclass(${`public.${t.name}`}) is not null as present`;
        if (!(present as { present: boolean }).present) continue;
        const list = t.columns.join(", ");
        const out = await source.unsafe(`copy (select ${list} from public.${t.name}) to stdout`).readable();
        const into = await writer.unsafe(`copy public.${t.name} (${list}) from stdin`).writable();
        await pipeline(out as Readable, into as Writable);
      }
    } finally {
      writer.release();
    }
    const serials = await target<{ sequence: string; table: string; column: string }[]>`
      select pg_get_serial_sequence(quote_ident(c.relname), a.attname) as sequence, c.relname as table, a.attname as column
      from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_attribute a on a.attrelid = c.oid and a.attnum > 0
      where n.nspname = 'public' and c.relkind = 'r'
        and pg_get_serial_sequence(quote_ident(c.relname), a.attname) is not null`;
    for (const s of serials)
      await target.unsafe(
        `select setval('${s.sequence}', max(${s.column})) from public.${s.table} having max(${s.column}) is not null`,
      );
  } finally {
    await target.end();
  }
}

/** A database with the world's log as it stood before migration 0026. */
async function unpartitionedCopy() {
  const db = await migratedBeforePartitions();
  await copyWorldInto(db.url);
  return db;
}

/**
 * The log's five tables as the catalog describes them: columns in order, constraints, indexes,
 * triggers and partition keys, each a line of text as PostgreSQL writes it back.
 */
async function logShape(sql: Sql): Promise<Record<string, string[]>> {
  const shape: Record<string, string[]> = {};
  for (const table of DISCLOSURE_LOG_TABLES) {
    const rows = await sql<{ line: string }[]>`
      select 'column ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
          || coalesce(' collate ' || nullif(co.collname, 'default'), '') || case when a.attnotnull then ' not null' else '' end
          || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') as line, 1 as kind, a.attnum::int as n
        from pg_attribute a left join pg_collation co on co.oid = a.attcollation
        left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where a.attrelid = ${table}::regclass and a.attnum > 0 and not a.attisdropped
      union all
      -- Not the NOT NULL constraints PostgreSQL 18 names (the columns say "not null"): a name is
      -- chosen unique beside the table being replaced, so it differs by a suffix, not in meaning.
      select 'constraint ' || conname || ' ' || pg_get_constraintdef(oid), 2, 0 from pg_constraint
        where conrelid = ${table}::regclass and contype <> 'n'
      union all
      select 'index ' || replace(pg_get_indexdef(i.indexrelid), ' ON ONLY ', ' ON '), 3, 0 from pg_index i
        where i.indrelid = ${table}::regclass and not exists (select from pg_constraint c where c.conindid = i.indexrelid)
      union all
      select 'trigger ' || pg_get_triggerdef(oid), 4, 0 from pg_trigger where tgrelid = ${table}::regclass and not tgisinternal
      union all
      select 'partitioned by ' || pg_get_partkeydef(${table}::regclass), 5, 0 where pg_get_partkeydef(${table}::regclass) is not null
      order by 2, 3, 1`;
    shape[table] = rows.map((r) => r.line);
  }
  return shape;
}

/**
 * What migration 0026 changes in 0025's shape, and nothing more: every table partitioned by
 * occurred_at, which the derived tables gain (last) and every unique key holds; the
 * Idempotency-Key's unique index gone to its own table; 0017's terms check validated; the episodes'
 * key named as the others are.
 */
function partitioned(shape: Record<string, string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [table, lines] of Object.entries(shape)) {
    const keyed = lines
      .filter((l) => !l.startsWith("index CREATE UNIQUE INDEX disclosures_idempotency_key "))
      .map((l) =>
        l
          .replace(/^constraint disclosure_episodes_disclosure_id_episode_id_pk /, "constraint disclosure_episodes_pk ")
          .replace(/^(constraint \w+ PRIMARY KEY \([^)]*)\)/, "$1, occurred_at)")
          .replace(/^(index CREATE UNIQUE INDEX disclosures_seq_key .*\(seq)\)$/, "$1, occurred_at)")
          .replace(/^(constraint disclosures_terms_check .*) NOT VALID$/, "$1"),
      );
    const columns = keyed.filter((l) => l.startsWith("column "));
    const rest = keyed.filter((l) => !l.startsWith("column "));
    if (table !== "disclosures") columns.push("column occurred_at timestamp with time zone not null");
    out[table] = [...columns, ...rest, "partitioned by RANGE (occurred_at)"];
  }
  return out;
}

const onDb = async <T>(url: string, work: (sql: Sql) => Promise<T>): Promise<T> => {
  const db = createDb(url, { max: 2 });
  try {
    return await work(sqlOf(db));
  } finally {
    await db.$client.end({ timeout: 5 });
  }
};
const kindOf = (sql: Sql) =>
  sql<{ kind: string }[]>`select relkind::text as kind from pg_class where oid = 'disclosures'::regclass`.then(
    ([row]) => row!.kind,
  );
const counts = (sql: Sql) =>
  sql.unsafe(`select ${DISCLOSURE_LOG_TABLES.map((t) => `(select count(*) from ${t}) as ${t}`).join(", ")}`);

describe("moving an unpartitioned log into monthly partitions (migration 0026)", () => {
  it("copies into a database of 0025's shape, which the test's world had before it moved", async () => {
    // The plan's downloads, the keyed one, the Hub GET and the copies' delivery, last.
    expect(before).toMatchObject({ intact: true, count: downloadPlan(w).length + 3 });
    const db = await unpartitionedCopy();
    await onDb(db.url, async (sql) => {
      expect(await kindOf(sql)).toBe("r");
      expect(partitioned(await logShape(sql))).toEqual(await logShape(w.iso.sql));
      expect(await counts(sql)).toEqual(await counts(w.iso.sql));
    });
  });

  it("moves every entry, episode, file and summary row, and the chain verifies as it did", async () => {
    const db = await unpartitionedCopy();
    const rows = await onDb(db.url, counts);
    const shape = await onDb(db.url, logShape);

    await migrateKeepingChain(db.url);

    const moved = createDb(db.url, { max: 4 });
    try {
      const sql = sqlOf(moved);
      expect(await kindOf(sql)).toBe("p");
      // A fresh installation's tables exactly: 0025's, partitioned.
      expect(await logShape(sql)).toEqual(partitioned(shape));
      expect(await verifyChain(operatorOn(moved))).toEqual(before);
      expect(await counts(sql)).toEqual(rows);
      // Every derived row is in its entry's month, with its entry's time.
      const [misplaced] = await sql<{ n: number }[]>`
        select (select count(*) from disclosure_episodes e join disclosures d on d.id = e.disclosure_id
                where e.occurred_at <> d.occurred_at)
          + (select count(*) from disclosure_files f join disclosures d on d.id = f.disclosure_id
             where f.occurred_at <> d.occurred_at) as n`;
      expect(Number(misplaced!.n)).toBe(0);
      const [files] = await sql<{ n: number }[]>`select count(*)::int as n from disclosure_files`;
      expect(files!.n).toBe(2);
      // The Idempotency-Key moved to its own table: the same key and body return the same download.
      const [principal, body] = downloadPlan(w)[0]!;
      const again = await createDownload(
        { db: moved, principal, requestId: uniqueId("req") },
        { body, idempotencyKey: keyed.key },
      );
      expect(again).toMatchObject({ replayed: true, download: { download_id: keyed.id } });
      // And the log goes on: a new entry links to the moved head, a Hub GET's reuse finds the moved one.
      const [key1] = w.keys1;
      expect(
        await appendNamingFiles(moved, key1, { datasetId: w.dsA, version: "1.0.0" }, { hub: "README.md" }),
      ).toBeUndefined();
      await createDownload({ db: moved, principal, requestId: uniqueId("req") }, { body });
      expect(await verifyChain(operatorOn(moved))).toMatchObject({ intact: true, count: before.count + 1 });
    } finally {
      await moved.$client.end({ timeout: 5 });
    }
  });

  it("does not move a log whose chain does not verify", async () => {
    const db = await unpartitionedCopy();
    await onDb(db.url, (sql) =>
      sql.begin(async (tx) => {
        await tx`set local session_replication_role = replica`;
        await tx`update disclosures set request_id = 'rewritten' where seq = 3`;
      }),
    );
    await expect(migrateKeepingChain(db.url)).rejects.toThrow(/does not verify \(broken at seq 3/);
    expect(await onDb(db.url, kindOf)).toBe("r");
  });

  it("does not move a log whose delivered files differ from those its entry names", async () => {
    const db = await unpartitionedCopy();
    await onDb(db.url, (sql) =>
      sql.begin(async (tx) => {
        await tx`set local session_replication_role = replica`;
        await tx`update disclosure_files set sha256 = ${"c".repeat(64)} where path = 'README.md'`;
      }),
    );
    await expect(migrateKeepingChain(db.url)).rejects.toThrow(
      `does not verify (broken at seq ${before.count}: the delivered files differ from those recorded)`,
    );
    expect(await onDb(db.url, kindOf)).toBe("r");
  });

  it.each([
    [
      "disclosure_episodes",
      "insert into disclosure_episodes select 'dl_orphan', version_id, episode_id from disclosure_episodes limit 1",
    ],
    ["disclosure_files", "insert into disclosure_files values ('dl_orphan', 'README.md', repeat('d', 64))"],
  ])(
    "moves nothing when the copy would differ from the original (a row of %s without its entry)",
    async (table, orphan) => {
      const db = await unpartitionedCopy();
      // A row no entry holds: the chain still verifies, but the copy (by entry) leaves it out.
      await onDb(db.url, (sql) => sql.unsafe(orphan));
      const failure = await migrateKeepingChain(db.url).then(
        () => null,
        (error: Error & { cause?: Error }) => error.cause?.message ?? error.message,
      );
      expect(failure).toMatch(new RegExp(`the copy of ${table} differs from the original; nothing was moved`));
      expect(await onDb(db.url, kindOf)).toBe("r");
    },
  );
});
