import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import type { RequestedScope } from "@/lib/db/schema";
import type { EpisodeLine, FileLine } from "@/lib/catalog/import/records";
import { verifyChain } from "@/lib/disclosures/verify";
import {
  byteOrder,
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import { userOfRole } from "@/lib/testing/admin";
import { allRecipientsOfContributor } from "@/lib/testing/disclosure-fixtures";
import { expectError, expectIndistinguishable, expectOk } from "@/lib/testing/expect-api";
import type { CallResult } from "@/lib/testing/http";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import {
  disclosureEpisodes,
  disclosureRows,
  expectedScope,
  expectSignedUrls,
  postDownload,
  untilDatabaseClockPasses,
  versionIdOf,
  type DisclosureRow,
  type DownloadRequest,
} from "@/lib/testing/downloads";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const sql = () => getDb().$client;

// Version 1.0.0: ten episodes with different streams, each with one file per stream except the
// last, which has none; version-level files (no episode, no stream); a size beyond 32 bits.
const episodes: EpisodeLine[] = randomEpisodes(10, 301);
const STREAM_SETS = [["cam", "joints"], ["cam"], ["joints", "depth"], ["cam", "joints", "depth"], ["depth"]];
episodes.forEach((e, i) => (e.streams = STREAM_SETS[i % STREAM_SETS.length]!));
const ids = episodes.map((e) => e.episode_id);
const noFiles = ids[9]!;
const FILES: FileLine[] = [
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
const extra: EpisodeLine = { ...randomEpisodes(1, 302)[0]!, streams: ["lidar"] };

let org: { id: string };
let key: { id: string; secret: string };
let licenceId: string;
let datasetId: string;
let versionId: number;
/** A dataset that exists but is licensed only to another organisation. */
let hiddenId: string;
let hiddenEpisode: string;

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
        { path: `${hiddenEpisode}/cam.mp4`, episode_id: hiddenEpisode, stream: "cam", size_bytes: 1, sha256: sha("h") },
      ],
    },
  ]);
  const other = await createTestOrg();
  await grant(other.id, hiddenId, "1.0.0");
});

const body = (scope: RequestedScope = {}, version = "1.0.0"): DownloadRequest => ({
  dataset_id: datasetId,
  version,
  ...scope,
});
const download = (b: unknown, headers: Record<string, string> = {}, secret = key.secret) =>
  postDownload(secret, b, headers);
const ourEntries = () => disclosureRows({ organizationId: org.id });

