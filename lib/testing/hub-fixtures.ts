import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { getDb } from "../db/client";
import { grantLicence } from "../admin/licences";
import { setFingerprinting } from "../fingerprints/admin";
import { makeCopy } from "../fingerprints/copies";
import { importLeRobotVersion } from "../catalog/import/lerobot/source";
import { putObject, s3Client } from "../storage/client";
import { objectKey, storeLocation } from "../storage/config";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "./fixtures";
import { buildLeRobotFixture, type LeRobotFixture, type LeRobotFixtureOptions } from "./lerobot-fixtures";
import { call, type CallResult } from "./http";
import * as hub from "../../app/hub/[[...path]]/route";

/**
 * What the Hub protocol's tests share: versions whose files really are in the run's object store,
 * licences in and out of their term, and calls to the /hub route as the Hub's clients make them.
 */

const DAY = 86_400_000;

export type PlainRepo = {
  datasetId: string;
  /** 1.0.0 (licensed, in term), 2.0.0 (licence ended), 3.0.0 (licence starts tomorrow). */
  episodes: string[];
  content: Map<string, Buffer>;
  files: { path: string; episode_id: string | null; stream: string | null; size_bytes: number; sha256: string }[];
};

/** A dataset in our own format, three versions of the same files, each under a licence of another term. */
export async function plainRepo(
  organizationId: string,
  options: { episodes?: number; readme?: string } = {},
): Promise<PlainRepo> {
  const episodes = randomEpisodes(options.episodes ?? 4, 91);
  const content = new Map<string, Buffer>();
  const files: PlainRepo["files"] = [];
  const add = (p: string, episodeId: string | null, stream: string | null, body: Buffer) => {
    content.set(p, body);
    files.push({ path: p, episode_id: episodeId, stream, size_bytes: body.length, sha256: sha256(body) });
  };
  add(
    "README.md",
    null,
    null,
    Buffer.from(options.readme ?? "---\nlicense: other\ntags:\n- robotics\n---\n# A dataset\n"),
  );
  for (const e of episodes) {
    add(`episodes/${e.episode_id}/cam.bin`, e.episode_id, "cam", randomBytes(3000));
    add(`episodes/${e.episode_id}/joints.bin`, e.episode_id, "joints", randomBytes(500));
  }
  const datasetId = await importTestDataset(
    ["1.0.0", "2.0.0", "3.0.0"].map((version, i) => ({
      version,
      released_at: new Date(Date.UTC(2026, i, 1)).toISOString(),
      episodes,
      files,
    })),
  );
  await upload(datasetId, ["1.0.0", "2.0.0", "3.0.0"], content);
  const now = Date.now();
  await grant(organizationId, datasetId, "1.0.0");
  await grantLicence(operatorCtx(), {
    organizationId,
    datasetId,
    version: "2.0.0",
    startsAt: new Date(now - 3 * DAY),
    endsAt: new Date(now - DAY),
  });
  await grantLicence(operatorCtx(), { organizationId, datasetId, version: "3.0.0", startsAt: new Date(now + DAY) });
  return { datasetId, episodes: episodes.map((e) => e.episode_id), content, files };
}

export type LeRobotRepo = { datasetId: string; fixture: LeRobotFixture; root: string };

/** A LeRobot dataset imported as version 1.0.0 with its files in the store, licensed to the organisation. */
export async function leRobotRepo(organizationId: string, options: LeRobotFixtureOptions): Promise<LeRobotRepo> {
  const datasetId = uniqueId(`lr${options.version.replace(".", "")}`);
  const root = mkdtempSync(path.join(tmpdir(), "das-hub-lerobot-"));
  const fixture = await buildLeRobotFixture(root, options);
  const location = storeLocation();
  const client = s3Client(location);
  try {
    await importLeRobotVersion(getDb().$client, {
      dir: root,
      datasetId,
      version: "1.0.0",
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) },
    });
  } finally {
    client.destroy();
  }
  await grant(organizationId, datasetId, "1.0.0");
  return { datasetId, fixture, root };
}

