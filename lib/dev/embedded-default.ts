import { generateKeyPairSync, randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startEmbeddedPostgres } from "./embedded-postgres";
import { installationFile } from "./installation-file";
import { migrateKeepingChain } from "../disclosures/migrate-log";
import { asUser, ensureLoginRole } from "../db/roles";
import { randomStoreCredentials, startLocalStore, type StoreCredentials } from "./local-store";

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The embedded default's login role for the service: it owns no table (the superuser does). */
export const EMBEDDED_SERVICE_ROLE = "das_service";

export type Runtime = {
  /**
   * Whatever the environment lacked, filled by the embedded default: for das-admin, which may use
   * DATABASE_OWNER_URL (migrations, archiving); the app process is handed them without it
   * (`serviceEnv`).
   */
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
  return installationFile(dataDir, "app-secret", () => randomBytes(32).toString("hex"));
}

/**
 * The installation's Ed25519 key for signing the disclosure log's head digests (PKCS#8 PEM),
 * created once under the data directory; its path is what DIGEST_SIGNING_KEY then names.
 */
export function installationDigestSigningKey(dataDir: string): string {
  installationFile(dataDir, "digest-signing-key.pem", () =>
    generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  );
  return path.join(dataDir, "digest-signing-key.pem");
}

/**
 * The local store's key pair, created once under the data directory: the store accepts only
 * these, the app signs with them, and das-admin (on the same data directory) uses the same.
 */
export function localStoreCredentials(dataDir: string): StoreCredentials {
  const parsed = JSON.parse(
    installationFile(dataDir, "s3-credentials", () => JSON.stringify(randomStoreCredentials())),
  ) as Partial<StoreCredentials>;
  if (typeof parsed.accessKeyId !== "string" || typeof parsed.secretAccessKey !== "string") {
    throw new Error(
      `${path.join(dataDir, "s3-credentials")} is not a local store key pair: delete it to make a new one.`,
    );
  }
  return { accessKeyId: parsed.accessKeyId, secretAccessKey: parsed.secretAccessKey };
}

/**
 * Fills in what the environment does not configure: with no DATABASE_URL, a real PostgreSQL from
 * node_modules with its data under the data directory, migrated; with no S3_BUCKET, a local
 * S3-compatible store (files under the data directory, served by this process); with no
 * APP_SECRET, the installation's own; on the embedded database with no DIGEST_SIGNING_KEY, the
 * installation's digest signing key. Configured values are left alone (production).
 */
export async function startEmbeddedDefault(
  options: {
    log?: (line: string) => void;
    sharedBuffers?: string;
    /**
     * The service's own start: its local store serves S3_PUBLIC_ENDPOINT's clients, on every
     * interface at that port. das-admin on the same data directory (while the service runs) reads
     * and writes the same files through a store on this machine only.
     */
    serveStore?: boolean;
  } = {},
): Promise<Runtime> {
  const dataDir = dataDirectory();
  const env: Record<string, string> = {};
  const stops: (() => Promise<void>)[] = [];
  env.APP_SECRET = process.env.APP_SECRET || installationSecret(dataDir);
  let embeddedDatabase = false;
  if (process.env.DATABASE_URL) {
    env.DATABASE_URL = process.env.DATABASE_URL;
    if (process.env.DATABASE_OWNER_URL) env.DATABASE_OWNER_URL = process.env.DATABASE_OWNER_URL;
  } else {
    const pg = await startEmbeddedPostgres(dataDir, options.log, { sharedBuffers: options.sharedBuffers });
    stops.push(pg.stop);
    // The superuser owns the tables and migrates; the service logs in as a role that owns nothing
    // (lib/db/roles.ts), with a password of this installation's own.
    const servicePassword = installationFile(dataDir, "pg-service-password", () => randomBytes(24).toString("hex"));
    await ensureLoginRole(pg.url, EMBEDDED_SERVICE_ROLE, servicePassword);
    await migrateKeepingChain(pg.url, { serviceRole: EMBEDDED_SERVICE_ROLE });
    env.DATABASE_URL = asUser(pg.url, EMBEDDED_SERVICE_ROLE, servicePassword);
    env.DATABASE_OWNER_URL = pg.url;
    embeddedDatabase = true;
    // A development installation signs its digests with a key of its own. A configured database
    // gets none made up here: digests signed by a key nobody recorded would prove nothing.
    if (!process.env.DIGEST_SIGNING_KEY) env.DIGEST_SIGNING_KEY = installationDigestSigningKey(dataDir);
  }
  let embeddedStore = false;
  if (!process.env.S3_BUCKET) {
    const store = await startLocalStore(path.join(dataDir, "s3"), localStoreCredentials(dataDir), {
      publicEndpoint: options.serveStore ? process.env.S3_PUBLIC_ENDPOINT : undefined,
    });
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

/** What the service's own process gets: the runtime's variables but the owner's URL, which it never uses. */
export function serviceEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const rest: Record<string, string | undefined> = { ...env };
  delete rest.DATABASE_OWNER_URL;
  return rest as NodeJS.ProcessEnv;
}