/** A successful download: its body, its URLs and its one disclosure entry, all against the oracle. */
async function expectDownload(res: CallResult, sent: DownloadRequest, status = 201): Promise<DisclosureRow> {
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

describe("POST /api/v1/downloads: scopes", () => {
  const e = (i: number) => episodes[i]!;
  const cases: [string, () => RequestedScope][] = [
    ["the whole version, with its version-level files", () => ({})],
    ["the whole version narrowed to one stream", () => ({ streams: ["cam"] })],
    ["the whole version narrowed to two streams", () => ({ streams: ["depth", "joints"] })],
    ["episode ids, in the order sent", () => ({ episode_ids: [ids[3]!, ids[0]!, ids[7]!] })],
    ["episode ids narrowed to a stream", () => ({ episode_ids: [ids[0]!, ids[2]!, ids[3]!], streams: ["joints"] })],
    ["episode ids including one without files", () => ({ episode_ids: [noFiles, ids[1]!] })],
    [
      "episode ids with a stream only some of them have",
      () => ({ episode_ids: [ids[1]!, ids[4]!], streams: ["depth"] }),
    ],
    ["a filter on outcome", () => ({ filter: { outcome: e(0).outcome } })],
    ["a filter on environment", () => ({ filter: { environment: e(1).environment } })],
    [
      "a filter on outcome and environment",
      () => ({ filter: { outcome: e(2).outcome, environment: e(2).environment } }),
    ],
    ["a filter narrowed to a stream", () => ({ filter: { outcome: e(3).outcome }, streams: ["cam"] })],
    ["a filter on contributor", () => ({ filter: { contributor: e(4).contributor } })],
    ["a filter on has_recovery", () => ({ filter: { has_recovery: e(5).has_recovery } })],
    [
      "a filter on a duration range, its bounds included",
      () => ({ filter: { min_duration_s: e(6).duration_s, max_duration_s: e(6).duration_s + 20 } }),
    ],
    [
      "a filter on task, contributor, has_recovery and a duration range",
      () => ({
        filter: {
          task: e(7).task,
          contributor: e(7).contributor,
          has_recovery: e(7).has_recovery,
          min_duration_s: 0,
          max_duration_s: e(7).duration_s,
        },
      }),
    ],
  ];

  it.each(cases)("%s: the oracle's files, one disclosure entry with the resolved episodes", async (_, scope) => {
    const before = (await ourEntries()).length;
    const sent = body(scope());
    const expected = expectedScope(episodes, FILES, scope());
    expect(expected.files.length).toBeGreaterThan(0);
    const res = await download(sent);
    await expectDownload(res, sent);
    expect((await ourEntries()).length).toBe(before + 1);
  });

  it("includes version-level files only when the whole version is asked for", async () => {
    const versionLevel = FILES.filter((f) => !f.episode_id).map((f) => f.path);
    const whole = await download(body());
    expectOk(whole, 201);
    expect(
      whole.json.files
        .filter((f: { episode_id: string | null }) => f.episode_id === null)
        .map((f: { path: string }) => f.path),
    ).toEqual(versionLevel);
    expect(whole.json.file_count).toBe(FILES.length);
    const everyEpisode = await download(body({ episode_ids: ids }));
    const everyOutcome = await download(body({ filter: { outcome: e(0).outcome } }));
    for (const res of [everyEpisode, everyOutcome]) {
      expectOk(res, 201);
      expect(res.json.files.every((f: { episode_id: string | null }) => f.episode_id !== null)).toBe(true);
    }
    expect(everyEpisode.json.file_count).toBe(FILES.length - versionLevel.length);
  });

  it("records a version with only version-level files as a download of no episodes", async () => {
    const docs = await importTestDataset([
      {
        version: "1.0.0",
        episodes: randomEpisodes(1, 304),
        files: [{ path: "only.txt", size_bytes: 3, sha256: sha("o") }],
      },
    ]);
    await grant(org.id, docs, "1.0.0");
    const res = await download({ dataset_id: docs, version: "1.0.0" });
    expectOk(res, 201);
    expect(res.json).toMatchObject({ file_count: 1, total_bytes: 3 });
    const [entry] = await disclosureRows({ id: res.json.download_id });
    expect(entry).toMatchObject({ episode_count: 0, file_count: 1, dataset_id: docs });
    expect(await disclosureEpisodes(res.json.download_id)).toEqual([]);
  });
});

describe("POST /api/v1/downloads: files shared by several episodes", () => {
  // e0..e5; a video holds e0-e2 with their places, another e3-e4; a data file holds e0-e3, another e4;
  // e5 has files of its own; two files of the whole version.
  const shared = randomEpisodes(6, 305).map((e, i) => ({
    ...e,
    streams: ["cam", "data"],
    outcome: i === 4 ? "failure" : "success",
    contributor: i === 0 ? uniqueId("c") : e.contributor,
  }));
  const [e0, e1, e2, e3, e4, e5] = shared.map((e) => e.episode_id) as [string, string, string, string, string, string];
  const file = (p: string, stream: string | null, more: Partial<FileLine> = {}): FileLine => ({
    path: p,
    stream,
    size_bytes: p.length,
    sha256: sha(p),
    ...more,
  });
  const files: FileLine[] = [
    file("README.md", null),
    file("meta/info.json", null),
    file("videos/part-0.mp4", "cam", {
      episodes: [e0, e1, e2].map((id, i) => ({ episode_id: id, start_s: i * 2, end_s: i * 2 + 1 })),
    }),
    file("videos/part-1.mp4", "cam", { episode_ids: [e3, e4] }),
    file("data/part-0.parquet", "data", { episode_ids: [e0, e1, e2, e3] }),
    file("data/part-1.parquet", "data", { episode_id: e4 }),
    file(`${e5}/cam.mp4`, "cam", { episode_id: e5 }),
    file(`${e5}/data.parquet`, "data", { episode_id: e5 }),
  ];
  let sharedId: string;
  beforeAll(async () => {
    sharedId = await importTestDataset([{ version: "1.0.0", episodes: shared, files }]);
    await grant(org.id, sharedId, "1.0.0");
  });
  const ask = (scope: RequestedScope, headers: Record<string, string> = {}) =>
    download({ dataset_id: sharedId, version: "1.0.0", ...scope }, headers);

  it.each<[string, () => RequestedScope, () => string[]]>([
    [
      "one episode of a shared video and data file brings the others in them",
      () => ({ episode_ids: [e1] }),
      () => [e0, e2, e3],
    ],
    [
      "narrowed to a stream, only the episodes of the files delivered",
      () => ({ episode_ids: [e1], streams: ["cam"] }),
      () => [e0, e2],
    ],
    [
      "a filter brings the episodes sharing a file with those matching",
      () => ({ filter: { outcome: "failure" } }),
      () => [e3],
    ],
    ["episodes with files of their own bring nothing else", () => ({ episode_ids: [e5] }), () => []],
    ["the whole version asks for every episode", () => ({}), () => []],
  ])("%s: every episode of every delivered file is disclosed, the extra ones named", async (_, scope, extra) => {
    const expected = expectedScope(shared, files, scope());
    expect(expected.coDelivered).toEqual([...extra()].sort(byteOrder));
    const res = await ask(scope());
    expectOk(res, 201);
    expect(res.json.files.map(({ url: _, ...f }: { url: string }) => f)).toEqual(expected.files);
    expect(res.json.co_delivered_episode_ids).toEqual(expected.coDelivered);
    const [entry] = await disclosureRows({ id: res.json.download_id });
    expect(entry).toMatchObject({ episode_count: expected.episodeIds.length, file_count: expected.files.length });
    expect(await disclosureEpisodes(res.json.download_id)).toEqual(expected.episodeIds);
  });

  it("gives a shared file's episode_ids, and its episode_id only when it holds one episode", async () => {
    const res = await ask({});
    expectOk(res, 201);
    const byPath = new Map(res.json.files.map((f: { path: string }) => [f.path, f]));
    expect(byPath.get("videos/part-0.mp4")).toMatchObject({
      episode_id: null,
      episode_ids: [e0, e1, e2].sort(byteOrder),
    });
    expect(byPath.get("data/part-1.parquet")).toMatchObject({ episode_id: e4, episode_ids: [e4] });
    expect(byPath.get("README.md")).toMatchObject({ episode_id: null, episode_ids: [] });
  });

  it("adds the files of the whole version to an episode scope with include_version_files, whatever the streams, and records it", async () => {
    const scope: RequestedScope = { episode_ids: [e5], streams: ["cam"], include_version_files: true };
    const res = await ask(scope);
    expectOk(res, 201);
    expect(res.json.files.map((f: { path: string }) => f.path)).toEqual(
      ["README.md", "meta/info.json", `${e5}/cam.mp4`].sort(byteOrder),
    );
    expect(res.json.files.map(({ url: _, ...f }: { url: string }) => f)).toEqual(
      expectedScope(shared, files, scope).files,
    );
    const [entry] = await disclosureRows({ id: res.json.download_id });
    expect(entry!.requested_scope).toEqual(scope);
    expect(await disclosureEpisodes(res.json.download_id)).toEqual([e5]);
    // false is the same request as leaving it out, and recorded the same.
    const without = await ask({ episode_ids: [e5], include_version_files: false } as unknown as RequestedScope);
    expectOk(without, 201);
    expect((await disclosureRows({ id: without.json.download_id }))[0]!.requested_scope).toEqual({ episode_ids: [e5] });
    expect(without.json.files.map((f: { path: string }) => f.path)).toEqual([`${e5}/cam.mp4`, `${e5}/data.parquet`]);
    expect((await ask({ include_version_files: "yes" } as unknown as RequestedScope)).status).toBe(400);
  });

  it("replays a download with the same co-delivered episodes", async () => {
    const headers = { "Idempotency-Key": uniqueId("idem") };
    const first = await ask({ episode_ids: [e1] }, headers);
    const again = await ask({ episode_ids: [e1] }, headers);
    expectOk(first, 201);
    expectOk(again, 200);
    expect(again.json).toEqual(first.json);
  });

  it("lets the contributor report find an episode that only came along", async () => {
    const res = await ask({ episode_ids: [e2], streams: ["cam"] });
    expectOk(res, 201);
    expect(res.json.co_delivered_episode_ids).toContain(e0);
    const reviewer = await userOfRole("reviewer");
    const report = await allRecipientsOfContributor(
      { db: getDb(), requestId: uniqueId("req"), principal: reviewer },
      shared[0]!.contributor,
    );
    expect(report.map((r) => r.download_id)).toContain(res.json.download_id);
    expect(report.find((r) => r.download_id === res.json.download_id)).toMatchObject({
      dataset_id: sharedId,
      episode_count: 1,
    });
  });
});

describe("POST /api/v1/downloads: errors", () => {
  const e = (i: number) => episodes[i]!;
  // Each refused request leaves the log as it was.
  async function expectRefused(
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

  const INVALID: [string, () => unknown, RegExp][] = [
    [
      "episode_ids and filter together",
      () => body({ episode_ids: [ids[0]!], filter: { outcome: "success" } }),
      /not both/,
    ],
    ["a repeated episode id", () => body({ episode_ids: [ids[0]!, ids[1]!, ids[0]!] }), /episode_ids.*repeat/],
    ["a repeated stream", () => body({ streams: ["cam", "cam"] }), /streams.*repeat/],
    ["empty episode_ids", () => body({ episode_ids: [] }), /episode_ids.*at least one/],
    ["empty streams", () => body({ streams: [] }), /streams.*at least one/],
    ["an empty filter", () => body({ filter: {} }), /'filter': needs at least one field/],
    ["an unknown field", () => ({ ...body(), episodes: [ids[0]] }), /episodes/],
    // zod's message for the filter object covers its unknown keys: it names the fields it takes.
    [
      "an unknown filter field",
      () => body({ filter: { outcome: "success", contributors: "c1" } as never }),
      /'filter': must be an object with any of outcome, environment, task, contributor, has_recovery, min_duration_s, max_duration_s/,
    ],
    ["has_recovery as a string", () => body({ filter: { has_recovery: "true" } as never }), /has_recovery/],
    [
      "a negative duration",
      () => body({ filter: { min_duration_s: -1 } }),
      /'filter.min_duration_s': must not be negative/,
    ],
    ["a duration as a string", () => body({ filter: { max_duration_s: "30" } as never }), /max_duration_s/],
    [
      "a duration range whose minimum exceeds its maximum",
      () => body({ filter: { min_duration_s: 30, max_duration_s: 10 } }),
      /'filter.min_duration_s': must not exceed max_duration_s/,
    ],
    ["an empty task", () => body({ filter: { task: "" } }), /task/],
    ["an unknown field beside a valid scope", () => ({ ...body({ streams: ["cam"] }), stream: "cam" }), /stream/],
    ["no dataset_id", () => ({ version: "1.0.0" }), /dataset_id/],
    ["no version", () => ({ dataset_id: datasetId }), /version/],
    ["a numeric dataset_id", () => ({ dataset_id: 7, version: "1.0.0" }), /dataset_id/],
    ["episode_ids as a string", () => ({ ...body(), episode_ids: ids[0] }), /episode_ids/],
    ["a numeric episode id", () => ({ ...body(), episode_ids: [1] }), /episode_ids/],
    ["an empty episode id", () => ({ ...body(), episode_ids: [""] }), /episode_ids/],
    // A NUL once reached PostgreSQL, which cannot compare it, and answered 500.
    [
      "an episode id with a NUL",
      () => ({ ...body(), episode_ids: [ids[0]!, "x\u0000"] }),
      /'episode_ids.1': must not contain control characters/,
    ],
    [
      "an episode id with a control character",
      () => ({ ...body(), episode_ids: [`${ids[0]!}\n`] }),
      /'episode_ids.0': must not contain control characters/,
    ],
    [
      "a dataset_id with a NUL",
      () => ({ ...body(), dataset_id: `${datasetId}\u0000` }),
      /'dataset_id': must not contain control characters/,
    ],
    [
      "a version with a NUL",
      () => ({ ...body(), version: "1.0.0\u0000" }),
      /'version': must not contain control characters/,
    ],
    ["a stream name with a slash", () => body({ streams: ["../cam"] }), /streams/],
    ["filter as a string", () => ({ ...body(), filter: "outcome=success" }), /filter/],
    ["an empty outcome", () => body({ filter: { outcome: "" } }), /outcome/],
    ["a JSON array", () => [body()], /body/i],
    ["JSON null", () => null, /body/i],
    ["a JSON string", () => JSON.stringify(JSON.stringify(body())), /body/i],
  ];

  it.each(INVALID)("refuses %s with 400 invalid_body naming the problem", async (_, make, message) => {
    const before = (await ourEntries()).length;
    const sent = make();
    const res = await download(typeof sent === "string" ? sent : JSON.stringify(sent));
    await expectRefused(res, 400, "invalid_body", before);
    expect(res.json.error.message).toMatch(message);
  });

  it("refuses a body that is not JSON, or not sent as JSON", async () => {
    const before = (await ourEntries()).length;
    const valid = JSON.stringify(body());
    for (const text of [
      "{",
      "",
      "dataset_id=x&version=1.0.0",
      `${valid}}`,
      `${valid} trailing`,
      "{'dataset_id': 'x'}",
    ]) {
      const res = await download(text);
      await expectRefused(res, 400, "invalid_body", before);
      expect(res.json.error.message, text).toMatch(/JSON/);
    }
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonp",
      "json",
    ]) {
      const res = await download(valid, { "content-type": type });
      await expectRefused(res, 400, "invalid_body", before);
      expect(res.json.error.message, type).toContain("Content-Type: application/json");
    }
    // The same body sent as JSON is fine: the refusals above were the framing's doing.
    expectOk(await download(valid, { "content-type": "application/json; charset=utf-8" }), 201);
  });

  it("names unknown streams, including one that only another version has", async () => {
    const before = (await ourEntries()).length;
    const res = await download(body({ streams: ["cam", "thermal", "lidar"] }));
    await expectRefused(res, 400, "invalid_body", before);
    expect(res.json.error.message).toContain("thermal");
    expect(res.json.error.message).toContain("lidar");
    expect(res.json.error.message).toContain(`${datasetId}@1.0.0`);
    expect(res.json.error.message).toContain(": thermal, lidar. Its streams are: cam, depth, joints.");
  });

  it("names the episode ids that are not in the version, and only those", async () => {
    const before = (await ourEntries()).length;
    const stranger = uniqueId("nope");
    const res = await download(body({ episode_ids: [ids[0]!, extra.episode_id, stranger, hiddenEpisode, ids[1]!] }));
    await expectRefused(res, 400, "invalid_body", before);
    const message: string = res.json.error.message;
    for (const missing of [extra.episode_id, stranger, hiddenEpisode]) expect(message).toContain(missing);
    expect(message).not.toContain(ids[0]!);
    expect(message).not.toContain(ids[1]!);
    expect(message).toContain(`${datasetId}@1.0.0`);
  });

  it("refuses a scope that matches no files with 400", async () => {
    const before = (await ourEntries()).length;
    for (const scope of [
      { episode_ids: [noFiles] },
      { episode_ids: [ids[1]!], streams: ["depth"] },
      { filter: { outcome: "no-such-outcome" } },
      { filter: { environment: e(0).environment, outcome: "no-such-outcome" } },
    ]) {
      expect(expectedScope(episodes, FILES, scope).files).toEqual([]);
      const res = await download(body(scope));
      await expectRefused(res, 400, "invalid_body", before);
      expect(res.json.error.message).toMatch(/matches no files/);
    }
  });

  it("answers an unlicensed version of a visible dataset with 403 version_not_licensed naming both", async () => {
    const before = (await ourEntries()).length;
    const res = await download(body({}, "2.0.0"));
    await expectRefused(res, 403, "version_not_licensed", before);
    expect(res.json.error.message).toContain("2.0.0");
    expect(res.json.error.message).toContain(datasetId);
  });

  it("answers an invisible dataset exactly as a missing one, whatever the scope", async () => {
    const before = (await ourEntries()).length;
    const missing = uniqueId("ds");
    for (const scope of [{}, { episode_ids: [hiddenEpisode] }, { streams: ["cam"] }]) {
      const hidden = await download({ dataset_id: hiddenId, version: "1.0.0", ...scope });
      const absent = await download({ dataset_id: missing, version: "1.0.0", ...scope });
      await expectRefused(hidden, 404, "not_found", before);
      await expectRefused(absent, 404, "not_found", before);
      expectIndistinguishable(hidden, absent);
      expect(hidden.text).not.toContain(hiddenId);
      expect(hidden.text).not.toContain(hiddenEpisode);
    }
  });

  it("answers an unknown version of a visible dataset with 404", async () => {
    const before = (await ourEntries()).length;
    for (const version of ["9.9.9", "1.0", "latest"]) {
      const res = await download(body({}, version));
      await expectRefused(res, 404, "not_found", before);
    }
  });

  it("answers a bad Idempotency-Key with 400 invalid_parameter", async () => {
    const before = (await ourEntries()).length;
    for (const value of ["", "two words", "x".repeat(256), "tab\tinside", "caf\u00e9"]) {
      const res = await download(body(), { "idempotency-key": value });
      await expectRefused(res, 400, "invalid_parameter", before);
      expect(res.json.error.message).toContain("Idempotency-Key");
    }
    expectOk(await download(body(), { "idempotency-key": "x".repeat(255) }), 201);
  });

  describe("more than 10,000 files", () => {
    let bigId: string;
    const bigEpisodes = randomEpisodes(100, 305).map((ep) => ({ ...ep, streams: ["cam"] }));
    beforeAll(async () => {
      // 10,000 episode files and one version-level file: 10,001 in all.
      const files: FileLine[] = bigEpisodes.flatMap((ep) =>
        Array.from({ length: 100 }, (_, i) => ({
          path: `${ep.episode_id}/${i}.mp4`,
          episode_id: ep.episode_id,
          stream: "cam",
          size_bytes: 1,
          sha256: sha(`${ep.episode_id}${i}`),
        })),
      );
      files.push({ path: "index.json", size_bytes: 2, sha256: sha("index") });
      expect(files).toHaveLength(10_001);
      bigId = await importTestDataset([{ version: "1.0.0", episodes: bigEpisodes, files }]);
      await grant(org.id, bigId, "1.0.0");
    });

    it("refuses 10,001 files with 422 scope_too_large asking the client to split", async () => {
      const before = (await ourEntries()).length;
      const res = await download({ dataset_id: bigId, version: "1.0.0" });
      await expectRefused(res, 422, "scope_too_large", before);
      expect(res.json.error.message).toContain("10001");
      expect(res.json.error.message).toContain("10000");
      expect(res.json.error.message).toMatch(/split/i);
    });

    it("serves exactly 10,000 files", async () => {
      const res = await download({ dataset_id: bigId, version: "1.0.0", streams: ["cam"] });
      expectOk(res, 201);
      expect(res.json.file_count).toBe(10_000);
      expect(res.json.files).toHaveLength(10_000);
      expect(new Set(res.json.files.map((f: { url: string }) => f.url)).size).toBe(10_000);
      const [entry] = await disclosureRows({ id: res.json.download_id });
      expect(entry).toMatchObject({ file_count: 10_000, episode_count: 100, total_bytes: "10000" });
      expectSignedUrls(res.json, entry!.occurred_at);
    });
  });
});