export const removeRepoDir = (repo: LeRobotRepo) => rmSync(repo.root, { recursive: true, force: true });

/**
 * Fingerprinting turned on for a version, and every copy then due made here and now, as the copy
 * job makes it (lib/fingerprints/copies.ts), rather than waiting for a worker. A licence granted
 * after this has no copies until `makeDueCopies` runs again.
 */
export async function fingerprint(datasetId: string, version: string): Promise<void> {
  await setFingerprinting(operatorCtx(), { datasetId, version, on: true });
  await makeDueCopies(datasetId, version);
}

export async function makeDueCopies(datasetId: string, version: string): Promise<void> {
  const due = await getDb().$client<{ licenceId: string; path: string }[]>`
    select l.id as "licenceId", f.path from licences l join dataset_versions v on v.id = l.version_id
    join files f on f.version_id = v.id
    where v.dataset_id = ${datasetId} and v.version = ${version} and l.revoked_at is null
      and not exists (select 1 from licence_copies c where c.licence_id = l.id and c.path = f.path)`;
  for (const job of due) await makeCopy(getDb(), job);
}

/** The licence an organisation holds to a version. */
export async function licenceOf(organizationId: string, datasetId: string, version: string): Promise<string> {
  const [row] = await getDb().$client<{ id: string }[]>`
    select l.id from licences l join dataset_versions v on v.id = l.version_id
    where l.organization_id = ${organizationId} and v.dataset_id = ${datasetId} and v.version = ${version}`;
  return row!.id;
}

/** A licence's copies of a version's files, by path: what it is handed instead of the originals. */
export async function copiesOf(licenceId: string): Promise<Map<string, { sha256: string; size_bytes: number }>> {
  const rows = await getDb().$client<{ path: string; sha256: string; size_bytes: number }[]>`
    select path, sha256, size_bytes::float8 as size_bytes from licence_copies where licence_id = ${licenceId}`;
  return new Map(rows.map(({ path: p, ...copy }) => [p, copy]));
}

async function upload(datasetId: string, versions: string[], content: Map<string, Buffer>): Promise<void> {
  const location = storeLocation();
  const client = s3Client(location);
  try {
    for (const version of versions)
      await Promise.all(
        [...content].map(([p, body]) => putObject(client, location.bucket, objectKey(datasetId, version, p), body)),
      );
  } finally {
    client.destroy();
  }
}

/** A new organisation with a key. */
export async function hubCaller(): Promise<{ organizationId: string; key: string; keyId: string }> {
  const org = await createTestOrg();
  const key = await createTestKey(org.id);
  return { organizationId: org.id, key: key.secret, keyId: key.id };
}

/** A request to the /hub route handlers in-process, as a Hub client sends it (accepting anything, no JSON body). */
export function hubCall(
  key: string | undefined,
  url: string,
  options: { method?: "GET" | "HEAD" | "POST"; form?: [string, string][]; headers?: Record<string, string> } = {},
): Promise<CallResult> {
  const method = options.method ?? "GET";
  const handler = method === "HEAD" ? hub.HEAD : method === "POST" ? hub.POST : hub.GET;
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  return call(handler, url, {
    method,
    key,
    body,
    headers: {
      accept: "*/*",
      ...(body !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      ...options.headers,
    },
  });
}

export const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The disclosure-log entries a key made, oldest first. */
export async function entriesOf(keyId: string) {
  return getDb().$client<
    {
      id: string;
      channel: string;
      requested_scope: { paths?: string[] };
      episode_count: number;
      file_count: number;
      total_bytes: number;
      files_sha256: string | null;
      expires_at: Date;
    }[]
  >`select id, channel, requested_scope, episode_count, file_count, total_bytes::float8 as total_bytes, files_sha256, expires_at
    from disclosures where api_key_id = ${keyId} order by seq`;
}
