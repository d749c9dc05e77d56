import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startEmbeddedPostgres } from "./embedded-postgres";
import { migrateDatabase } from "../db/migrate";
import { startLocalStore } from "./local-store";

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export type Runtime = {
  /** Variables to hand to the app process: whatever the environment lacked, filled by the embedded default. */
  env: Record<string, string>;
  embedded: { database: boolean; store: boolean };
  dataDir: string;
  stop(): Promise<void>;
};

export function dataDirectory(): string {
  return path.resolve(PROJECT_ROOT, process.env.DAS_DATA_DIR ?? ".data");
}

/** The installation's secret for cursors and sessions, created once under the data directory. */
export function installationSecret(dataDir: string): string {
  const file = path.join(dataDir, "app-secret");
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" });
  }
  return readFileSync(file, "utf8").trim();
}

/**
 * Fills in what the environment does not configure: with no DATABASE_URL, a real PostgreSQL from
 * node_modules with its data under the data directory, migrated; with no S3_BUCKET, a local
 * S3-compatible store (files under the data directory, served by this process); with no
 * APP_SECRET, the installation's own. Configured values are left alone (production).
 */
export async function startEmbeddedDefault(options: { log?: (line: string) => void } = {}): Promise<Runtime> {
  const dataDir = dataDirectory();
  const env: Record<string, string> = {};
  const stops: (() => Promise<void>)[] = [];
  env.APP_SECRET = process.env.APP_SECRET || installationSecret(dataDir);
  let embeddedDatabase = false;
  if (process.env.DATABASE_URL) {
    env.DATABASE_URL = process.env.DATABASE_URL;
  } else {
    const pg = await startEmbeddedPostgres(dataDir, options.log);
    stops.push(pg.stop);
    await migrateDatabase(pg.url);
    env.DATABASE_URL = pg.url;
    embeddedDatabase = true;
  }
  let embeddedStore = false;
  if (!process.env.S3_BUCKET) {
    const store = await startLocalStore(path.join(dataDir, "s3"));
    stops.push(store.stop);
    Object.assign(env, store.env);
    embeddedStore = true;
  }
  return {
    env,
    embedded: { database: embeddedDatabase, store: embeddedStore },
    dataDir,
    stop: async () => {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
