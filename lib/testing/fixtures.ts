import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { getDb, type Db } from "../db/client";
import type { Ctx } from "../context";
import { createOrganization, type Organization } from "../admin/organizations";
import { grantLicence } from "../admin/licences";
import { issueKey, type IssueKeyInput, type IssuedKey } from "../admin/keys";
import { importVersion } from "../catalog/import/import-version";
import type { AnnotationLine, EpisodeLine, FileLine, VersionFile } from "../catalog/import/records";
import { prng } from "../dev/demo/generate";

/** Tests build everything they use; nothing depends on seeded ids. */
export function operatorCtx(): Ctx {
  return { db: getDb(), requestId: "test", principal: { kind: "operator", name: "test-suite", organizationId: null } };
}

/** The operator on a database or transaction of a test's own. */
export function operatorOn(db: Db): Ctx {
  return { ...operatorCtx(), db };
}

export const uniqueId = (prefix: string) => `${prefix}-${randomBytes(5).toString("hex")}`;

export function createTestOrg(): Promise<Organization> {
  return createOrganization(operatorCtx(), { slug: uniqueId("org") });
}

export function createTestKey(organizationId: string, options: Partial<IssueKeyInput> = {}): Promise<IssuedKey> {
  return issueKey(operatorCtx(), { organizationId, name: "test key", ...options });
}

export function grant(organizationId: string, datasetId: string, version: string) {
  return grantLicence(operatorCtx(), { organizationId, datasetId, version });
}

export type TestVersion = {
  version: string;
  released_at?: string;
  changelog?: VersionFile["changelog"];
  episodes: EpisodeLine[];
  annotations?: AnnotationLine[];
  files?: FileLine[];
};

/** Writes an import directory; `raw` lets a test put any text in any file. */
export function writeImportDir(datasetId: string, version: TestVersion, raw: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), "das-import-"));
  const files: Record<string, string> = {
    "dataset.json": JSON.stringify({ id: datasetId, title: `Dataset ${datasetId}`, description: "test data" }, null, 2),
    "version.json": JSON.stringify(
      {
        version: version.version,
        released_at: version.released_at ?? "2026-01-01T00:00:00Z",
        changelog: version.changelog ?? [],
      },
      null,
      2,
    ),
    "episodes.jsonl": version.episodes.map((e) => JSON.stringify(e)).join("\n"),
    "annotations.jsonl": (version.annotations ?? []).map((a) => JSON.stringify(a)).join("\n"),
    "files.jsonl": (version.files ?? []).map((f) => JSON.stringify(f)).join("\n"),
    ...raw,
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

/** Imports each version of a new dataset; returns its id. */
export async function importTestDataset(versions: TestVersion[], datasetId = uniqueId("ds")): Promise<string> {
  for (const version of versions) {
    const dir = writeImportDir(datasetId, version);
    try {
      await importVersion(getDb().$client, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return datasetId;
}

export const OUTCOMES = ["success", "failure", "partial"] as const;
export const ENVIRONMENTS = ["kitchen", "lab", "warehouse", "outdoor yard"] as const;

/**
 * Episodes with random fields and ids of mixed case, digits and punctuation, so that byte order
 * (not a locale's order) is what the API must follow.
 */
export function randomEpisodes(count: number, seed: number, idPrefix = uniqueId("e")): EpisodeLine[] {
  const random = prng(seed);
  const alphabet = "ABCxyz019_-.";
  const ids = new Set<string>();
  while (ids.size < count) {
    let suffix = "";
    for (let i = 0; i < 6; i++) suffix += alphabet[Math.floor(random() * alphabet.length)];
    ids.add(`${idPrefix}${suffix}`);
  }
  return [...ids].map((episode_id) => ({
    episode_id,
    task: "pick",
    environment: ENVIRONMENTS[Math.floor(random() * ENVIRONMENTS.length)]!,
    duration_s: Math.round((1 + random() * 60) * 1000) / 1000,
    outcome: OUTCOMES[Math.floor(random() * OUTCOMES.length)]!,
    has_recovery: random() < 0.3,
    contributor: `c${Math.floor(random() * 5)}`,
    streams: ["cam", "joints"],
  }));
}

/** The same ordering PostgreSQL's "C" collation gives: by UTF-8 bytes. */
export const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
