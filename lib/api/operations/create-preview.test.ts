import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import type { EpisodeLine, FileLine } from "@/lib/catalog/import/records";
import { revokeLicence } from "@/lib/admin/licences";
import { verifyChain } from "@/lib/disclosures/verify";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { putObject, s3Client } from "@/lib/storage/client";
import { objectKey, presigner, storeLocation, URL_TTL_SECONDS } from "@/lib/storage/config";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import { expectError, expectIndistinguishable, expectOk } from "@/lib/testing/expect-api";
import { call, type CallResult } from "@/lib/testing/http";
import {
  disclosureEpisodes,
  disclosureRows,
  expectSignedUrls,
  failAtCommit,
  versionIdOf,
} from "@/lib/testing/downloads";
import { POST } from "@/app/api/[[...path]]/route";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const sql = () => getDb().$client;

// A real clip of the demo data, so that the store serves playable bytes and byte ranges of them.
const CLIP = readFileSync(path.join(PROJECT_ROOT, "lib/dev/demo/clips/bars-h264.mp4"));

// Version 1.0.0: episodes with two cameras and joint states, one with joint states only; 2.0.0 (not
// licensed to the key) holds the same episodes.
const episodes: EpisodeLine[] = randomEpisodes(4, 401).map((e, i) => ({
  ...e,
  streams: i === 3 ? ["joints"] : ["wrist_cam", "head_cam", "joints"],
}));
const [withVideo, second, third, noVideo] = episodes.map((e) => e.episode_id) as [string, string, string, string];
const FILES: FileLine[] = [
  { path: "README.md", size_bytes: 10, sha256: sha("readme") },
  ...episodes.flatMap((e) =>
    e.streams.map((stream) => ({
      path: `episodes/${e.episode_id}/${stream}.${stream === "joints" ? "parquet" : "mp4"}`,
      episode_id: e.episode_id,
      stream,
      size_bytes: stream === "joints" ? 777 : CLIP.length,
      sha256: stream === "joints" ? sha(e.episode_id) : sha(CLIP.toString("latin1")),
    })),
  ),
];

let org: { id: string };
let key: { id: string; secret: string };
let licenceId: string;
let datasetId: string;
let versionId: number;
let hiddenEpisode: string;

beforeAll(async () => {
  org = await createTestOrg();
  key = await createTestKey(org.id);
  datasetId = await importTestDataset([
    { version: "1.0.0", episodes, files: FILES },
    { version: "2.0.0", episodes, files: FILES },
  ]);
  licenceId = (await grant(org.id, datasetId, "1.0.0")).id;
  versionId = await versionIdOf(datasetId, "1.0.0");
  const client = s3Client(storeLocation());
  await putObject(
    client,
    storeLocation().bucket,
    objectKey(datasetId, "1.0.0", `episodes/${withVideo}/wrist_cam.mp4`),
    CLIP,
    "video/mp4",
  );
  client.destroy();
  const hidden = randomEpisodes(1, 402).map((e) => ({ ...e, streams: ["cam"] }));
  hiddenEpisode = hidden[0]!.episode_id;
  const hiddenId = await importTestDataset([
    {
      version: "1.0.0",
      episodes: hidden,
      files: [
        { path: `${hiddenEpisode}/cam.mp4`, episode_id: hiddenEpisode, stream: "cam", size_bytes: 1, sha256: sha("h") },
      ],
    },
  ]);
  await grant((await createTestOrg()).id, hiddenId, "1.0.0");
});

const preview = (body: unknown, secret = key.secret): Promise<CallResult> =>
  call(POST, "/api/v1/previews", { method: "POST", key: secret, body });
const previewEntries = (episodeId: string) =>
  sql()<{ id: string; channel: string; expires_at: Date }[]>`
    select d.id, d.channel, d.expires_at from disclosures d join disclosure_episodes de on de.disclosure_id = d.id
    where de.episode_id = ${episodeId} and d.channel = 'preview' order by d.seq`;

