import path from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { setUpJobQueue } from "./job-queue";

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../drizzle");

// Any constant works; it only has to be the same for every process that migrates this database.
const MIGRATION_LOCK = 7_203_114;

/**
 * Applies pending migrations, then creates or migrates the job queue's schema (pg-boss's own) and
 * queues; an advisory lock keeps two instances starting at once from racing.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_DIR });
    await setUpJobQueue(url);
  } finally {
    await client.end();
  }
}