describe("POST /api/v1/downloads: Idempotency-Key", () => {
  it("returns the same download with 200 on a retry, without a second entry", async () => {
    const idempotencyKey = uniqueId("idem");
    const sent = body({ episode_ids: [ids[2]!, ids[0]!], streams: ["joints"] });
    const first = await download(sent, { "idempotency-key": idempotencyKey });
    const entry = await expectDownload(first, sent, 201);
    expect(entry.idempotency_key).toBe(idempotencyKey);
    // Until signing again at the time of the retry would give other URLs.
    await untilDatabaseClockPasses(entry.occurred_at);
    // The same body with its fields in another order is the same request.
    const { dataset_id, version, ...scope } = sent;
    const retry = await download({ ...scope, version, dataset_id }, { "idempotency-key": idempotencyKey });
    expectOk(retry, 200);
    expect(retry.json).toEqual(first.json);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(await disclosureRows({ id: first.json.download_id })).toHaveLength(1);
    expect(await disclosureRows({ requestId: retry.headers.get("x-request-id")! })).toEqual([]);
    expect((await ourEntries()).filter((r) => r.idempotency_key === idempotencyKey)).toHaveLength(1);
  });

  it("answers another body under the same key with 409 idempotency_conflict", async () => {
    const idempotencyKey = uniqueId("idem");
    const first = await download(body({ streams: ["cam"] }), { "idempotency-key": idempotencyKey });
    expectOk(first, 201);
    const before = (await ourEntries()).length;
    for (const other of [
      body({ streams: ["joints"] }),
      body(),
      body({ streams: ["cam"] }, "2.0.0"),
      { ...body({ streams: ["cam"] }), dataset_id: hiddenId },
    ]) {
      const res = await download(other, { "idempotency-key": idempotencyKey });
      expectError(res, 409, "idempotency_conflict");
      expect(res.text).not.toContain("http");
    }
    expect((await ourEntries()).length).toBe(before);
    // The original is still what the key returns.
    const retry = await download(body({ streams: ["cam"] }), { "idempotency-key": idempotencyKey });
    expectOk(retry, 200);
    expect(retry.json.download_id).toBe(first.json.download_id);
  });

  it("keeps keys apart per API key, and makes a new download without one", async () => {
    const idempotencyKey = uniqueId("idem");
    const second = await createTestKey(org.id);
    const a = await download(body(), { "idempotency-key": idempotencyKey });
    const b = await download(body(), { "idempotency-key": idempotencyKey }, second.secret);
    const c = await download(body());
    const d = await download(body());
    for (const res of [a, b, c, d]) expectOk(res, 201);
    expect(new Set([a, b, c, d].map((res) => res.json.download_id)).size).toBe(4);
    const [entry] = await disclosureRows({ id: b.json.download_id });
    expect(entry!.api_key_id).toBe(second.id);
  });

  it("makes one download of concurrent requests with the same key", async () => {
    const idempotencyKey = uniqueId("idem");
    const sent = body({ filter: { outcome: episodes[4]!.outcome } });
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => download(sent, { "idempotency-key": idempotencyKey })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const created = responses.find((r) => r.status === 201)!;
    await expectDownload(created, sent, 201);
    for (const res of responses) expect(res.json).toEqual(created.json);
    expect((await ourEntries()).filter((r) => r.idempotency_key === idempotencyKey)).toHaveLength(1);
  });

  it("gives one download and one conflict to concurrent requests with the same key and different bodies", async () => {
    const idempotencyKey = uniqueId("idem");
    const [a, b] = await Promise.all([
      download(body({ streams: ["cam"] }), { "idempotency-key": idempotencyKey }),
      download(body({ streams: ["depth"] }), { "idempotency-key": idempotencyKey }),
    ]);
    expect([a!.status, b!.status].sort()).toEqual([201, 409]);
    expect((await ourEntries()).filter((r) => r.idempotency_key === idempotencyKey)).toHaveLength(1);
  });
});

