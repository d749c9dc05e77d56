import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../dev/embedded-postgres";
import { migrateDatabase } from "../db/migrate";
import { asUser, ensureLoginRole } from "../db/roles";
import { PROJECT_ROOT } from "../dev/embedded-default";
import { randomStoreCredentials, startLocalStore } from "../dev/local-store";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's database as its owner (a superuser): what suites use to set up and inspect. */
    databaseUrl: string;
    /** The same database as the service's login role, which owns nothing: what servers use. */
    serviceDatabaseUrl: string;
    appSecret: string;
    /** S3_* variables of this run's local object store. */
    storeEnv: Record<string, string>;
  }
}

/**
 * A fresh, migrated database for this run on a real PostgreSQL server: by default an embedded
 * server of the run's own (so concurrent runs never stop each other's), or the server
 * DATABASE_URL points at. There the run's database is created beside the configured one and
 * dropped afterwards, so tests never touch existing data.
 */
export default async function setup(project: TestProject) {
  let stopServer = async () => {};
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    mkdirSync(path.join(PROJECT_ROOT, ".data"), { recursive: true });
    const dir = mkdtempSync(path.join(PROJECT_ROOT, ".data/test-"));
    chmodSync(dir, 0o755); // as root, the server runs as the `postgres` user, which must reach its data dir
    const embedded = await startEmbeddedPostgres(dir);
    serverUrl = embedded.url;
    stopServer = async () => {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const name = `das_test_${Date.now()}_${randomBytes(3).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // The service's role of this run (roles are the server's, shared by concurrent runs): created
  // here, granted its rows by the migration, dropped with the database.
  const serviceRole = `das_svc_${randomBytes(5).toString("hex")}`;
  const servicePassword = randomBytes(18).toString("hex");
  await ensureLoginRole(serverUrl, serviceRole, servicePassword);
  await migrateDatabase(url.toString(), { serviceRole });
  project.provide("databaseUrl", url.toString());
  project.provide("serviceDatabaseUrl", asUser(url.toString(), serviceRole, servicePassword));
  project.provide("appSecret", randomBytes(32).toString("hex"));
  // A local S3-compatible store of the run's own, which verifies signatures and expiry, with a key pair of the run's own.
  const storeDir = mkdtempSync(path.join(os.tmpdir(), "das-test-store-"));
  const store = await startLocalStore(storeDir, randomStoreCredentials());
  project.provide("storeEnv", store.env);
  return async () => {
    await store.stop();
    rmSync(storeDir, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.unsafe(`drop role if exists ${serviceRole}`);
    await admin.end();
    await stopServer();
  };
}
