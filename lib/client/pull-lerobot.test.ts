import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../db/client";
import { importLeRobotVersion } from "../catalog/import/lerobot/source";
import { openParquet, parquetBatches } from "../lerobot/parquet";
import { plainValue } from "../lerobot/format";
import { s3Client } from "../storage/client";
import { objectKey, storeLocation } from "../storage/config";
import { startAppServer, type AppServer } from "../testing/app-server";
import { createTestKey, createTestOrg, grant, operatorCtx, uniqueId } from "../testing/fixtures";
import { createUser } from "../admin/users";
import { signInOverHttp } from "../testing/portal-session";
import { userOfRole } from "../testing/admin";
import { recipientsOfContributor } from "../disclosures/recipients-of-contributor";
import { buildLeRobotFixture, simulateLeRobotLoad, type LeRobotFixture } from "../testing/lerobot-fixtures";
import { disclosureEpisodes } from "../testing/downloads";
import { ApiClient } from "./api";
import { ORIGINALS_DIR, PROVENANCE_FILE } from "./lerobot-pull";
import { pull } from "./pull";

// `das pull` of a version imported from a LeRobot dataset writes a LeRobot dataset of what it
// delivered: the data and video files as they are, meta/ for exactly those episodes.

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const dirs: string[] = [];
const newDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
const sink = { write: () => true };

function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      return entry.isDirectory() ? filesUnder(dir, relative) : [relative];
    })
    .sort();
}

/** The episodes meta/ lists, by index, with their lengths. */
async function listedEpisodes(dir: string, version: string): Promise<Map<number, number>> {
  const listed = new Map<number, number>();
  if (version !== "v3.0") {
    for (const line of readFileSync(path.join(dir, "meta/episodes.jsonl"), "utf8").split("\n").filter(Boolean)) {
      const record = JSON.parse(line) as { episode_index: number; length: number };
      listed.set(record.episode_index, record.length);
    }
    return listed;
  }
  for (const file of filesUnder(dir, "meta/episodes")) {
    const parquet = await openParquet(path.join(dir, file));
    for await (const { rows } of parquetBatches(parquet, ["episode_index", "length"])) {
      for (const row of rows) {
        const plain = plainValue(row) as { episode_index: number; length: number };
        listed.set(plain.episode_index, plain.length);
      }
    }
  }
  return listed;
}

