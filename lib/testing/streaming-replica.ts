import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { freePort } from "../dev/embedded-postgres";
import {
  pgBinaries,
  PostgresServer,
  removeDataDir,
  runTool,
  serverDataDir,
  serverUser,
  sleep,
  withPort,
  type PgBinaries,
} from "./postgres-cluster";

/**
 * A streaming replica of a running PostgreSQL server (physical replication, hot standby), on a
 * port of its own: what DATABASE_REPLICA_URL names in production. `url` is the primary's URL with
 * the replica's port, so the same role, password and database.
 */
export type StreamingReplica = {
  url: string;
  server: PostgresServer;
  /** Waits until the replica has replayed everything the primary had written when this was called. */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** Stops replaying (the replica keeps receiving): its answers stay as they are until `resumeReplay`. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Stops the replica, drops its replication slot on the primary and removes its data. */
  remove(): Promise<void>;
};

/**
 * Makes a streaming replica of the server `primaryUrl` names, as `pg_basebackup -R` makes one: a
 * base backup under a replication slot of its own, a standby.signal and the primary's address, then
 * the server started in hot standby. The slot keeps the WAL the replica still needs while it is
 * stopped; `remove()` drops it.
 *
 * pg_basebackup of the primary's major version does the backup when this machine has it
 * (Debian's for its PostgreSQL 15). embedded-postgres ships only `postgres`, `initdb` and `pg_ctl`,
 * so for its PostgreSQL 18 the backup is PostgreSQL's low-level API instead, on the primary's data
 * directory (the tests' embedded server runs on this machine): `pg_backup_start`, a copy of the
 * directory, `pg_backup_stop` and its backup label. Either way the standby is PostgreSQL's own.
 *
 * `primaryUrl` must be a superuser's (pg_backup_start, replication slots, and replication in
 * pg_hba.conf for 127.0.0.1, which initdb's and Debian's defaults allow).
 */
export async function startStreamingReplica(primaryUrl: string): Promise<StreamingReplica> {
  const primary = postgres(primaryUrl, { max: 1, onnotice: () => {} });
  const slot = `das_replica_${Date.now()}_${randomBytes(3).toString("hex")}`;
  let dataDir: string | null = null;
  try {
    const [facts] = await primary<PrimaryFacts[]>`
      select current_setting('server_version_num')::int / 10000 as major, current_setting('data_directory') as data_directory,
        current_setting('max_connections') as max_connections, current_setting('max_worker_processes') as max_worker_processes,
        current_setting('max_wal_senders') as max_wal_senders, current_setting('max_prepared_transactions') as max_prepared_transactions,
        current_setting('max_locks_per_transaction') as max_locks_per_transaction`;
    const binaries = await pgBinaries(facts!.major);
    if (!binaries) throw new Error(`No PostgreSQL ${facts!.major} binaries on this machine to run a replica with.`);
    dataDir = serverDataDir("das-replica-");
    await primary`select pg_create_physical_replication_slot(${slot}, true)`;
    const basebackup = await pgBinaries(facts!.major, "pg_basebackup");
    if (basebackup) await baseBackupWithTool(basebackup, primaryUrl, dataDir, slot);
    else await baseBackupWithLowLevelApi(primary, facts!.data_directory, dataDir, primaryUrl, slot);
    completeStandbyConfig(dataDir);
    const port = await freePort();
    const url = withPort(primaryUrl, port);
    // A hot standby needs at least the primary's limits; the primary's command line set them, not the copied files.
    const server = new PostgresServer(binaries, dataDir, port, {
      hot_standby: "on",
      hot_standby_feedback: "on",
      max_connections: facts!.max_connections,
      max_worker_processes: facts!.max_worker_processes,
      max_wal_senders: facts!.max_wal_senders,
      max_prepared_transactions: facts!.max_prepared_transactions,
      max_locks_per_transaction: facts!.max_locks_per_transaction,
      shared_buffers: "64MB",
      logging_collector: "off",
      ssl: "off",
    });
    await server.start(url);
    return replicaHandle(primaryUrl, url, server, slot, dataDir);
  } catch (error) {
    await primary`select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = ${slot}`.catch(
      () => undefined,
    );
    if (dataDir) removeDataDir(dataDir);
    throw error;
  } finally {
    await primary.end({ timeout: 1 });
  }
}

type PrimaryFacts = {
  major: number;
  data_directory: string;
  max_connections: string;
  max_worker_processes: string;
  max_wal_senders: string;
  max_prepared_transactions: string;
  max_locks_per_transaction: string;
};

function replicaHandle(
  primaryUrl: string,
  url: string,
  server: PostgresServer,
  slot: string,
  dataDir: string,
): StreamingReplica {
  const onReplica = async <T>(work: (sql: postgres.Sql) => Promise<T>): Promise<T> => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      return await work(sql);
    } finally {
      await sql.end({ timeout: 1 });
    }
  };
  return {
    url,
    server,
    async caughtUp(timeoutMs = 30_000) {
      const primary = postgres(primaryUrl, { max: 1, onnotice: () => {} });
      const [{ lsn }] = (await primary`select pg_current_wal_lsn()::text as lsn`) as unknown as [{ lsn: string }];
      await primary.end({ timeout: 1 });
      await onReplica(async (sql) => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const [row] = await sql<{ done: boolean }[]>`select pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn as done`;
          if (row!.done) return;
          if (Date.now() > deadline) throw new Error(`the replica did not replay to ${lsn} within ${timeoutMs} ms`);
          await sleep(50);
        }
      });
    },
    pauseReplay: () => onReplica(async (sql) => void (await sql`select pg_wal_replay_pause()`)),
    resumeReplay: () => onReplica(async (sql) => void (await sql`select pg_wal_replay_resume()`)),
    async remove() {
      await server.stop("fast");
      const primary = postgres(primaryUrl, { max: 1, onnotice: () => {} });
      try {
        await primary`select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = ${slot}`;
      } finally {
        await primary.end({ timeout: 1 });
      }
      removeDataDir(dataDir);
    },
  };
}

