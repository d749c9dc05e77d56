import postgres from "postgres";
import type { Sql } from "./client";
import { JOB_QUEUE_SCHEMA } from "./job-queue";

/*
 * Two roles: the owner, which creates and alters the tables (migrations) and alone may detach a
 * month of the disclosure log (archiving: detaching fires no trigger), and the service's login role,
 * which owns nothing and may only read and write rows. Whoever holds the service's password can
 * then not turn the log's triggers off, drop it, or detach a month of it.
 */

/**
 * Tables whose rows are never changed or removed (a trigger refuses it): the service role may read
 * and insert them, nothing else, so that the refusal does not rest on the triggers alone.
 */
export const INSERT_ONLY_TABLES = [
  "disclosures",
  "disclosure_episodes",
  "disclosure_contributors",
  "disclosure_episode_entries",
  "disclosure_files",
  "disclosure_idempotency_keys",
  "disclosure_checkpoints",
  "disclosure_digests",
  "disclosure_months",
  "disclosure_archives",
  "admin_audit",
  "licence_copies",
] as const;

/**
 * The advisory lock under which das_create_disclosure_months (migration 0026) makes months. A GRANT
 * and an ATTACH PARTITION write the same catalog rows: run at once, one fails with XX000 "tuple
 * concurrently updated". Every process that starts on a database grants (after migrating) while a
 * running service's schedule may be making months, so the grants take this lock too.
 */
const MONTHS_LOCK = 7_203_117;

/**
 * Gives the service's login role `role` the rows of every table of the service and of pg-boss, as
 * the migrations left them: what it reads and writes, no ownership, no DDL; the log's tables
 * insert-only. Run by `migrateDatabase` as the owner after every migration, so a table a migration
 * adds is granted at once. Nothing when `role` is the one migrating (one role for both, as before).
 */
export async function grantServiceRole(owner: Sql, role: string): Promise<void> {
  const [me] = await owner<{ name: string }[]>`select current_user as name`;
  if (me!.name === role) return;
  const [exists] = await owner`select 1 from pg_roles where rolname = ${role}`;
  if (!exists)
    throw new Error(`The service's role ${role} does not exist: create it (a login role that owns nothing).`);
  const [owns] = await owner<{ n: number }[]>`
    select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in ('public', ${JOB_QUEUE_SCHEMA}) and pg_get_userbyid(c.relowner) = ${role}`;
  if (owns!.n > 0)
    throw new Error(
      `The service's role ${role} owns ${owns!.n} tables or sequences: it must own none (reassign them to the owner).`,
    );
  const r = owner(role);
  await owner.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MONTHS_LOCK})`;
    for (const schema of ["public", JOB_QUEUE_SCHEMA]) {
      const s = tx(schema);
      await tx`grant usage on schema ${s} to ${r}`;
      await tx`grant select, insert, update, delete on all tables in schema ${s} to ${r}`;
      await tx`grant usage, select, update on all sequences in schema ${s} to ${r}`;
      await tx`revoke create on schema ${s} from ${r}`;
    }
    for (const table of INSERT_ONLY_TABLES) await tx`revoke update, delete, truncate on ${tx(table)} from ${r}`;
    // The months ahead, made by the service's schedule as the owner (migration 0026).
    await tx`grant execute on function das_create_disclosure_months(date, date) to ${r}`;
  });
}

/**
 * The advisory lock under which a login role is created or given its password. Every process that
 * starts on an installation (the service, each das-admin) sets the service role's password; two
 * ALTER ROLEs of one role at once fail with XX000 "tuple concurrently updated", so they take turns.
 * An advisory lock is the database's, and every process of one installation connects to the same.
 */
const ROLE_LOCK = 7_203_118;

/** Creates the login role `name` with `password`, or gives the existing one that password. */
export async function ensureLoginRole(superuserUrl: string, name: string, password: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`${name} is not a role name of ours.`);
  const sql = postgres(superuserUrl, { max: 1, onnotice: () => {} });
  // CREATE and ALTER ROLE take no parameters: the name is checked above, the password quoted here.
  const quoted = `'${password.replace(/'/g, "''")}'`;
  try {
    await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${ROLE_LOCK})`;
      const [exists] = await tx`select 1 from pg_roles where rolname = ${name}`;
      await tx.unsafe(`${exists ? "alter" : "create"} role ${name} login password ${quoted}`);
    });
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** `url` as the login `user` with `password`. */
export function asUser(url: string, user: string, password: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** The role a connection URL logs in as. */
export const userOf = (url: string) => decodeURIComponent(new URL(url).username);
