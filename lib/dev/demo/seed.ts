import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Ctx } from "../../context";
import type { RootDb } from "../../db/client";
import { apiKeys, users } from "../../db/schema";
import { hashKey } from "../../auth/api-keys";
import { importVersion } from "../../catalog/import/import-version";
import { createOrganization, organizationBySlug, type Organization } from "../../admin/organizations";
import { grantLicence } from "../../admin/licences";
import { issueKey } from "../../admin/keys";
import { createUser } from "../../admin/users";
import { AppError } from "../../errors";
import { s3Client } from "../../storage/client";
import type { StoreLocation } from "../../storage/presigner";
import { DEMO_DATASETS, writeDemoVersion } from "./generate";
import { uploadDemoFiles } from "./upload";
import {
  DEMO_ORGANIZATIONS,
  DEMO_USERS,
  demoAccounts,
  demoKeySecret,
  demoPassword,
  type DemoAccounts,
} from "./credentials";

export const DEFAULT_DEMO_EPISODES = 120;

export type SeedOptions = {
  episodesPerVersion?: number;
  appSecret: string;
  log: (line: string) => void;
  /** Where the demo files' bytes go, so that demo downloads really download. */
  store: StoreLocation;
};

/**
 * Deterministic demo data through the real import path, then organisations, licences, users and
 * keys. Safe to run again: everything that exists already is left as it is.
 */
export async function seedDemo(ctx: Ctx, options: SeedOptions): Promise<DemoAccounts> {
  const episodesPerVersion = options.episodesPerVersion ?? DEFAULT_DEMO_EPISODES;
  const scratch = mkdtempSync(path.join(tmpdir(), "das-demo-"));
  const client = s3Client(options.store);
  try {
    for (const spec of DEMO_DATASETS) {
      for (let i = 0; i < spec.versions.length; i++) {
        const generated = writeDemoVersion(scratch, spec, i, { episodesPerVersion });
        const result = await importVersion((ctx.db as RootDb).$client, generated.dir);
        options.log(
          `${result.status === "imported" ? "imported" : "unchanged"} ${result.datasetId}@${result.version} (${result.episodes} episodes, ${result.files} files)`,
        );
        const uploaded = await uploadDemoFiles(client, options.store.bucket, generated);
        if (uploaded)
          options.log(`  stored ${uploaded} files of ${result.datasetId}@${result.version} in the object store`);
      }
    }
  } finally {
    client.destroy();
    rmSync(scratch, { recursive: true, force: true });
  }

  const orgs = new Map<string, Organization>();
  for (const spec of DEMO_ORGANIZATIONS) {
    const org = await existingOr(
      () => organizationBySlug(ctx, spec.slug),
      () => createOrganization(ctx, { slug: spec.slug, name: spec.name }),
    );
    orgs.set(spec.slug, org);
    for (const [datasetId, version] of spec.licences)
      await grantLicence(ctx, { organizationId: org.id, datasetId, version });
    const secret = demoKeySecret(options.appSecret, spec.slug);
    const [known] = await ctx.db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(eq(apiKeys.keyHash, hashKey(secret)));
    if (!known) await issueKey(ctx, { organizationId: org.id, name: "demo key", secret });
  }
  for (const spec of DEMO_USERS) {
    const password = demoPassword(options.appSecret, spec.email);
    const [known] = await ctx.db.select({ id: users.id }).from(users).where(eq(users.email, spec.email));
    if (!known) {
      const organizationId = spec.organization ? orgs.get(spec.organization)!.id : null;
      await createUser(ctx, { email: spec.email, role: spec.role, organizationId, password, name: spec.name });
    }
  }
  // The caller prints them (printAccounts) when they can be used: the launcher, once the server answers.
  return demoAccounts(options.appSecret);
}

async function existingOr<T>(find: () => Promise<T>, create: () => Promise<T>): Promise<T> {
  try {
    return await find();
  } catch (error) {
    if (error instanceof AppError && error.code === "not_found") return create();
    throw error;
  }
}

export function printAccounts(accounts: DemoAccounts, log: (line: string) => void): void {
  log("Demo API keys:");
  for (const key of accounts.keys) log(`  ${key.organization.padEnd(16)} ${key.secret}`);
  log("Demo portal users:");
  for (const user of accounts.users) log(`  ${user.role.padEnd(9)} ${user.email.padEnd(24)} ${user.password}`);
}
