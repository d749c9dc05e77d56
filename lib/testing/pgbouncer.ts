import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort } from "../dev/embedded-postgres";
import { serverUser, sleep } from "./postgres-cluster";

/** Debian's PgBouncer (apt-get install pgbouncer). */
export const PGBOUNCER_BIN = "/usr/sbin/pgbouncer";

export const hasPgBouncer = () => existsSync(PGBOUNCER_BIN);

export type PgBouncer = {
  port: number;
  /** `serverUrl` (user, password, database) through the pooler. */
  urlFor(serverUrl: string): string;
  /** Starts it again after `stop()`, on the same port. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and removes its files. */
  remove(): Promise<void>;
  log(): string;
};

/**
 * PgBouncer in transaction mode in front of the PostgreSQL server `serverUrl` names, on a port of
 * its own: every database of that server, `poolSize` server connections per database and user,
 * and `connectQuery` (the service's limits, see lib/db/client.ts) run on each server session it
 * opens. `users` are the logins it accepts (name and password), checked with SCRAM. It runs as the
 * `postgres` user when this process is root (PgBouncer refuses root).
 */
export async function startPgBouncer(
  serverUrl: string,
  options: {
    users: { name: string; password: string }[];
    poolSize?: number;
    connectQuery?: string;
    /** Seconds a client waits for a server session before PgBouncer gives up on it (its default: 120). */
    queryWaitTimeoutS?: number;
  },
): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const dir = mkdtempSync(path.join(os.tmpdir(), "das-pgbouncer-"));
  const user = serverUser();
  const port = await freePort();
  const quote = (text: string) => `"${text.replace(/"/g, '""')}"`;
  const file = (name: string, text: string) => {
    writeFileSync(path.join(dir, name), text, { mode: 0o600 });
    if (user) chownSync(path.join(dir, name), user.uid, user.gid);
  };
  if (user) chownSync(dir, user.uid, user.gid);
  file("userlist.txt", `${options.users.map((u) => `${quote(u.name)} ${quote(u.password)}`).join("\n")}\n`);
  const connectQuery = options.connectQuery ? ` connect_query='${options.connectQuery.replace(/'/g, "''")}'` : "";
  file(
    "pgbouncer.ini",
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || "5432"}${connectQuery}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = scram-sha-256",
      `auth_file = ${path.join(dir, "userlist.txt")}`,
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize ?? 4}`,
      "max_client_conn = 1000",
      // Only what a service in transaction mode must not send anyway (lib/db/client.ts) would be refused.
      "ignore_startup_parameters = extra_float_digits",
      "server_login_retry = 1",
      `query_wait_timeout = ${options.queryWaitTimeoutS ?? 120}`,
      "log_connections = 0",
      "log_disconnections = 0",
      "",
    ].join("\n"),
  );
  let child: ChildProcess | null = null;
  let output = "";
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const started = spawn(PGBOUNCER_BIN, [path.join(dir, "pgbouncer.ini")], {
      ...(user ?? {}),
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = started;
    started.stdout!.on("data", (c: Buffer) => (output += c));
    started.stderr!.on("data", (c: Buffer) => (output += c));
    const deadline = Date.now() + 15_000;
    while (!(await listening(port))) {
      if (started.exitCode !== null) throw new Error(`pgbouncer exited with ${started.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port}:\n${output}`);
      await sleep(100);
    }
  };
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      // SIGINT: PgBouncer's immediate shutdown (SIGTERM would wait for every client to leave).
      running.kill("SIGINT");
      setTimeout(() => running.kill("SIGKILL"), 10_000).unref();
    });
  };
  await start();
  return {
    port,
    urlFor(url: string) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    start,
    stop,
    async remove() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => output,
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
