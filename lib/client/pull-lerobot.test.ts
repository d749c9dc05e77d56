import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
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
import { allRecipientsOfContributor } from "../testing/disclosure-fixtures";
import { buildLeRobotFixture, simulateLeRobotLoad, type LeRobotFixture } from "../testing/lerobot-fixtures";
import { disclosureEpisodes } from "../testing/downloads";
import { das } from "../testing/pull-fixtures";
import { ApiClient } from "./api";
import { ORIGINALS_DIR, PROVENANCE_FILE } from "./lerobot-pull";
import { pull, type PullSummary } from "./pull";

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

/** Every frame under a directory's data/ (files in path order, as LeRobot reads them), as plain values. */
async function frames(dir: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const file of filesUnder(dir, "data")) {
    for await (const { rows } of parquetBatches(await openParquet(path.join(dir, file)))) out.push(...rows.map((r) => plainValue(r) as Record<string, unknown>));
  }
  return out;
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
  let env: Record<string, string>;
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
    const key = (await createTestKey(org.id)).secret;
    api = new ApiClient({ baseUrl: server.url, key });
    env = { DAS_API_URL: server.url, DAS_API_KEY: key };
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

    // Data and video files: exactly those of the delivered episodes, at their paths. Videos are
    // byte for byte as delivered; v3.0 data files are renumbered, and kept as delivered under .das/original/.
    const renumbered = version === "v3.0";
    const onDisk = filesUnder(dir).filter((p) => p.startsWith("data/") || p.startsWith("videos/"));
    const expected = f.files.filter((file) => file.episodes.every((e) => delivered.includes(e)));
    expect(onDisk).toEqual(expected.map((file) => file.path).sort());
    for (const p of onDisk) {
      const asDelivered = renumbered && p.startsWith("data/") ? path.join(dir, ORIGINALS_DIR, p) : path.join(dir, p);
      expect(sha256(asDelivered), p).toBe(sha256(path.join(f.root, p)));
    }
    for (const file of f.files.filter((file) => file.episodes.some((e) => !delivered.includes(e)))) expect(onDisk).not.toContain(file.path);

    // meta/ lists exactly the delivered episodes (v3.0: renumbered 0..k-1), and every one of them has its files; totals match.
    const listed = await listedEpisodes(dir, version);
    expect([...listed.keys()].sort((a, b) => a - b)).toEqual(renumbered ? delivered.map((_, i) => i) : delivered);
    for (const e of delivered) for (const file of f.files.filter((file) => file.episodes.includes(e))) expect(onDisk).toContain(file.path);
    const info = JSON.parse(readFileSync(path.join(dir, "meta/info.json"), "utf8"));
    expect(info.total_episodes).toBe(delivered.length);
    expect(info.total_frames).toBe(delivered.reduce((n, e) => n + f.episodes[e]!.length, 0));
    expect(info.total_frames).toBe([...listed.values()].reduce((a, b) => a + b, 0));
    // The version's own meta/ is kept as delivered, where LeRobot does not look.
    for (const p of filesUnder(f.root).filter((p) => p.startsWith("meta/"))) expect(sha256(path.join(dir, ORIGINALS_DIR, p)), p).toBe(sha256(path.join(f.root, p)));

    if (version === "v3.0") {
      // Not episodes 0..k-1: LeRobot v3.0 looks episodes up by position, so they are renumbered 0..3 (in ascending order) and it opens as it is.
      const mapping = delivered.map((e, i) => ({ episode_id: id(e), original_episode_index: e, episode_index: i }));
      expect(summary.lerobot).toMatchObject({
        loads_as_is: true,
        open_with: `LeRobotDataset("${datasetId}", root=${JSON.stringify(dir)})`,
        renumbered: { episodes: mapping, data_files_written: 2, data_files_kept: 0 },
      });
      expect(summary.lerobot!.note).toContain("renumbered");
      expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: info.total_frames });
      // Every frame of every episode, with its values as delivered but episode_index and index.
      const original = (await frames(f.root)).filter((r) => delivered.includes(r.episode_index as number));
      expect(await frames(dir)).toEqual(original.map((row, i) => ({ ...row, episode_index: delivered.indexOf(row.episode_index as number), index: i })));
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
    // Each delivered file's sha256 is the one the manifest (and the disclosure log) has, and it is kept with it where stored_at says.
    const manifest = await api.manifest(datasetId, "1.0.0");
    for (const file of provenance.files as { path: string; sha256: string; stored_at: string }[]) {
      expect(file.sha256, file.path).toBe(manifest.files.find((m) => m.path === file.path)!.sha256);
      expect(sha256(path.join(dir, file.stored_at)), file.path).toBe(file.sha256);
    }
    // Files das pull wrote: meta/ always; the renumbered data files with what they were made from and the mapping.
    for (const file of provenance.written as { path: string; sha256: string }[]) expect(sha256(path.join(dir, file.path)), file.path).toBe(file.sha256);
    if (renumbered) {
      const dataFiles = onDisk.filter((p) => p.startsWith("data/"));
      expect(provenance.written.filter((w: { from: unknown }) => w.from !== null)).toEqual(
        dataFiles.map((p) => ({ path: p, sha256: sha256(path.join(dir, p)), from: { path: `${ORIGINALS_DIR}/${p}`, sha256: sha256(path.join(f.root, p)) }, change: expect.stringContaining("episode_index and index renumbered") })),
      );
      let next = 0;
      expect(provenance.renumbering).toEqual({
        changed_columns: ["episode_index", "index"],
        episodes: delivered.map((e, i) => {
          const from = f.episodes.slice(0, e).reduce((n, x) => n + x.length, 0);
          const length = f.episodes[e]!.length;
          next += length;
          return { episode_id: id(e), original_episode_index: e, episode_index: i, original_dataset_from_index: from, original_dataset_to_index: from + length, dataset_from_index: next - length, dataset_to_index: next };
        }),
      });
    } else {
      expect(provenance.renumbering).toBeNull();
      expect(provenance.written.every((w: { path: string }) => w.path.startsWith("meta/"))).toBe(true);
    }
    const disclosed = (await Promise.all(summary.downloads.map(disclosureEpisodes))).flat();
    for (const e of delivered) expect(disclosed).toContain(id(e));
    // The contributor report finds the pull for an episode that only came along (v3.0), and only for what was delivered.
    const reviewer = await userOfRole("reviewer");
    const reportOf = (e: number) => allRecipientsOfContributor({ db: getDb(), requestId: uniqueId("req"), principal: reviewer }, `${datasetId}-op-${e}`);
    for (const e of [0, 1, 2, 3, 4, 5]) {
      const found = (await reportOf(e)).filter((r) => summary.downloads.includes(r.download_id));
      expect(found.length > 0, `episode ${e}`).toBe(delivered.includes(e));
    }

    // Again: everything is verified on disk (the v3.0 data files as delivered under .das/original/),
    // nothing is fetched, the renumbered data files are not written again; meta/ and the provenance stay.
    const dataFiles = onDisk.filter((p) => p.startsWith("data/"));
    const written = dataFiles.map((p) => statSync(path.join(dir, p)).mtimeMs);
    const again = await pull({ api, datasetId, version: "1.0.0", dir, filter: { outcome: "failure" }, stderr: sink });
    expect(again).toMatchObject({ failed: [], downloaded: 0, downloads: [], already_verified: summary.files });
    expect(again.lerobot!.episode_indices).toEqual(delivered);
    const kept = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(kept.downloads).toEqual(provenance.downloads);
    expect(kept.files).toEqual(provenance.files);
    expect(kept.written).toEqual(provenance.written);
    if (!renumbered) return;
    expect(again.lerobot!.renumbered).toMatchObject({ data_files_written: 0, data_files_kept: 2 });
    expect(dataFiles.map((p) => statSync(path.join(dir, p)).mtimeMs)).toEqual(written);

    // A data file changed as written is written again, from the verified one as delivered: nothing is fetched.
    // (data/chunk-000/file-002.parquet holds episodes 4 and 5, renumbered 2 and 3.)
    const [, second] = dataFiles;
    writeFileSync(path.join(dir, second!), "not the written bytes");
    const rewritten = await pull({ api, datasetId, version: "1.0.0", dir, filter: { outcome: "failure" }, stderr: sink });
    expect(rewritten).toMatchObject({ failed: [], downloaded: 0, downloads: [] });
    expect(rewritten.lerobot!.renumbered).toMatchObject({ data_files_written: 1, data_files_kept: 1 });
    expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: info.total_frames });

    // A data file changed as delivered is verified where it is kept, so it is fetched again (a new download).
    writeFileSync(path.join(dir, ORIGINALS_DIR, second!), "not the delivered bytes");
    const repaired = await pull({ api, datasetId, version: "1.0.0", dir, filter: { outcome: "failure" }, stderr: sink });
    expect(repaired).toMatchObject({ failed: [], downloaded: 1, refetched_corrupt: 1 });
    expect(repaired.lerobot!.renumbered).toMatchObject({ data_files_written: 0, data_files_kept: 2 });
    expect(sha256(path.join(dir, ORIGINALS_DIR, second!))).toBe(sha256(path.join(f.root, second!)));
    expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: info.total_frames });
    const repairedProvenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(repairedProvenance.written).toEqual(provenance.written);
    expect(repairedProvenance.downloads.map((d: { download_id: string }) => d.download_id)).toEqual([...summary.downloads, ...repaired.downloads]);
    expect(repairedProvenance.files.find((file: { path: string }) => file.path === second).download_id).toBe(repaired.downloads[0]);
  });

  it.runIf(version === "v3.0")("keeps the indices and the data files in place with --keep-original-indices, and moves verified files between the layouts instead of fetching them again", async () => {
    const dir = newDir("das-lerobot-pull-");
    const delivered = [0, 1, 4, 5];
    const dataFiles = f.files.filter((file) => file.stream === "data" && file.episodes.every((e) => delivered.includes(e))).map((file) => file.path);
    const asDelivered = (root: string) => dataFiles.every((p) => sha256(path.join(root, p)) === sha256(path.join(f.root, p)));

    // As a user runs it: `das pull ... --keep-original-indices`.
    const run = await das(["pull", `${datasetId}@1.0.0`, "--dir", dir, "--outcome", "failure", "--keep-original-indices", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const kept = JSON.parse(run.stdout) as PullSummary;
    expect(kept.failed).toEqual([]);
    expect(run.stderr).not.toContain("Open it with");
    expect(run.stderr).toContain("without --keep-original-indices");
    expect(kept.lerobot).toMatchObject({ episode_indices: delivered, renumbered: null, loads_as_is: false, loads_with_episode_list: false, open_with: null });
    expect(kept.lerobot!.note).toMatch(/renumbered 0\.\.k-1.*without --keep-original-indices/);
    expect(asDelivered(dir)).toBe(true);
    expect(existsSync(path.join(dir, ORIGINALS_DIR, "data"))).toBe(false);
    expect([...(await listedEpisodes(dir, version)).keys()].sort((a, b) => a - b)).toEqual(delivered);
    expect(await simulateLeRobotLoad(dir)).toMatchObject({ ok: false });

    // Renumbered in the same directory: the data files as delivered move under .das/original/, nothing is fetched.
    const again = await das(["pull", `${datasetId}@1.0.0`, "--dir", dir, "--outcome", "failure", "--json"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`data files written with the episodes renumbered 0..3`);
    expect(again.stderr).toContain(`Open it with: LeRobotDataset("${datasetId}", root=${JSON.stringify(path.resolve(dir))})`);
    const moved = JSON.parse(again.stdout) as PullSummary;
    expect(moved).toMatchObject({ failed: [], downloaded: 0, downloads: [], already_verified: kept.files });
    expect(moved.lerobot).toMatchObject({ loads_as_is: true, renumbered: { data_files_written: 2 } });
    expect(asDelivered(path.join(dir, ORIGINALS_DIR))).toBe(true);
    expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: delivered.reduce((n, e) => n + f.episodes[e]!.length, 0) });

    // And back: the delivered files return to their paths, the renumbered ones are gone, nothing is fetched.
    const back = await pull({ api, datasetId, version: "1.0.0", dir, filter: { outcome: "failure" }, keepOriginalIndices: true, stderr: sink });
    expect(back).toMatchObject({ failed: [], downloaded: 0, downloads: [], lerobot: { renumbered: null } });
    expect(asDelivered(dir)).toBe(true);
    expect(filesUnder(path.join(dir, ORIGINALS_DIR)).filter((p) => p.startsWith("data/"))).toEqual([]);
    expect([...(await listedEpisodes(dir, version)).keys()].sort((a, b) => a - b)).toEqual(delivered);
    const provenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(provenance.renumbering).toBeNull();
    expect(provenance.files.filter((file: { path: string; stored_at: string }) => file.path.startsWith("data/")).every((file: { path: string; stored_at: string }) => file.stored_at === file.path)).toBe(true);
    expect(provenance.downloads.map((d: { download_id: string }) => d.download_id)).toEqual(kept.downloads);
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
    expect(summary.lerobot).toMatchObject({ episode_indices: delivered, renumbered: null, loads_as_is: true, open_with: `LeRobotDataset("${datasetId}", root=${JSON.stringify(dir)})` });
    // Already 0..k-1: nothing is renumbered, the data files are where LeRobot reads them, as delivered.
    expect(existsSync(path.join(dir, ORIGINALS_DIR, "data"))).toBe(false);
    for (const file of f.files.filter((file) => file.stream === "data" && file.episodes.includes(0))) expect(sha256(path.join(dir, file.path))).toBe(sha256(path.join(f.root, file.path)));
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