describe("POST /api/v1/downloads: the disclosure log under load and at fault", () => {
  it("logs 50 simultaneous requests as 50 entries with distinct seqs, and the chain stays intact", async () => {
    const scopes: RequestedScope[] = [
      {},
      { streams: ["cam"] },
      { episode_ids: [ids[5]!] },
      { filter: { environment: episodes[6]!.environment } },
    ];
    const sent = Array.from({ length: 50 }, (_, i) => body(scopes[i % scopes.length]));
    const responses = await Promise.all(sent.map((b) => download(b)));
    for (const res of responses) expectOk(res, 201);
    const downloadIds = responses.map((r) => r.json.download_id as string);
    expect(new Set(downloadIds).size).toBe(50);
    const rows = await sql()<{ id: string; seq: string; request_id: string }[]>`
      select id, seq, request_id from disclosures where id = any(${downloadIds}::text[])`;
    expect(rows).toHaveLength(50);
    expect(new Set(rows.map((r) => r.seq)).size).toBe(50);
    expect(new Set(rows.map((r) => r.request_id))).toEqual(
      new Set(responses.map((r) => r.headers.get("x-request-id"))),
    );
    // Entries made at once are still each the full record of their own request.
    for (const i of [0, 1, 2, 3, 49]) await expectDownload(responses[i]!, sent[i]!);
    const report = await verifyChain(operatorCtx());
    expect(report).toMatchObject({ intact: true });
    expect(report.count).toBeGreaterThanOrEqual(Math.max(...rows.map((r) => Number(r.seq))));
  });

  it("answers a failure at commit with 503, no URL, and no entry", async () => {
    // A dataset of this test's own, so that the injected fault touches no other test's appends.
    const doomedEpisodes = randomEpisodes(2, 306);
    const doomed = await importTestDataset([
      {
        version: "1.0.0",
        episodes: doomedEpisodes,
        files: doomedEpisodes.map((ep) => ({
          path: `${ep.episode_id}/cam.mp4`,
          episode_id: ep.episode_id,
          stream: "cam",
          size_bytes: 7,
          sha256: sha(ep.episode_id),
        })),
      },
    ]);
    await grant(org.id, doomed, "1.0.0");
    const doomedVersion = await versionIdOf(doomed, "1.0.0");
    const name = `das_test_fail_${doomed.replace(/[^a-z0-9]/g, "_")}`;
    try {
      // Checked at commit: the request has resolved its scope and appended its entry by then.
      await sql().unsafe(`
        create function ${name}() returns trigger language plpgsql as $$
        begin
          if new.dataset_id = '${doomed}' then raise exception 'injected failure at commit'; end if;
          return null;
        end $$`);
      await sql().unsafe(`create constraint trigger ${name} after insert on disclosures
        deferrable initially deferred for each row execute function ${name}()`);
      const before = (await ourEntries()).length;
      for (const scope of [{}, { episode_ids: [doomedEpisodes[1]!.episode_id] }]) {
        const res = await download({ dataset_id: doomed, version: "1.0.0", ...scope });
        expectError(res, 503, "unavailable");
        expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
        expect(res.text).not.toContain("http");
        expect(res.text).not.toContain("X-Amz-");
        expect(res.text).not.toContain("injected");
        expect(await disclosureRows({ datasetId: doomed })).toEqual([]);
        expect(await disclosureRows({ requestId: res.json.error.request_id })).toEqual([]);
        const [orphans] = await sql()<
          { n: number }[]
        >`select count(*)::int as n from disclosure_episodes where version_id = ${doomedVersion}`;
        expect(orphans!.n).toBe(0);
      }
      expect((await ourEntries()).length).toBe(before);
    } finally {
      await sql().unsafe(`drop trigger if exists ${name} on disclosures`);
      await sql().unsafe(`drop function if exists ${name}()`);
    }
    // Without the fault the same request succeeds: the 503 was the commit's doing.
    const res = await download({ dataset_id: doomed, version: "1.0.0" });
    expectOk(res, 201);
    expect(await disclosureRows({ datasetId: doomed })).toHaveLength(1);
    expect(await verifyChain(operatorCtx())).toMatchObject({ intact: true });
  });
});

