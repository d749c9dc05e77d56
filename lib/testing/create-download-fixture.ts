import { createHash } from "node:crypto";
import { beforeAll, expect } from "vitest";
import { getDb } from "@/lib/db/client";
import type { RequestedScope } from "@/lib/db/schema";
import type { EpisodeLine, FileLine } from "@/lib/catalog/import/records";
import { createTestKey, createTestOrg, grant, importTestDataset, randomEpisodes } from "./fixtures";
import { expectError, expectOk } from "./expect-api";
import type { CallResult } from "./http";
import {
  disclosureEpisodes,
  disclosureRows,
  expectedScope,
  expectSignedUrls,
  postDownload,
  versionIdOf,
  type DisclosureRow,
  type DownloadRequest,
} from "./downloads";

// What lib/api/operations/create-download*.test.ts share: an oracle's dataset (two versions, one
// licensed), a dataset licensed only to another organisation, and the checks of a download and of
// a refusal against the oracle and the disclosure log.

export const sha = (text: string) => createHash("sha256").update(text).digest("hex");
export const sql = () => getDb().$client;

// Version 1.0.0: ten episodes with different streams, each with one file per stream except the
// last, which has none; version-level files (no episode, no stream); a size beyond 32 bits.
export const episodes: EpisodeLine[] = randomEpisodes(10, 301);
const STREAM_SETS = [["cam", "joints"], ["cam"], ["joints", "depth"], ["cam", "joints", "depth"], ["depth"]];
episodes.forEach((e, i) => (e.streams = STREAM_SETS[i % STREAM_SETS.length]!));
export const ids = episodes.map((e) => e.episode_id);
export const noFiles = ids[9]!;
export const FILES: FileLine[] = [
  { path: "README.md", size_bytes: 2048, sha256: sha("readme") },
  { path: "meta/info.json", size_bytes: 120, sha256: sha("info") },
  ...episodes.slice(0, 9).flatMap((e, i) =>
    e.streams.map((stream, j) => ({
      path: `${e.episode_id}/${stream}.${stream === "cam" ? "mp4" : "parquet"}`,
      episode_id: e.episode_id,
      stream,
      size_bytes: i === 3 && j === 0 ? 5_000_000_000 : 1000 * (i + 1) + j,
      sha256: sha(`${e.episode_id}/${stream}`),
    })),
  ),
];
// Version 2.0.0 (not licensed) adds an episode and a stream that 1.0.0 does not have.
export const extra: EpisodeLine = { ...randomEpisodes(1, 302)[0]!, streams: ["lidar"] };

export let org: { id: string };
export let key: { id: string; secret: string };
export let licenceId: string;
export let datasetId: string;
export let versionId: number;
/** A dataset that exists but is licensed only to another organisation. */
export let hiddenId: string;
export let hiddenEpisode: string;

/**
 * The datasets, organisation, key and licence every create-download test file asks about, made
 * once per file: call it at the top of the file.
 */
export function setUpDownloadFixture() {
  beforeAll(async () => {
    org = await createTestOrg();
    key = await createTestKey(org.id);
    datasetId = await importTestDataset([
      { version: "1.0.0", episodes, files: FILES },
      {
        version: "2.0.0",
        episodes: [...episodes, extra],
        files: [
          ...FILES,
          {
            path: `${extra.episode_id}/lidar.bin`,
            episode_id: extra.episode_id,
            stream: "lidar",
            size_bytes: 5,
            sha256: sha("l"),
          },
        ],
      },
    ]);
    licenceId = (await grant(org.id, datasetId, "1.0.0")).id;
    versionId = await versionIdOf(datasetId, "1.0.0");
    const hiddenEpisodes = randomEpisodes(1, 303);
    hiddenEpisode = hiddenEpisodes[0]!.episode_id;
    hiddenId = await importTestDataset([
      {
        version: "1.0.0",
        episodes: hiddenEpisodes,
        files: [
          {
            path: `${hiddenEpisode}/cam.mp4`,
            episode_id: hiddenEpisode,
            stream: "cam",
            size_bytes: 1,
            sha256: sha("h"),
          },
        ],
      },
    ]);
    const other = await createTestOrg();
    await grant(other.id, hiddenId, "1.0.0");
  });
}

