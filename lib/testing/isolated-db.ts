import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { createDb, sqlOf, type Db, type RootDb, type Sql } from "../db/client";
import { migrateDatabase } from "../db/migrate";
import { DISCLOSURE_LOG_TABLES } from "../db/schema";
import type { Ctx } from "../context";
import { operatorOn } from "./fixtures";

/**
 * A database of its own on the run's server, migrated like the real one. The disclosure chain is
 * shared by every test file in the run's database, so anything that breaks a chain on purpose (or
 * needs to know the whole chain) happens in one of these, which is dropped afterwards.
 */
export type IsolatedDb = {
  name: string;
  url: string;
  /** A pool on the database, as the app would hold. */
  db: RootDb;
  sql: Sql;
  /** An operator's context on this database, for the admin verbs. */
  operator: Ctx;
  /** Another pool on the same database, as a second app instance would hold; closed by drop(). */
  anotherPool(max?: number): RootDb;
  drop(): Promise<void>;
};

export async function createIsolatedDb(label = "iso"): Promise<IsolatedDb> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error("DATABASE_URL is not set: run under the test setup.");
  const name = `das_${label}_${Date.now()}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await migrateDatabase(url.toString());
  const pools: RootDb[] = [];
  const pool = (max = 10) => {
    const created = createDb(url.toString(), { max });
    pools.push(created);
    return created;
  };
  const db = pool();
  return {
    name,
    url: url.toString(),
    db,
    sql: sqlOf(db),
    operator: operatorOn(db),
    anotherPool: pool,
    drop: async () => {
      await Promise.all(pools.map((p) => p.$client.end({ timeout: 5 })));
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Thrown inside a transaction to roll it back whatever happened in it. */
export class Rollback extends Error {
  constructor(readonly value: unknown) {
    super("rollback");
  }
}

/**
 * Removes the entries from `seq` on, with their episodes and summaries, as a superuser rewriting
 * the log's tail would: inside `withTriggersDisabled`.
 */
export async function removeEntriesFrom(tx: Sql, seq: number): Promise<void> {
  await tx`delete from disclosure_episodes where disclosure_id in (select id from disclosures where seq >= ${seq})`;
  await tx`delete from disclosure_contributors where seq >= ${seq}`;
  await tx`delete from disclosure_episode_entries where seq >= ${seq}`;
  await tx`delete from disclosures where seq >= ${seq}`;
}

/**
 * Runs `fn` in a transaction that is always rolled back, with the append-only triggers of the
 * disclosure log and its summaries disabled in it (as a superuser could): a tamper that leaves
 * nothing behind.
 */
export async function withTriggersDisabled<T>(db: Db, fn: (tx: Sql, operator: Ctx) => Promise<T>): Promise<T> {
  try {
    await db.transaction(async (transaction) => {
      const tx = sqlOf(transaction as unknown as Db);
      for (const table of DISCLOSURE_LOG_TABLES)
        await tx`alter table ${tx(table)} disable trigger ${tx(`${table}_append_only`)}`;
      throw new Rollback(await fn(tx, operatorOn(transaction as unknown as Db)));
    });
  } catch (error) {
    if (error instanceof Rollback) return error.value as T;
    throw error;
  }
  throw new Error("unreachable: the transaction always rolls back");
}