describe("POST /api/v1/previews", () => {
  it("signs the episode's video streams, disclosed first as one entry on the preview channel", async () => {
    const res = await preview({ episode_id: withVideo, streams: ["head_cam", "wrist_cam"] });
    expectOk(res, 201);
    expect(Object.keys(res.json).sort()).toEqual([
      "dataset_id",
      "episode_id",
      "expires_at",
      "preview_id",
      "streams",
      "version",
    ]);
    expect(res.json).toMatchObject({ episode_id: withVideo, dataset_id: datasetId, version: "1.0.0" });
    // The log's ids begin with the millisecond they were made (lib/ids.ts, newLogId).
    expect(res.json.preview_id).toMatch(/^pv_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
    expect(Math.abs(Number.parseInt(res.json.preview_id.slice(3, 15), 16) - Date.now())).toBeLessThan(60_000);
    // In the episode's order of streams, each the whole episode of a file of its own.
    const duration = episodes[0]!.duration_s;
    expect(res.json.streams.map(({ url: _, ...s }: { url: string }) => s)).toEqual([
      { stream: "wrist_cam", media_type: "video/mp4", start_s: 0, end_s: duration },
      { stream: "head_cam", media_type: "video/mp4", start_s: 0, end_s: duration },
    ]);

    const [entry, ...more] = await disclosureRows({ id: res.json.preview_id });
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      organization_id: org.id,
      api_key_id: key.id,
      user_id: null,
      channel: "preview",
      dataset_id: datasetId,
      version: "1.0.0",
      version_id: versionId,
      licence_id: licenceId,
      episode_count: 1,
      file_count: 2,
      total_bytes: String(2 * CLIP.length),
      request_id: res.headers.get("x-request-id"),
    });
    expect(entry!.requested_scope).toEqual({ episode_ids: [withVideo], streams: ["wrist_cam", "head_cam"] });
    expect(await disclosureEpisodes(entry!.id)).toEqual([withVideo]);
    expect(res.json.expires_at).toBe(entry!.expires_at.toISOString());
    expect(entry!.expires_at.getTime() - entry!.occurred_at.getTime()).toBe(URL_TTL_SECONDS * 1000);
    expectSignedUrls(
      {
        ...res.json,
        files: res.json.streams.map((s: { stream: string; url: string }) => ({
          path: `episodes/${withVideo}/${s.stream}.mp4`,
          url: s.url,
        })),
      },
      entry!.occurred_at,
    );
    expect(await verifyChain(operatorCtx())).toMatchObject({ intact: true });
  });

  it("hands the same preview out again, same id, URLs and expiry, without a second entry, while it is valid", async () => {
    const first = await preview({ episode_id: second });
    expectOk(first, 201);
    const again = await preview({ episode_id: second });
    expectOk(again, 200);
    expect(again.json).toEqual(first.json);
    // Asking for the same streams by name is the same request; another choice of streams is another preview.
    expectOk(await preview({ episode_id: second, version: "1.0.0", streams: ["wrist_cam", "head_cam"] }), 200);
    const narrower = await preview({ episode_id: second, streams: ["wrist_cam"] });
    expectOk(narrower, 201);
    expect(narrower.json.preview_id).not.toBe(first.json.preview_id);
    expect((await previewEntries(second)).map((e) => e.id)).toEqual([first.json.preview_id, narrower.json.preview_id]);
    // Another key of the same organisation is another recipient.
    const other = await createTestKey(org.id);
    const theirs = await preview({ episode_id: second }, other.secret);
    expectOk(theirs, 201);
    expect(await previewEntries(second)).toHaveLength(3);
  });

  it("writes exactly one entry for simultaneous requests of the same preview", async () => {
    const responses = await Promise.all(Array.from({ length: 12 }, () => preview({ episode_id: third })));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(responses.map((r) => r.json.preview_id)).size).toBe(1);
    expect(new Set(responses.map((r) => JSON.stringify(r.json.streams))).size).toBe(1);
    expect(await previewEntries(third)).toHaveLength(1);
    expect(await verifyChain(operatorCtx())).toMatchObject({ intact: true });
  });

  it("serves a byte range of the file from the store through the signed URL, and refuses a URL older than 900 s", async () => {
    const res = await preview({ episode_id: withVideo, streams: ["wrist_cam"] });
    const { url } = res.json.streams[0];
    const ranged = await fetch(url, { headers: { range: "bytes=100-1123" } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 100-1123/${CLIP.length}`);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(CLIP.subarray(100, 1124));
    // The same object signed 901 s ago, as a URL of this preview would be after its lifetime.
    const key = objectKey(datasetId, "1.0.0", `episodes/${withVideo}/wrist_cam.mp4`);
    const [stale] = await presigner().presignKeys([key], {
      signingDate: new Date(Date.now() - (URL_TTL_SECONDS + 1) * 1000),
      expiresIn: URL_TTL_SECONDS,
    });
    const refused = await fetch(stale!, { headers: { range: "bytes=0-99" } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/expired/i);
  });

  it("refuses streams that are not video, or not the episode's, naming them, and an episode without video", async () => {
    for (const streams of [["joints"], ["wrist_cam", "lidar"], ["cam"]]) {
      const res = await preview({ episode_id: withVideo, streams });
      expectError(res, 400, "invalid_body");
      for (const s of streams.filter((s) => s !== "wrist_cam")) expect(res.json.error.message).toContain(s);
      expect(res.json.error.message).toContain("wrist_cam, head_cam");
    }
    const none = await preview({ episode_id: noVideo });
    expectError(none, 400, "invalid_body");
    expect(none.json.error.message).toContain("no video");
    for (const body of [
      {},
      { episode_id: "" },
      { episode_id: withVideo, streams: [] },
      { episode_id: withVideo, streams: ["a", "a"] },
      { episode_id: "a\u0000b" },
      { episode_id: withVideo, extra: 1 },
    ]) {
      expectError(await preview(body), 400, "invalid_body");
    }
    expect(await previewEntries(noVideo)).toEqual([]);
  });

  it("answers an episode outside the licences exactly as one that does not exist, and a pinned unlicensed version 403", async () => {
    const hidden = await preview({ episode_id: hiddenEpisode });
    const missing = await preview({ episode_id: uniqueId("nope") });
    expectError(hidden, 404, "not_found");
    expectError(missing, 404, "not_found");
    expectIndistinguishable(hidden, missing);
    expect(hidden.text).not.toContain(hiddenEpisode);
    const pinned = await preview({ episode_id: withVideo, version: "2.0.0" });
    expectError(pinned, 403, "version_not_licensed");
    expect(pinned.json.error.message).not.toContain("http");
    // Another organisation's key: the same 404.
    const stranger = await createTestKey((await createTestOrg()).id);
    expectIndistinguishable(await preview({ episode_id: withVideo }, stranger.secret), missing);
    expect(await previewEntries(hiddenEpisode)).toEqual([]);
  });

  it("gives no URL once the licence is revoked, not even the earlier preview's", async () => {
    const org2 = await createTestOrg();
    const key2 = await createTestKey(org2.id);
    await grant(org2.id, datasetId, "1.0.0");
    expectOk(await preview({ episode_id: withVideo }, key2.secret), 201);
    await revokeLicence(operatorCtx(), { organizationId: org2.id, datasetId, version: "1.0.0" });
    const res = await preview({ episode_id: withVideo }, key2.secret);
    expectError(res, 404, "not_found");
    expect(res.text).not.toContain("X-Amz-");
  });

  it("answers a failure at commit with 503, no URL and no entry", async () => {
    const doomedEpisodes = randomEpisodes(1, 403).map((e) => ({ ...e, streams: ["cam"] }));
    const doomedEpisode = doomedEpisodes[0]!.episode_id;
    const doomed = await importTestDataset([
      {
        version: "1.0.0",
        episodes: doomedEpisodes,
        files: [
          {
            path: `${doomedEpisode}/cam.mp4`,
            episode_id: doomedEpisode,
            stream: "cam",
            size_bytes: 7,
            sha256: sha("d"),
          },
        ],
      },
    ]);
    await grant(org.id, doomed, "1.0.0");
    await failAtCommit(doomed, async () => {
      const res = await preview({ episode_id: doomedEpisode });
      expectError(res, 503, "unavailable");
      expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
      expect(res.text).not.toContain("X-Amz-");
      expect(await disclosureRows({ datasetId: doomed })).toEqual([]);
    });
    expectOk(await preview({ episode_id: doomedEpisode }), 201);
    expect(await disclosureRows({ datasetId: doomed })).toHaveLength(1);
  });
});