export const body = (scope: RequestedScope = {}, version = "1.0.0"): DownloadRequest => ({
  dataset_id: datasetId,
  version,
  ...scope,
});
export const download = (b: unknown, headers: Record<string, string> = {}, secret = key.secret) =>
  postDownload(secret, b, headers);
export const ourEntries = () => disclosureRows({ organizationId: org.id });

/** A successful download: its body, its URLs and its one disclosure entry, all against the oracle. */
export async function expectDownload(res: CallResult, sent: DownloadRequest, status = 201): Promise<DisclosureRow> {
  expectOk(res, status);
  const { dataset_id, version, ...scope } = sent;
  const expected = expectedScope(episodes, FILES, scope);
  expect(Object.keys(res.json).sort()).toEqual([
    "co_delivered_episode_ids",
    "dataset_id",
    "download_id",
    "expires_at",
    "file_count",
    "files",
    "total_bytes",
    "version",
  ]);
  // The log's ids begin with the millisecond they were made (lib/ids.ts, newLogId).
  expect(res.json.download_id).toMatch(/^dl_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
  expect(Math.abs(Number.parseInt(res.json.download_id.slice(3, 15), 16) - Date.now())).toBeLessThan(60_000);
  expect(res.json).toMatchObject({
    dataset_id,
    version,
    file_count: expected.files.length,
    total_bytes: expected.totalBytes,
  });
  for (const file of res.json.files)
    expect(Object.keys(file).sort()).toEqual([
      "episode_id",
      "episode_ids",
      "path",
      "sha256",
      "size_bytes",
      "stream",
      "url",
    ]);
  expect(res.json.files.map(({ url: _, ...f }: { url: string }) => f)).toEqual(expected.files);
  expect(res.json.co_delivered_episode_ids).toEqual(expected.coDelivered);

  const [entry, ...more] = await disclosureRows({ id: res.json.download_id });
  expect(more).toEqual([]);
  expect(entry).toMatchObject({
    organization_id: org.id,
    api_key_id: key.id,
    user_id: null,
    channel: "api",
    dataset_id,
    version,
    version_id: versionId,
    licence_id: licenceId,
    requested_scope: scope,
    episode_count: expected.episodeIds.length,
    file_count: expected.files.length,
    total_bytes: String(expected.totalBytes),
    request_id: res.headers.get("x-request-id"),
  });
  // toMatchObject would accept extra keys in a nested object: the requested scope must be exactly what was sent.
  expect(entry!.requested_scope).toEqual(scope);
  expect(await disclosureEpisodes(entry!.id)).toEqual(expected.episodeIds);

  // Issue time: the database clock in whole seconds; every URL signed then and valid 900 s.
  expect(entry!.occurred_at.getTime() % 1000).toBe(0);
  expect(Math.abs(entry!.occurred_at.getTime() - Date.now())).toBeLessThan(60_000);
  expect(entry!.expires_at.getTime() - entry!.occurred_at.getTime()).toBe(900_000);
  expect(res.json.expires_at).toBe(entry!.expires_at.toISOString());
  expect(new Date(res.json.expires_at).getTime() - entry!.occurred_at.getTime()).toBe(900_000);
  expectSignedUrls(res.json, entry!.occurred_at);
  return entry!;
}

// Each refused request leaves the log as it was.
export async function expectRefused(
  res: CallResult,
  status: number,
  code: Parameters<typeof expectError>[2],
  before: number,
) {
  expectError(res, status, code);
  expect(res.text).not.toContain("http");
  expect(res.text).not.toContain("X-Amz-");
  expect((await ourEntries()).length).toBe(before);
  expect(await disclosureRows({ requestId: res.json.error.request_id })).toEqual([]);
}
