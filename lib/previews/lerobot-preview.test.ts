import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { importLeRobotVersion } from "@/lib/catalog/import/lerobot/source";
import { episodesDigest } from "@/lib/disclosures/chain";
import { verifyChain } from "@/lib/disclosures/verify";
import { s3Client } from "@/lib/storage/client";
import { objectKey, storeLocation } from "@/lib/storage/config";
import { createTestKey, createTestOrg, grant, operatorCtx, uniqueId } from "@/lib/testing/fixtures";
import { userPrincipal } from "@/lib/testing/disclosure-fixtures";
import { expectOk } from "@/lib/testing/expect-api";
import { call } from "@/lib/testing/http";
import { buildLeRobotFixture, type LeRobotFixture } from "@/lib/testing/lerobot-fixtures";
import { POST } from "@/app/api/[[...path]]/route";
import { episodeStreams } from "./episode-streams";

// A LeRobot v3.0 dataset, whose video files hold two episodes back to back: a preview of one
// episode plays only its range of the file, and discloses every episode the file holds.

const sql = () => getDb().$client;
const cameras = ["observation.images.front", "observation.images.wrist"];
let root: string;
let f: LeRobotFixture;
const datasetId = uniqueId("lr");
const id = (index: number) => `${datasetId}-${String(index).padStart(6, "0")}`;
let key: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), "das-lerobot-preview-"));
  f = await buildLeRobotFixture(root, { version: "v3.0", episodes: 4, cameras, episodesPerFile: 2 });
  const location = storeLocation();
  const client = s3Client(location);
  try {
    await importLeRobotVersion(sql(), {
      dir: f.root,
      datasetId,
      version: "1.0.0",
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) },
    });
  } finally {
    client.destroy();
  }
  const org = await createTestOrg();
  await grant(org.id, datasetId, "1.0.0");
  key = (await createTestKey(org.id)).secret;
}, 180_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

const preview = (body: unknown) => call(POST, "/api/v1/previews", { method: "POST", key, body });

describe("previewing an episode of a LeRobot v3.0 dataset", () => {
  it("gives each camera's shared file with the episode's range in it, and the data table, and discloses the episodes those files hold", async () => {
    // Episode 1 is the second of its file: it starts where episode 0 ends.
    const res = await preview({ episode_id: id(1) });
    expectOk(res, 201);
    const range = f.videoRanges.get(1)!;
    expect(range.from).toBeGreaterThan(0);
    // The data table comes with the video, so the player can plot what the robot did: its rows are
    // found by episode_index, so its range is the episode's own clock.
    expect(res.json.streams.map(({ url: _, ...s }: { url: string }) => s)).toEqual([
      {
        stream: "data",
        media_type: "application/vnd.apache.parquet",
        start_s: 0,
        end_s: expect.closeTo(range.to - range.from, 6),
      },
      ...[...cameras]
        .sort()
        .map((stream) => ({ stream, media_type: "video/mp4", start_s: range.from, end_s: range.to })),
    ]);
    expect(range.to - range.from).toBeCloseTo(f.episodes[1]!.length / f.fps, 6);

    // Whoever holds the URL can watch the whole file, episode 0 included: the entry says so.
    const files = f.files.filter((file) => file.episodes.includes(1));
    expect(files.length).toBe(cameras.length + 1);
    const held = [...new Set(files.flatMap((file) => file.episodes))].sort().map(id);
    expect(held).toEqual([id(0), id(1)]);
    const [entry] = await sql()<
      {
        requested_scope: unknown;
        episode_count: number;
        episodes_sha256: string;
        file_count: number;
        total_bytes: number;
      }[]
    >`
      select requested_scope, episode_count, episodes_sha256, file_count, total_bytes::float8 as total_bytes from disclosures where id = ${res.json.preview_id}`;
    expect(entry).toEqual({
      requested_scope: { episode_ids: [id(1)], streams: ["data", ...[...cameras].sort()] },
      episode_count: 2,
      episodes_sha256: episodesDigest(held),
      file_count: files.length,
      total_bytes: files.reduce((sum, file) => sum + readFileSync(path.join(f.root, file.path)).length, 0),
    });
    const episodes = await sql()<
      { episode_id: string }[]
    >`select episode_id from disclosure_episodes where disclosure_id = ${res.json.preview_id} order by episode_id`;
    expect(episodes.map((e) => e.episode_id)).toEqual(held);
    expect(await verifyChain(operatorCtx())).toMatchObject({ intact: true });

    // The URL serves the shared file itself, ranges and all.
    const file = files.find((candidate) => candidate.stream === res.json.streams[1].stream)!;
    const bytes = readFileSync(path.join(f.root, file.path));
    const ranged = await fetch(res.json.streams[1].url, { headers: { range: "bytes=0-99" } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(bytes.subarray(0, 100));
  });

  it("starts the first episode of a file at 0, and takes the data table alone when asked for it", async () => {
    const res = await preview({ episode_id: id(2) });
    expectOk(res, 201);
    expect(res.json.streams.map((s: { start_s: number; end_s: number }) => [s.start_s, s.end_s])).toEqual(
      [0, ...cameras].map(() => [0, expect.closeTo(f.videoRanges.get(2)!.to, 6)]),
    );
    const data = await preview({ episode_id: id(2), streams: ["data"] });
    expectOk(data, 201);
    expect(data.json.streams.map((s: { stream: string }) => s.stream)).toEqual(["data"]);
    const refused = await preview({ episode_id: id(2), streams: ["meta"] });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toContain("meta");
  });

  it("lists each camera with the codec info.json states, so that the player can name what it could not play", async () => {
    const reviewer = await userPrincipal(operatorCtx(), null, "reviewer");
    const streams = await episodeStreams(
      { db: getDb(), principal: reviewer, requestId: uniqueId("req") },
      { episodeId: id(1) },
    );
    expect(streams.map((s) => [s.stream, s.video, s.codec])).toEqual([
      ["data", false, null],
      ...[...cameras].sort().map((c) => [c, true, "h264"]),
    ]);
  });
});
