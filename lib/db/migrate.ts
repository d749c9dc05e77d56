import path from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { setUpJobQueue } from "./job-queue";
import { grantServiceRole } from "./roles";

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../drizzle");

// Any constant works; it only has to be the same for every process that migrates this database.
const MIGRATION_LOCK = 7_203_114;

/**
 * Applies pending migrations, then creates or migrates the job queue's schema (pg-boss's own) and
 * queues; an advisory lock keeps two instances starting at once from racing. `url` is the owner's
 * (it creates what the migrations create, and owns it); with `serviceRole`, the service's login
 * role is then granted the rows of every table and nothing more (lib/db/roles.ts). The lock is a
 * session's, so `url` must reach the server directly, never through a transaction-mode pooler.
 */
export async function migrateDatabase(url: string, options: { serviceRole?: string } = {}): Promise<void> {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_DIR });
    await setUpJobQueue(url);
    if (options.serviceRole) await grantServiceRole(client, options.serviceRole);
  } finally {
    await client.end();
  }
}