describe("POST /api/v1/downloads over HTTP, two app instances", () => {
  let servers: AppServer[] = [];

  beforeAll(async () => {
    servers = await Promise.all([startAppServer(), startAppServer()]);
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  it("logs 20 requests split across both instances as one intact chain", async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${servers[i % 2]!.url}/api/v1/downloads`, {
          method: "POST",
          headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
          body: JSON.stringify(body(i % 3 === 0 ? { streams: ["cam"] } : { episode_ids: [ids[i % 9]!] })),
        });
        return {
          status: res.status,
          requestId: res.headers.get("x-request-id"),
          json: (await res.json()) as { download_id: string },
        };
      }),
    );
    for (const res of responses) expect(res.status, JSON.stringify(res.json)).toBe(201);
    const downloadIds = responses.map((r) => r.json.download_id);
    expect(new Set(downloadIds).size).toBe(20);
    const rows = await sql()<{ id: string; seq: string; request_id: string }[]>`
      select id, seq, request_id from disclosures where id = any(${downloadIds}::text[])`;
    expect(rows).toHaveLength(20);
    expect(new Set(rows.map((r) => r.seq)).size).toBe(20);
    expect(new Set(rows.map((r) => r.request_id))).toEqual(new Set(responses.map((r) => r.requestId)));
    expect(await verifyChain(operatorCtx())).toMatchObject({ intact: true });
  });
});
