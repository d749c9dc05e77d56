import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../db/client";
import { importLeRobotVersion } from "../catalog/import/lerobot/source";
import { openLeRobotDataset } from "../lerobot/dataset";
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
import { das, disclosuresOf } from "../testing/pull-fixtures";
import { ApiClient } from "./api";
import { ORIGINALS_DIR, PROVENANCE_FILE } from "./plan";
import { describeSummary, pull, type PullSummary } from "./pull";

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
    for await (const { rows } of parquetBatches(await openParquet(path.join(dir, file))))
      out.push(...rows.map((r) => plainValue(r) as Record<string, unknown>));
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
  let keyId: string;
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
    await importLeRobotVersion(getDb().$client, {
      dir: f.root,
      datasetId,
      version: "1.0.0",
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) },
    });
    client.destroy();
    const org = await createTestOrg();
    orgId = org.id;
    await grant(org.id, datasetId, "1.0.0");
    const issued = await createTestKey(org.id);
    const key = issued.secret;
    keyId = issued.id;
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
    expect(summary.lerobot).toMatchObject({
      codebase_version: version,
      episode_indices: delivered,
      requested: failures.map(id),
      co_delivered: coDelivered,
      meta: "rewritten",
    });

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
    for (const file of f.files.filter((file) => file.episodes.some((e) => !delivered.includes(e))))
      expect(onDisk).not.toContain(file.path);

    // meta/ lists exactly the delivered episodes (v3.0: renumbered 0..k-1), and every one of them has its files; totals match.
    const listed = await listedEpisodes(dir, version);
    expect([...listed.keys()].sort((a, b) => a - b)).toEqual(renumbered ? delivered.map((_, i) => i) : delivered);
    for (const e of delivered)
      for (const file of f.files.filter((file) => file.episodes.includes(e))) expect(onDisk).toContain(file.path);
    const info = JSON.parse(readFileSync(path.join(dir, "meta/info.json"), "utf8"));
    expect(info.total_episodes).toBe(delivered.length);
    expect(info.total_frames).toBe(delivered.reduce((n, e) => n + f.episodes[e]!.length, 0));
    expect(info.total_frames).toBe([...listed.values()].reduce((a, b) => a + b, 0));
    // The version's own meta/ (every episode of the version) never reaches a subset: meta/ comes
    // rendered for the delivered episodes by the service (decision 0123), and nothing else of it is kept.
    expect(existsSync(path.join(dir, ORIGINALS_DIR, "meta"))).toBe(false);

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
      expect(await frames(dir)).toEqual(
        original.map((row, i) => ({ ...row, episode_index: delivered.indexOf(row.episode_index as number), index: i })),
      );
    } else {
      expect(summary.lerobot).toMatchObject({ loads_as_is: false, loads_with_episode_list: true });
      expect(summary.lerobot!.open_with).toContain(`episodes=[${delivered.join(", ")}]`);
      expect(await simulateLeRobotLoad(dir, delivered)).toEqual({ ok: true, frames: info.total_frames });
    }

    // The provenance names the downloads behind every file; the log disclosed the co-delivered episodes.
    const provenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(provenance).toMatchObject({
      dataset_id: datasetId,
      version: "1.0.0",
      source_format: "lerobot",
      codebase_version: version,
    });
    expect(provenance.episodes).toEqual({
      requested: failures.map(id),
      co_delivered: coDelivered,
      left_out: [],
      episode_indices: delivered,
    });
    expect(provenance.downloads.map((d: { download_id: string }) => d.download_id)).toEqual(summary.downloads);
    // Every file of the plan: the data and videos, the version's README and meta/ as rendered.
    const meta = filesUnder(dir).filter((p) => p.startsWith("meta/"));
    expect(provenance.files.map((file: { path: string }) => file.path).sort()).toEqual(
      [...onDisk, "README.md", ...meta].sort(),
    );
    // Each file of an episode came through a download, its sha256 the one the manifest (and the
    // disclosure log) has; every file is kept as fetched where stored_at says.
    const manifest = await api.manifest(datasetId, "1.0.0");
    for (const file of provenance.files as {
      path: string;
      sha256: string;
      stored_at: string;
      episode_ids: string[];
      download_id: string | null;
    }[]) {
      expect(sha256(path.join(dir, file.stored_at)), file.path).toBe(file.sha256);
      if (!file.episode_ids.length) {
        expect(file.download_id, file.path).toBeNull();
        continue;
      }
      expect(summary.downloads).toContain(file.download_id);
      expect(file.sha256, file.path).toBe(manifest.files.find((m) => m.path === file.path)!.sha256);
    }
    // Files das pull wrote itself: the renumbered data files, with what they were made from and how.
    for (const file of provenance.written as { path: string; sha256: string }[])
      expect(sha256(path.join(dir, file.path)), file.path).toBe(file.sha256);
    if (renumbered) {
      const dataFiles = onDisk.filter((p) => p.startsWith("data/"));
      expect(provenance.written.filter((w: { from: unknown }) => w.from !== null)).toEqual(
        dataFiles.map((p) => ({
          path: p,
          sha256: sha256(path.join(dir, p)),
          from: { path: `${ORIGINALS_DIR}/${p}`, sha256: sha256(path.join(f.root, p)) },
          transform: expect.objectContaining({ kind: "lerobot_v3_data_rows" }),
          change: expect.stringContaining("episode_index and index renumbered"),
        })),
      );
      let next = 0;
      expect(provenance.renumbering).toEqual({
        changed_columns: ["episode_index", "index"],
        episodes: delivered.map((e, i) => {
          const from = f.episodes.slice(0, e).reduce((n, x) => n + x.length, 0);
          const length = f.episodes[e]!.length;
          next += length;
          return {
            episode_id: id(e),
            original_episode_index: e,
            episode_index: i,
            original_dataset_from_index: from,
            original_dataset_to_index: from + length,
            dataset_from_index: next - length,
            dataset_to_index: next,
          };
        }),
      });
    } else {
      expect(provenance.renumbering).toBeNull();
      expect(provenance.written).toEqual([]);
    }
    const disclosed = (await Promise.all(summary.downloads.map(disclosureEpisodes))).flat();
    for (const e of delivered) expect(disclosed).toContain(id(e));
    // The contributor report finds the pull for an episode that only came along (v3.0), and only for what was delivered.
    const reviewer = await userOfRole("reviewer");
    const reportOf = (e: number) =>
      allRecipientsOfContributor(
        { db: getDb(), requestId: uniqueId("req"), principal: reviewer },
        `${datasetId}-op-${e}`,
      );
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
    const rewritten = await pull({
      api,
      datasetId,
      version: "1.0.0",
      dir,
      filter: { outcome: "failure" },
      stderr: sink,
    });
    expect(rewritten).toMatchObject({ failed: [], downloaded: 0, downloads: [] });
    expect(rewritten.lerobot!.renumbered).toMatchObject({ data_files_written: 1, data_files_kept: 1 });
    expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: info.total_frames });

    // A data file changed as delivered is verified where it is kept, so it is fetched again (a new download).
    writeFileSync(path.join(dir, ORIGINALS_DIR, second!), "not the delivered bytes");
    const repaired = await pull({
      api,
      datasetId,
      version: "1.0.0",
      dir,
      filter: { outcome: "failure" },
      stderr: sink,
    });
    expect(repaired).toMatchObject({ failed: [], downloaded: 1, refetched_corrupt: 1 });
    expect(repaired.lerobot!.renumbered).toMatchObject({ data_files_written: 0, data_files_kept: 2 });
    expect(sha256(path.join(dir, ORIGINALS_DIR, second!))).toBe(sha256(path.join(f.root, second!)));
    expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: info.total_frames });
    const repairedProvenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(repairedProvenance.written).toEqual(provenance.written);
    expect(repairedProvenance.downloads.map((d: { download_id: string }) => d.download_id)).toEqual([
      ...summary.downloads,
      ...repaired.downloads,
    ]);
    expect(repairedProvenance.files.find((file: { path: string }) => file.path === second).download_id).toBe(
      repaired.downloads[0],
    );
  });

  // v3.0 only: a v2.x subset keeps its own indices, as each episode has files of its own.
  if (version === "v3.0")
    it("keeps the indices and the data files in place with --keep-original-indices, and moves verified files between the layouts instead of fetching them again", async () => {
      const dir = newDir("das-lerobot-pull-");
      const delivered = [0, 1, 4, 5];
      const dataFiles = f.files
        .filter((file) => file.stream === "data" && file.episodes.every((e) => delivered.includes(e)))
        .map((file) => file.path);
      const asDelivered = (root: string) =>
        dataFiles.every((p) => sha256(path.join(root, p)) === sha256(path.join(f.root, p)));

      // As a user runs it: `das pull ... --keep-original-indices`.
      const run = await das(
        ["pull", `${datasetId}@1.0.0`, "--dir", dir, "--outcome", "failure", "--keep-original-indices", "--json"],
        env,
      );
      expect(run.code, run.stderr).toBe(0);
      const kept = JSON.parse(run.stdout) as PullSummary;
      expect(kept.failed).toEqual([]);
      expect(run.stderr).not.toContain("Open it with");
      expect(run.stderr).toContain("without --keep-original-indices");
      expect(kept.lerobot).toMatchObject({
        episode_indices: delivered,
        renumbered: null,
        loads_as_is: false,
        loads_with_episode_list: false,
        open_with: null,
      });
      expect(kept.lerobot!.note).toMatch(/renumbered 0\.\.k-1.*without --keep-original-indices/);
      expect(asDelivered(dir)).toBe(true);
      expect(existsSync(path.join(dir, ORIGINALS_DIR, "data"))).toBe(false);
      expect([...(await listedEpisodes(dir, version)).keys()].sort((a, b) => a - b)).toEqual(delivered);
      expect(await simulateLeRobotLoad(dir)).toMatchObject({ ok: false });

      // meta/ comes rendered for each layout by URL (no disclosure): only its files that differ are fetched.
      const metaShas = () =>
        new Map(filesUnder(dir, "meta").map((p) => [p, sha256(path.join(dir, p))] as [string, string]));
      const metaChanged = (before: Map<string, string>) =>
        [...metaShas()].filter(([p, sha]) => before.get(p) !== sha).length;
      const keptMeta = metaShas();

      // Renumbered in the same directory: the data files as delivered move under .das/original/, none is fetched.
      const again = await das(["pull", `${datasetId}@1.0.0`, "--dir", dir, "--outcome", "failure", "--json"], env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`data files written with the episodes renumbered 0..3`);
      expect(again.stderr).toContain(
        `Open it with: LeRobotDataset("${datasetId}", root=${JSON.stringify(path.resolve(dir))})`,
      );
      const moved = JSON.parse(again.stdout) as PullSummary;
      expect(moved).toMatchObject({ failed: [], downloads: [], downloaded: metaChanged(keptMeta) });
      expect(moved.downloaded).toBeGreaterThan(0);
      expect(moved.already_verified + moved.downloaded).toBe(moved.files);
      const movedMeta = metaShas();
      expect(moved.lerobot).toMatchObject({ loads_as_is: true, renumbered: { data_files_written: 2 } });
      expect(asDelivered(path.join(dir, ORIGINALS_DIR))).toBe(true);
      expect(await simulateLeRobotLoad(dir)).toEqual({
        ok: true,
        frames: delivered.reduce((n, e) => n + f.episodes[e]!.length, 0),
      });

      // And back: the delivered files return to their paths, the renumbered ones are gone, nothing is fetched.
      const back = await pull({
        api,
        datasetId,
        version: "1.0.0",
        dir,
        filter: { outcome: "failure" },
        keepOriginalIndices: true,
        stderr: sink,
      });
      expect(back).toMatchObject({ failed: [], downloads: [], lerobot: { renumbered: null } });
      expect(back.downloaded).toBe(metaChanged(movedMeta));
      expect(asDelivered(dir)).toBe(true);
      expect(filesUnder(path.join(dir, ORIGINALS_DIR)).filter((p) => p.startsWith("data/"))).toEqual([]);
      expect([...(await listedEpisodes(dir, version)).keys()].sort((a, b) => a - b)).toEqual(delivered);
      const provenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
      expect(provenance.renumbering).toBeNull();
      expect(
        provenance.files
          .filter((file: { path: string; stored_at: string }) => file.path.startsWith("data/"))
          .every((file: { path: string; stored_at: string }) => file.stored_at === file.path),
      ).toBe(true);
      expect(provenance.downloads.map((d: { download_id: string }) => d.download_id)).toEqual(kept.downloads);
    });

  it("with --streams, writes meta/ for the cameras pulled only, and refuses to leave out the data files", async () => {
    const [front, wrist] = ["observation.images.front", "observation.images.wrist"];
    const dir = newDir("das-lerobot-pull-");
    const summary = await pull({
      api,
      datasetId,
      version: "1.0.0",
      dir,
      filter: { outcome: "failure" },
      streams: ["data", front],
      stderr: sink,
    });
    expect(summary.failed).toEqual([]);
    const delivered = version === "v3.0" ? [0, 1, 4, 5] : failures;
    expect(summary.lerobot).toMatchObject({
      episode_indices: delivered,
      cameras: [front],
      left_out: [],
      meta: "rewritten",
    });
    expect(summary.lerobot!.note).toContain(`declares only the cameras pulled (${front})`);
    const videos = filesUnder(dir).filter((p) => p.startsWith("videos/"));
    expect(videos.length).toBeGreaterThan(0);
    for (const p of videos) expect(p).toContain(front);
    // LeRobot needs the videos of every camera info.json declares, so the wrist camera is not declared, nor in stats.json.
    const info = JSON.parse(readFileSync(path.join(dir, "meta/info.json"), "utf8"));
    expect(Object.keys(info.features)).toContain(front);
    expect(Object.keys(info.features)).not.toContain(wrist);
    expect(Object.keys(JSON.parse(readFileSync(path.join(dir, "meta/stats.json"), "utf8")))).not.toContain(wrist);
    expect(await expectConsistent(dir)).toEqual(version === "v3.0" ? [0, 1, 2, 3] : failures);
    expect(await simulateLeRobotLoad(dir, version === "v3.0" ? undefined : failures)).toEqual({
      ok: true,
      frames: info.total_frames,
    });

    // Without the data files there is no LeRobot dataset: refused before anything is requested or disclosed.
    const before = (await disclosuresOf(keyId)).length;
    const refused = newDir("das-lerobot-pull-");
    await expect(
      pull({
        api,
        datasetId,
        version: "1.0.0",
        dir: refused,
        filter: { outcome: "failure" },
        streams: [front],
        stderr: sink,
      }),
    ).rejects.toThrow(/streams must include data \(e\.g\. data,observation\.images\.front\)/);
    expect((await disclosuresOf(keyId)).length).toBe(before);
    expect(readdirSync(refused)).toEqual([]);
  });

  it("shows the version's robot type, frame rate and cameras on the portal's dataset page", async () => {
    const email = `${uniqueId("licensee")}@example.com`;
    await createUser(operatorCtx(), {
      email,
      role: "licensee",
      organizationId: orgId,
      password: "a long test password",
    });
    const cookie = await signInOverHttp(server.url, email, "a long test password");
    const page = await fetch(`${server.url}/datasets/${datasetId}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`LeRobot <!-- -->${version}`);
    for (const text of [
      "Robot type",
      "so100",
      "10 fps",
      "observation.images.front",
      "observation.images.wrist",
      "64×48",
      "h264",
    ])
      expect(html, text).toContain(text);
  });

  it("writes a subset of episodes 0..k-1 that LeRobot opens as it is, and the whole version with meta/ as delivered", async () => {
    const dir = newDir("das-lerobot-pull-");
    const summary = await pull({ api, datasetId, version: "1.0.0", dir, episodeIds: [id(0)], stderr: sink });
    expect(summary.failed).toEqual([]);
    const delivered = version === "v3.0" ? [0, 1] : [0];
    expect(summary.lerobot).toMatchObject({
      episode_indices: delivered,
      renumbered: null,
      loads_as_is: true,
      open_with: `LeRobotDataset("${datasetId}", root=${JSON.stringify(dir)})`,
    });
    // Already 0..k-1: nothing is renumbered, the data files are where LeRobot reads them, as delivered.
    expect(existsSync(path.join(dir, ORIGINALS_DIR, "data"))).toBe(false);
    for (const file of f.files.filter((file) => file.stream === "data" && file.episodes.includes(0)))
      expect(sha256(path.join(dir, file.path))).toBe(sha256(path.join(f.root, file.path)));
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

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/**
 * meta/ describes exactly what is on disk, as the importer's own reader sees the directory: every
 * episode it lists has every file (data and each camera info.json declares), no file it names holds
 * an episode it does not list, the totals agree with the episodes, and data/ holds the listed
 * episodes' frames and no others. Returns the listed episodes.
 */
async function expectConsistent(dir: string): Promise<number[]> {
  const dataset = await openLeRobotDataset(dir);
  expect(dataset.problems).toEqual([]);
  expect(await dataset.missingFiles()).toEqual([]);
  const listed = (await all(dataset.episodes())).map((e) => e.episode_index);
  for (const file of await all(dataset.files()))
    for (const range of file.episodes) expect(listed, file.path).toContain(range.episode_index);
  const info = JSON.parse(readFileSync(path.join(dir, "meta/info.json"), "utf8"));
  const rows = await frames(dir);
  expect(rows.length).toBe(info.total_frames);
  expect([...new Set(rows.map((r) => r.episode_index as number))].sort((a, b) => a - b)).toEqual(listed);
  return listed;
}

describe("das pull of a LeRobot v3.0 version whose data and videos group episodes differently", () => {
  // As LeRobot rolls files over by size: data files of 5 episodes (0-4, 5-9, 10-11), the front
  // camera's videos of 2 (0-1, 2-3, ...), the wrist camera's of 3 (0-2, 3-5, 6-8, 9-11).
  const cameras = ["observation.images.front", "observation.images.wrist"];
  const datasetId = uniqueId("lrg");
  const id = (e: number) => `${datasetId}-${String(e).padStart(6, "0")}`;
  let f: LeRobotFixture;
  let api: ApiClient;

  beforeAll(async () => {
    f = await buildLeRobotFixture(newDir("das-lerobot-src-"), {
      version: "v3.0",
      episodes: 12,
      cameras,
      episodesPerFileOf: { data: 5, [cameras[0]!]: 2, [cameras[1]!]: 3 },
      extra: (e) => ({ outcome: e === 6 ? "failure" : "success" }),
    });
    const location = storeLocation();
    const client = s3Client(location);
    await importLeRobotVersion(getDb().$client, {
      dir: f.root,
      datasetId,
      version: "1.0.0",
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) },
    });
    client.destroy();
    const org = await createTestOrg();
    await grant(org.id, datasetId, "1.0.0");
    api = new ApiClient({ baseUrl: server.url, key: (await createTestKey(org.id)).secret });
  }, 180_000);

  it("lists in meta/ only the episodes whose every file was delivered, drops the others' frames, and LeRobot opens it", async () => {
    const dir = newDir("das-lerobot-pull-");
    const summary = await pull({ api, datasetId, version: "1.0.0", dir, filter: { outcome: "failure" }, stderr: sink });
    expect(summary.failed).toEqual([]);
    // Episode 6's files: data file-001 (5-9), front file-003 (6-7), wrist file-002 (6-8). Every
    // episode in them was delivered and disclosed; only 6 and 7 have all three of their files.
    expect(summary.co_delivered_episode_ids).toEqual([5, 7, 8, 9].map(id));
    const disclosed = (await Promise.all(summary.downloads.map(disclosureEpisodes))).flat();
    for (const e of [5, 6, 7, 8, 9]) expect(disclosed).toContain(id(e));
    expect(summary.lerobot).toMatchObject({
      episode_indices: [6, 7],
      requested: [id(6)],
      co_delivered: [5, 7, 8, 9].map(id),
      loads_as_is: true,
    });
    expect(summary.lerobot!.left_out).toEqual([5, 8, 9].map(id));
    expect(summary.lerobot!.renumbered!.episodes).toEqual(
      [6, 7].map((e, i) => ({ episode_id: id(e), original_episode_index: e, episode_index: i })),
    );
    expect(summary.lerobot!.data_rewritten).toEqual({ written: 1, kept: 0, dropped_episodes: [5, 8, 9].map(id) });
    expect(await expectConsistent(dir)).toEqual([0, 1]);
    const frameCount = f.episodes[6]!.length + f.episodes[7]!.length;
    expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: frameCount });
    // No video of an episode meta/ leaves out is needed: the wrist file of 3-5 and the front file of 8-9 were never fetched.
    expect(existsSync(path.join(dir, "videos/observation.images.wrist/chunk-000/file-001.mp4"))).toBe(false);
    expect(existsSync(path.join(dir, "videos/observation.images.front/chunk-000/file-004.mp4"))).toBe(false);
    // The data file as delivered is kept, with the frames of 5 to 9, and the provenance says what was left out of the one LeRobot reads.
    expect(sha256(path.join(dir, ORIGINALS_DIR, "data/chunk-000/file-001.parquet"))).toBe(
      sha256(path.join(f.root, "data/chunk-000/file-001.parquet")),
    );
    const provenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(provenance.episodes).toEqual({
      requested: [id(6)],
      co_delivered: [5, 7, 8, 9].map(id),
      left_out: [5, 8, 9].map(id),
      episode_indices: [6, 7],
    });
    expect(
      provenance.written.find((w: { path: string }) => w.path === "data/chunk-000/file-001.parquet").change,
    ).toMatch(
      /^the frames of .*000005, .*000008, .*000009 \(not in meta\/: not every file of theirs was delivered\) left out; episode_index and index renumbered/,
    );
    expect(describeSummary(summary)).toContain(
      "3 episode(s) that came along are not in it, because not every file of theirs was delivered",
    );
  });

  it("writes a subset of episodes 0..k-1 without the frames of the others in its data file; --keep-original-indices keeps the file as delivered and opens with the episode list", async () => {
    // Episode 0's files: data file-000 (0-4), front file-000 (0-1), wrist file-000 (0-2): 0 and 1 are complete.
    const dir = newDir("das-lerobot-pull-");
    const summary = await pull({ api, datasetId, version: "1.0.0", dir, episodeIds: [id(0)], stderr: sink });
    expect(summary.failed).toEqual([]);
    expect(summary.lerobot).toMatchObject({
      episode_indices: [0, 1],
      co_delivered: [1, 2, 3, 4].map(id),
      left_out: [2, 3, 4].map(id),
      renumbered: null,
      data_rewritten: { written: 1, kept: 0, dropped_episodes: [2, 3, 4].map(id) },
      loads_as_is: true,
      missing_files: [],
    });
    expect(await expectConsistent(dir)).toEqual([0, 1]);
    const frameCount = f.episodes[0]!.length + f.episodes[1]!.length;
    expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: frameCount });
    // Again: nothing is fetched, and the data file written for the same episodes is kept as it is.
    const again = await pull({ api, datasetId, version: "1.0.0", dir, episodeIds: [id(0)], stderr: sink });
    expect(again).toMatchObject({ failed: [], downloaded: 0, downloads: [] });
    expect(again.lerobot!.data_rewritten).toMatchObject({ written: 0, kept: 1 });
    expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames: frameCount });

    const kept = newDir("das-lerobot-pull-");
    const asDelivered = await pull({
      api,
      datasetId,
      version: "1.0.0",
      dir: kept,
      episodeIds: [id(0)],
      keepOriginalIndices: true,
      stderr: sink,
    });
    expect(asDelivered.lerobot).toMatchObject({
      episode_indices: [0, 1],
      data_rewritten: null,
      loads_as_is: false,
      loads_with_episode_list: true,
      open_with: `LeRobotDataset("${datasetId}", root=${JSON.stringify(kept)}, episodes=[0, 1])`,
    });
    expect(asDelivered.lerobot!.note).toMatch(/data files also hold frames of episodes the metadata does not list/);
    expect(sha256(path.join(kept, "data/chunk-000/file-000.parquet"))).toBe(
      sha256(path.join(f.root, "data/chunk-000/file-000.parquet")),
    );
    expect(await simulateLeRobotLoad(kept, [0, 1])).toEqual({ ok: true, frames: frameCount });
  });
});

describe.each(["v2.1", "v3.0"] as const)(
  "das pull of a LeRobot %s version imported with --skip-incomplete-episodes",
  (version) => {
    // The wrist video of episode 4 is missing: v2.1 skips episode 4; v3.0 episodes 4 and 5, which share it (and their other files).
    const wrist = "observation.images.wrist";
    const datasetId = uniqueId("lrs");
    const kept = version === "v3.0" ? [0, 1, 2, 3] : [0, 1, 2, 3, 5];
    let api: ApiClient;

    beforeAll(async () => {
      const f = await buildLeRobotFixture(newDir("das-lerobot-src-"), {
        version,
        episodes: 6,
        cameras: ["observation.images.front", wrist],
        episodesPerFile: 2,
      });
      rmSync(path.join(f.root, f.files.find((file) => file.stream === wrist && file.episodes.includes(4))!.path));
      const location = storeLocation();
      const client = s3Client(location);
      const result = await importLeRobotVersion(getDb().$client, {
        dir: f.root,
        datasetId,
        version: "1.0.0",
        skipIncompleteEpisodes: true,
        upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) },
      });
      client.destroy();
      expect(result.episodes).toBe(kept.length);
      const org = await createTestOrg();
      await grant(org.id, datasetId, "1.0.0");
      api = new ApiClient({ baseUrl: server.url, key: (await createTestKey(org.id)).secret });
    }, 180_000);

    it("writes meta/ for the episodes the version holds, not the original's list of them all", async () => {
      const dir = newDir("das-lerobot-pull-");
      const summary = await pull({ api, datasetId, version: "1.0.0", dir, stderr: sink });
      expect(summary.failed).toEqual([]);
      // Every file of the version was delivered, but the version's meta/ still lists the 6 episodes of
      // the original: meta/ comes rendered for the episodes the version holds, and nothing else of it is kept.
      expect(existsSync(path.join(dir, ORIGINALS_DIR, "meta"))).toBe(false);
      expect(summary.lerobot).toMatchObject({
        episode_indices: kept,
        meta: "rewritten",
        left_out: [],
        missing_files: [],
      });
      expect(await expectConsistent(dir)).toEqual(kept);
      const frames = JSON.parse(readFileSync(path.join(dir, "meta/info.json"), "utf8")).total_frames;
      if (version === "v3.0") {
        expect(summary.lerobot).toMatchObject({
          loads_as_is: true,
          open_with: `LeRobotDataset("${datasetId}", root=${JSON.stringify(dir)})`,
        });
        expect(await simulateLeRobotLoad(dir)).toEqual({ ok: true, frames });
      } else {
        expect(summary.lerobot).toMatchObject({
          loads_as_is: false,
          loads_with_episode_list: true,
          open_with: `LeRobotDataset("${datasetId}", root=${JSON.stringify(dir)}, episodes=[${kept.join(", ")}])`,
        });
        expect(await simulateLeRobotLoad(dir, kept)).toEqual({ ok: true, frames });
      }
    });
  },
);
