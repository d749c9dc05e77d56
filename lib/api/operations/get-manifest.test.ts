import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/[[...path]]/route";
import {
  byteOrder,
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import { call, randomIp } from "@/lib/testing/http";
import { expectError, expectIndistinguishable, expectOk } from "@/lib/testing/expect-api";
import type { FileLine } from "@/lib/catalog/import/records";
import { prng } from "@/lib/dev/demo/generate";

const manifest = (
  dataset: string,
  version: string,
  options: { query?: string; headers?: Record<string, string> } = {},
) =>
  call(GET, `/api/v1/datasets/${dataset}/versions/${version}/manifest${options.query ?? ""}`, {
    key,
    params: { id: dataset, version },
    headers: options.headers,
  });

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

let key: string;
let datasetId: string;

const episodes = randomEpisodes(3, 11);
episodes[1]!.streams = ["wrist", "cam"];
episodes[2]!.streams = ["depth"];
const [e0, e1, e2] = episodes.map((e) => e.episode_id) as [string, string, string];

// Version-level files (no episode, no stream) beside episode files; paths whose byte order
// ('-' < '.' < '/' < 'Z' < '_' < 'a') differs from a locale's, and a size beyond 32 bits.
const FILES: FileLine[] = [
  { path: "meta/info.json", size_bytes: 120, sha256: sha("info") },
  { path: `${e1}/wrist.mp4`, episode_id: e1, stream: "wrist", size_bytes: 5_000_000_000, sha256: sha("w1") },
  { path: "README.md", size_bytes: 2048, sha256: sha("readme") },
  { path: "meta-data.csv", size_bytes: 77, sha256: sha("csv") },
  { path: `${e0}/cam.mp4`, episode_id: e0, stream: "cam", size_bytes: 1_048_576, sha256: sha("c0") },
  { path: "meta.txt", size_bytes: 5, sha256: sha("txt"), media_type: "text/plain" },
  { path: `${e0}/joints.parquet`, episode_id: e0, stream: "joints", size_bytes: 40_000, sha256: sha("j0") },
  { path: `${e2}/notes.json`, episode_id: e2, size_bytes: 0, sha256: sha("n2") },
  { path: "Zeta.bin", size_bytes: 9, sha256: sha("zeta") },
  { path: "_index.jsonl", size_bytes: 11, sha256: sha("index") },
];

const MEDIA: Record<string, string> = {
  "meta/info.json": "application/json",
  [`${e1}/wrist.mp4`]: "video/mp4",
  "README.md": "application/octet-stream",
  "meta-data.csv": "text/csv",
  [`${e0}/cam.mp4`]: "video/mp4",
  "meta.txt": "text/plain",
  [`${e0}/joints.parquet`]: "application/vnd.apache.parquet",
  [`${e2}/notes.json`]: "application/json",
  "Zeta.bin": "application/octet-stream",
  "_index.jsonl": "application/x-ndjson",
};

const record = (f: FileLine) => ({
  path: f.path,
  episode_id: f.episode_id ?? null,
  episode_ids: f.episode_id ? [f.episode_id] : [],
  stream: f.stream ?? null,
  size_bytes: f.size_bytes,
  sha256: f.sha256,
  media_type:
    f.media_type ??
    MEDIA[f.path] ??
    (f.path.endsWith(".mp4") ? "video/mp4" : f.path.endsWith(".json") ? "application/json" : "?"),
});

/** More files than one database batch (2,000) and one stream chunk (500), and an exact multiple of both. */
const LARGE_COUNT = 6_000;
const largeEpisodes = randomEpisodes(40, 12);
function largeFiles(): FileLine[] {
  const random = prng(13);
  return Array.from({ length: LARGE_COUNT }, (_, i) => {
    const episode = random() < 0.8 ? largeEpisodes[Math.floor(random() * largeEpisodes.length)]! : undefined;
    const name = `${Math.floor(random() * 1e9).toString(36)}-${i}`;
    return episode
      ? {
          path: `${episode.episode_id}/${name}.mp4`,
          episode_id: episode.episode_id,
          stream: "cam",
          size_bytes: Math.floor(random() * 2e9),
          sha256: sha(name),
        }
      : { path: `shared/${name}.json`, size_bytes: Math.floor(random() * 1e6), sha256: sha(name) };
  });
}
const large = largeFiles();

beforeAll(async () => {
  const org = await createTestOrg();
  datasetId = await importTestDataset([
    { version: "1.0.0", released_at: "2025-06-30T23:59:59.5+01:00", episodes, files: FILES },
    { version: "1.1.0", episodes: episodes.slice(0, 1), files: [] },
    { version: "2.0.0", episodes, files: FILES.slice(0, 3) },
    { version: "3.0.0", episodes: largeEpisodes, files: large },
  ]);
  for (const v of ["1.0.0", "1.1.0", "3.0.0"]) await grant(org.id, datasetId, v);
  key = (await createTestKey(org.id)).secret;
});

describe("GET /api/v1/datasets/{id}/versions/{version}/manifest", () => {
  it("returns the header fields and every file in path byte order with its fields", async () => {
    const res = await manifest(datasetId, "1.0.0");
    expectOk(res);
    expect(Object.keys(res.json)).toEqual([
      "dataset_id",
      "version",
      "released_at",
      "episode_count",
      "total_bytes",
      "streams",
      "files",
    ]);
    const expectedFiles = [...FILES].sort((a, b) => byteOrder(a.path, b.path)).map(record);
    expect(expectedFiles.slice(0, 3).map((f) => f.path)).toEqual(["README.md", "Zeta.bin", "_index.jsonl"]);
    expect(res.json).toEqual({
      dataset_id: datasetId,
      version: "1.0.0",
      released_at: "2025-06-30T22:59:59.500Z",
      episode_count: 3,
      total_bytes: FILES.reduce((sum, f) => sum + f.size_bytes, 0),
      streams: ["cam", "depth", "joints", "wrist"],
      files: expectedFiles,
    });
    expect(res.json.total_bytes).toBe(5_001_090_846);
    for (const file of res.json.files)
      expect(Object.keys(file)).toEqual([
        "path",
        "episode_id",
        "episode_ids",
        "stream",
        "size_bytes",
        "sha256",
        "media_type",
      ]);
    const metaOrder = res.json.files.map((f: { path: string }) => f.path).filter((p: string) => p.startsWith("meta"));
    expect(metaOrder).toEqual(["meta-data.csv", "meta.txt", "meta/info.json"]);
  });

  it("keeps null episode_id and stream for version-level files, and a null stream for an episode file without one", async () => {
    const res = await manifest(datasetId, "1.0.0");
    const byPath = new Map(res.json.files.map((f: { path: string }) => [f.path, f]));
    expect(byPath.get("README.md")).toMatchObject({ episode_id: null, episode_ids: [], stream: null });
    expect(byPath.get(`${e2}/notes.json`)).toMatchObject({ episode_id: e2, stream: null, size_bytes: 0 });
    expect(byPath.get(`${e1}/wrist.mp4`)).toMatchObject({ episode_id: e1, stream: "wrist", size_bytes: 5_000_000_000 });
  });

  it("returns a valid document for a version without files", async () => {
    const res = await manifest(datasetId, "1.1.0");
    expectOk(res);
    expect(res.json).toMatchObject({
      version: "1.1.0",
      episode_count: 1,
      total_bytes: 0,
      streams: ["cam", "joints"],
      files: [],
    });
    expect(res.text.endsWith(`"files":[]}`)).toBe(true);
  });

  it(`streams a version of ${LARGE_COUNT} files completely, each file exactly once, in order`, async () => {
    const res = await manifest(datasetId, "3.0.0");
    expectOk(res);
    const paths: string[] = res.json.files.map((f: { path: string }) => f.path);
    expect(paths).toHaveLength(LARGE_COUNT);
    expect(new Set(paths).size).toBe(LARGE_COUNT);
    expect(res.json.files).toEqual([...large].sort((a, b) => byteOrder(a.path, b.path)).map(record));
    const sum = large.reduce((s, f) => s + f.size_bytes, 0);
    expect(sum).toBeGreaterThan(2 ** 32);
    expect(res.json.total_bytes).toBe(sum);
    expect(res.json.files.reduce((s: number, f: { size_bytes: number }) => s + f.size_bytes, 0)).toBe(
      res.json.total_bytes,
    );
    expect(res.json.episode_count).toBe(40);
  });

  it("sends the large manifest as a stream of several chunks, not one buffered body", async () => {
    const request = new Request(`http://localhost/api/v1/datasets/${datasetId}/versions/3.0.0/manifest`, {
      headers: { authorization: `Bearer ${key}`, "x-forwarded-for": randomIp() },
    });
    const response = await GET(request, { params: Promise.resolve({ id: datasetId, version: "3.0.0" }) });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let chunks = 0;
    let bytes = 0;
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      chunks++;
      bytes += part.value.byteLength;
    }
    expect(chunks).toBeGreaterThan(5);
    expect(bytes).toBeGreaterThan(LARGE_COUNT * 150);
  });

  describe("licensing", () => {
    it("answers an unlicensed version of a visible dataset with 403 version_not_licensed naming both", async () => {
      const res = await manifest(datasetId, "2.0.0");
      expectError(res, 403, "version_not_licensed");
      expect(res.json.error.message).toContain("2.0.0");
      expect(res.json.error.message).toContain(datasetId);
      expect(res.text).not.toContain("files");
    });

    it.each(["9.9.9", "1.0", "1.0.0.0", "latest", "01.0.0"])(
      "answers unknown version %s of a visible dataset with 404 not_found",
      async (version) => {
        expectError(await manifest(datasetId, version), 404, "not_found");
      },
    );

    it("answers a dataset without a licensed version exactly as a missing one", async () => {
      const stranger = await importTestDataset([
        { version: "1.0.0", episodes: randomEpisodes(1, 14), files: FILES.slice(2, 3) },
      ]);
      const hidden = await manifest(stranger, "1.0.0");
      const absent = await manifest(uniqueId("ds"), "1.0.0");
      expectError(hidden, 404, "not_found");
      expectIndistinguishable(hidden, absent);
    });
  });

  it("takes no query parameters", async () => {
    const res = await manifest(datasetId, "1.0.0", { query: "?format=csv" });
    expectError(res, 400, "invalid_parameter");
    expect(res.json.error.message).toContain("format");
  });

  it("refuses an Accept header that rules out JSON with 406", async () => {
    expectError(await manifest(datasetId, "1.0.0", { headers: { accept: "text/csv" } }), 406, "not_acceptable");
  });
});