/** pg_basebackup -R: the backup, WAL streamed beside it, through the slot; it writes standby.signal and the primary's address. */
async function baseBackupWithTool(binaries: PgBinaries, primaryUrl: string, dataDir: string, slot: string) {
  const u = new URL(primaryUrl);
  await runTool(
    binaries.path("pg_basebackup"),
    [
      "-h",
      u.hostname,
      "-p",
      u.port || "5432",
      "-U",
      decodeURIComponent(u.username),
      "-D",
      dataDir,
      "-R",
      "-X",
      "stream",
      "-S",
      slot,
      "-c",
      "fast",
      "--no-sync",
    ],
    { PGPASSWORD: decodeURIComponent(u.password) },
  );
}

/**
 * PostgreSQL's low-level base backup ("Making a Base Backup Using the Low Level API" in its
 * manual): between pg_backup_start and pg_backup_stop, in one session, the data directory is
 * copied as it is (files changing or vanishing meanwhile are what the WAL from the start point
 * repairs), without the WAL, the server's own runtime files and the slots; the backup label
 * pg_backup_stop returns goes into the copy. Then what `-R` would write.
 */
async function baseBackupWithLowLevelApi(
  primary: postgres.Sql,
  source: string,
  dataDir: string,
  primaryUrl: string,
  slot: string,
) {
  await primary`select pg_backup_start('das test replica', true)`;
  let label: { labelfile: string; spcmapfile: string | null };
  try {
    copyDataDirectory(source, dataDir);
  } finally {
    [label] = (await primary`select labelfile, spcmapfile from pg_backup_stop(false)`) as unknown as [
      { labelfile: string; spcmapfile: string | null },
    ];
  }
  writeFileSync(path.join(dataDir, "backup_label"), label.labelfile);
  if (label.spcmapfile) writeFileSync(path.join(dataDir, "tablespace_map"), label.spcmapfile);
  const u = new URL(primaryUrl);
  const conninfo = `host=${u.hostname} port=${u.port || "5432"} user=${decodeURIComponent(u.username)} password=${decodeURIComponent(u.password)} application_name=das_replica`;
  writeFileSync(path.join(dataDir, "standby.signal"), "");
  appendFileSync(
    path.join(dataDir, "postgresql.auto.conf"),
    `\nprimary_conninfo = '${conninfo.replace(/'/g, "''")}'\nprimary_slot_name = '${slot}'\n`,
  );
  chownTree(dataDir);
}

/** What a base backup leaves out (the manual's list): the WAL, the slots, and what the server makes at runtime. */
const EMPTY_IN_BACKUP = new Set([
  "pg_wal",
  "pg_replslot",
  "pg_stat_tmp",
  "pg_dynshmem",
  "pg_notify",
  "pg_serial",
  "pg_snapshots",
  "pg_subtrans",
]);
const LEFT_OUT = new Set(["postmaster.pid", "postmaster.opts", "backup_label", "tablespace_map", "backup_label.old"]);

function copyDataDirectory(from: string, to: string, top = true): void {
  for (const name of readdirSync(from)) {
    if (top && LEFT_OUT.has(name)) continue;
    const source = path.join(from, name);
    const target = path.join(to, name);
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(source);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue; // removed since it was listed
      throw error;
    }
    if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else if (stat.isDirectory()) {
      mkdirSync(target, { mode: 0o700 });
      if (!(top && EMPTY_IN_BACKUP.has(name)) && !name.startsWith("pgsql_tmp"))
        copyDataDirectory(source, target, false);
    } else {
      try {
        copyFileSync(source, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  }
}

function chownTree(dir: string): void {
  const user = serverUser();
  if (!user) return;
  chownSync(dir, user.uid, user.gid);
  for (const name of readdirSync(dir)) {
    const entry = path.join(dir, name);
    const stat = lstatSync(entry);
    if (stat.isDirectory()) chownTree(entry);
    else if (!stat.isSymbolicLink()) chownSync(entry, user.uid, user.gid);
  }
}

/**
 * A data directory backed up from Debian's layout holds neither postgresql.conf nor pg_hba.conf
 * (they live in /etc/postgresql): the replica gets an empty one and password logins on 127.0.0.1.
 */
function completeStandbyConfig(dataDir: string): void {
  const user = serverUser();
  const write = (name: string, text: string) => {
    const file = path.join(dataDir, name);
    if (existsSync(file)) return;
    writeFileSync(file, text, { mode: 0o600 });
    if (user) chownSync(file, user.uid, user.gid);
  };
  write("postgresql.conf", "");
  write("pg_hba.conf", "host all all 127.0.0.1/32 scram-sha-256\n");
  write("pg_ident.conf", "");
}
