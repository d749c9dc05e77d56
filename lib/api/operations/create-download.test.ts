import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestedScope } from "@/lib/db/schema";
import type { FileLine } from "@/lib/catalog/import/records";
import { getDb } from "@/lib/db/client";
import { verifyChain } from "@/lib/disclosures/verify";
import { userOfRole } from "@/lib/testing/admin";
import { allRecipientsOfContributor } from "@/lib/testing/disclosure-fixtures";
import {
  byteOrder,
  createTestKey,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import { expectOk } from "@/lib/testing/expect-api";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { disclosureEpisodes, disclosureRows, expectedScope, untilDatabaseClockPasses } from "@/lib/testing/downloads";
import {
  body,
  download,
  episodes,
  expectDownload,
  FILES,
  ids,
  key,
  noFiles,
  org,
  ourEntries,
  setUpDownloadFixture,
  sha,
  sql,
} from "@/lib/testing/create-download-fixture";

// POST /api/v1/downloads as it should go: every kind of scope against the oracle, files shared by
// several episodes, the retry under an Idempotency-Key, many requests at once, two instances.
// Its refusals are in create-download.errors.test.ts; hostile bodies and what a key may not see
// in create-download.security.test.ts.

setUpDownloadFixture();

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
});

describe("POST /api/v1/downloads: the disclosure log under load", () => {
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