let server: AppServer;
beforeAll(async () => {
  server = await startAppServer();
}, 180_000);
afterAll(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.each(["v2.1", "v3.0"] as const)("das pull of a LeRobot %s version", (version) => {
  let f: LeRobotFixture;
  let api: ApiClient;
  let orgId: string;
  const datasetId = uniqueId("lrp");
  const id = (e: number) => `${datasetId}-${String(e).padStart(6, "0")}`;
  // Failures are episodes 1 and 4; a v3.0 file holds two episodes: (0,1), (2,3), (4,5).
  const failures = [1, 4];

  beforeAll(async () => {
    f = await buildLeRobotFixture(newDir("das-lerobot-src-"), {
      version,
      episodes: 6,
      cameras: ["observation.images.front", "observation.images.wrist"],
      episodesPerFile: 2,
      chunksSize: 4,
      extra: (e) => ({ outcome: failures.includes(e) ? "failure" : "success", contributor: `${datasetId}-op-${e}` }),
      subtasks: { source: "language_persistent" },
    });
    const location = storeLocation();
    const client = s3Client(location);
    await importLeRobotVersion(getDb().$client, { dir: f.root, datasetId, version: "1.0.0", upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) } });
    client.destroy();
    const org = await createTestOrg();
    orgId = org.id;
    await grant(org.id, datasetId, "1.0.0");
    api = new ApiClient({ baseUrl: server.url, key: (await createTestKey(org.id)).secret });
  }, 180_000);

  it("writes the filtered subset's files as delivered and meta/ for exactly the delivered episodes", async () => {
    const dir = newDir("das-lerobot-pull-");
    const summary = await pull({ api, datasetId, version: "1.0.0", dir, filter: { outcome: "failure" }, stderr: sink });
    expect(summary.failed).toEqual([]);
    // v3.0: the files of 1 and 4 also hold 0 and 5, which came along and are listed too.
    const delivered = version === "v3.0" ? [0, 1, 4, 5] : failures;
    const coDelivered = delivered.filter((e) => !failures.includes(e)).map(id);
    expect(summary.co_delivered_episode_ids).toEqual(coDelivered);
    expect(summary.lerobot).toMatchObject({ codebase_version: version, episode_indices: delivered, requested: failures.map(id), co_delivered: coDelivered, meta: "rewritten" });

    // Data and video files: exactly those of the delivered episodes, byte for byte at their paths.
    const onDisk = filesUnder(dir).filter((p) => p.startsWith("data/") || p.startsWith("videos/"));
    const expected = f.files.filter((file) => file.episodes.every((e) => delivered.includes(e)));
    expect(onDisk).toEqual(expected.map((file) => file.path).sort());
    for (const p of onDisk) expect(sha256(path.join(dir, p)), p).toBe(sha256(path.join(f.root, p)));
    for (const file of f.files.filter((file) => file.episodes.some((e) => !delivered.includes(e)))) expect(onDisk).not.toContain(file.path);

    // meta/ lists exactly the delivered episodes, and every one of them has its files; totals match.
    const listed = await listedEpisodes(dir, version);
    expect([...listed.keys()].sort((a, b) => a - b)).toEqual(delivered);
    for (const e of delivered) for (const file of f.files.filter((file) => file.episodes.includes(e))) expect(onDisk).toContain(file.path);
    const info = JSON.parse(readFileSync(path.join(dir, "meta/info.json"), "utf8"));
    expect(info.total_episodes).toBe(delivered.length);
    expect(info.total_frames).toBe(delivered.reduce((n, e) => n + f.episodes[e]!.length, 0));
    expect(info.total_frames).toBe([...listed.values()].reduce((a, b) => a + b, 0));
    // The version's own meta/ is kept as delivered, where LeRobot does not look.
    for (const p of filesUnder(f.root).filter((p) => p.startsWith("meta/"))) expect(sha256(path.join(dir, ORIGINALS_DIR, p)), p).toBe(sha256(path.join(f.root, p)));

    if (version === "v3.0") {
      // Not episodes 0..k-1: LeRobot v3.0 looks episodes up by position, so it would need them renumbered.
      expect(summary.lerobot).toMatchObject({ loads_as_is: false, loads_with_episode_list: false, open_with: null });
      expect(summary.lerobot!.note).toContain("renumbered");
    } else {
      expect(summary.lerobot).toMatchObject({ loads_as_is: false, loads_with_episode_list: true });
      expect(summary.lerobot!.open_with).toContain(`episodes=[${delivered.join(", ")}]`);
      expect(await simulateLeRobotLoad(dir, delivered)).toEqual({ ok: true, frames: info.total_frames });
    }

    // The provenance names the downloads behind every file; the log disclosed the co-delivered episodes.
    const provenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(provenance).toMatchObject({ dataset_id: datasetId, version: "1.0.0", source_format: "lerobot", codebase_version: version });
    expect(provenance.episodes).toEqual({ requested: failures.map(id), co_delivered: coDelivered, episode_indices: delivered });
    expect(provenance.downloads.map((d: { download_id: string }) => d.download_id)).toEqual(summary.downloads);
    const versionFiles = filesUnder(f.root).filter((p) => !p.startsWith("data/") && !p.startsWith("videos/"));
    expect(versionFiles).toContain("README.md");
    expect(provenance.files.map((file: { path: string }) => file.path).sort()).toEqual([...onDisk, ...versionFiles].sort());
    for (const file of provenance.files) expect(summary.downloads).toContain(file.download_id);
    const disclosed = (await Promise.all(summary.downloads.map(disclosureEpisodes))).flat();
    for (const e of delivered) expect(disclosed).toContain(id(e));
    // The contributor report finds the pull for an episode that only came along (v3.0), and only for what was delivered.
    const reviewer = await userOfRole("reviewer");
    const reportOf = (e: number) => recipientsOfContributor({ db: getDb(), requestId: uniqueId("req"), principal: reviewer }, `${datasetId}-op-${e}`);
    for (const e of [0, 1, 2, 3, 4, 5]) {
      const found = (await reportOf(e)).filter((r) => summary.downloads.includes(r.download_id));
      expect(found.length > 0, `episode ${e}`).toBe(delivered.includes(e));
    }

    // Again: everything is verified on disk, nothing is fetched, meta/ and the provenance stay.
    const again = await pull({ api, datasetId, version: "1.0.0", dir, filter: { outcome: "failure" }, stderr: sink });
    expect(again).toMatchObject({ failed: [], downloaded: 0, downloads: [] });
    expect(again.lerobot!.episode_indices).toEqual(delivered);
    const kept = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(kept.downloads).toEqual(provenance.downloads);
    expect(kept.files).toEqual(provenance.files);
  });

  it("shows the version's robot type, frame rate and cameras on the portal's dataset page", async () => {
    const email = `${uniqueId("licensee")}@example.com`;
    await createUser(operatorCtx(), { email, role: "licensee", organizationId: orgId, password: "a long test password" });
    const cookie = await signInOverHttp(server.url, email, "a long test password");
    const page = await fetch(`${server.url}/datasets/${datasetId}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`LeRobot <!-- -->${version}`);
    for (const text of ["Robot type", "so100", "10 fps", "observation.images.front", "observation.images.wrist", "64×48", "h264"]) expect(html, text).toContain(text);
  });

  it("writes a subset of episodes 0..k-1 that LeRobot opens as it is, and the whole version with meta/ as delivered", async () => {
    const dir = newDir("das-lerobot-pull-");
    const summary = await pull({ api, datasetId, version: "1.0.0", dir, episodeIds: [id(0)], stderr: sink });
    expect(summary.failed).toEqual([]);
    const delivered = version === "v3.0" ? [0, 1] : [0];
    expect(summary.lerobot).toMatchObject({ episode_indices: delivered, loads_as_is: true, open_with: `LeRobotDataset("${datasetId}", root=${JSON.stringify(dir)})` });
    const info = JSON.parse(readFileSync(path.join(dir, "meta/info.json"), "utf8"));
    expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: info.total_frames });

    const whole = newDir("das-lerobot-pull-");
    const all = await pull({ api, datasetId, version: "1.0.0", dir: whole, stderr: sink });
    expect(all.failed).toEqual([]);
    expect(all.lerobot).toMatchObject({ meta: "as delivered", episode_indices: [0, 1, 2, 3, 4, 5], co_delivered: [] });
    for (const p of filesUnder(f.root)) expect(sha256(path.join(whole, p)), p).toBe(sha256(path.join(f.root, p)));
    expect(await simulateLeRobotLoad(whole)).toMatchObject({ ok: true });
    expect(statSync(path.join(whole, PROVENANCE_FILE)).isFile()).toBe(true);
  });
});
