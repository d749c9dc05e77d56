import { env } from "../env";
import { log } from "../log";
import type { RootDb } from "./client";

/**
 * What the service checks once at start about its connection, each a warning in the log rather
 * than a refusal to serve: the limits a pooler must set, and a role that owns the tables.
 */
export async function checkServiceConnection(db: RootDb): Promise<void> {
  await checkPooledLimits(db);
  const [row] = await db.$client<{ n: number }[]>`
    select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and c.relowner = (select oid from pg_roles where rolname = current_user)`;
  if (row!.n > 0)
    log.warn(
      "the service's database role owns the tables: whoever holds its password could detach or drop the disclosure log; migrate as an owner (DATABASE_OWNER_URL) and serve as a role that owns nothing",
      { tables: row!.n },
    );
}

/**
 * Through a transaction-mode pooler the service cannot set its limits per connection: the pooler's
 * `connect_query` sets them on each server session it opens. Said once at start when what a server
 * session has is not DB_STATEMENT_TIMEOUT_S, since without them a silent client could hold the
 * disclosure chain's lock until TCP gives up.
 */
async function checkPooledLimits(db: RootDb): Promise<void> {
  const e = env();
  if (e.DB_POOL_MODE !== "transaction") return;
  const wanted = `${e.DB_STATEMENT_TIMEOUT_S}s`;
  const [row] = await db.$client<{ statement: string; lock: string; idle: string }[]>`
    select current_setting('statement_timeout') as statement, current_setting('lock_timeout') as lock,
      current_setting('idle_in_transaction_session_timeout') as idle`;
  const found = [row!.statement, row!.lock, row!.idle];
  if (found.some((value) => value !== wanted))
    log.warn("database limits through the pooler are not DB_STATEMENT_TIMEOUT_S: set them in its connect_query", {
      wanted,
      statement_timeout: row!.statement,
      lock_timeout: row!.lock,
      idle_in_transaction_session_timeout: row!.idle,
    });
}
