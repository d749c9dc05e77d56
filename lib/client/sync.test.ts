import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../db/client";
import { importLeRobotVersion } from "../catalog/import/lerobot/source";
import { s3Client } from "../storage/client";
import { objectKey, storeLocation } from "../storage/config";
import { startAppServer, type AppServer } from "../testing/app-server";
import { createTestKey, createTestOrg, grant, operatorCtx, uniqueId } from "../testing/fixtures";
import { buildLeRobotFixture, simulateLeRobotLoad } from "../testing/lerobot-fixtures";
import { das, filesUnder, storedVersion, type StoredVersion } from "../testing/pull-fixtures";
import { withdrawEpisodes } from "../withdrawals/withdraw";
import { reviewWithdrawals } from "../withdrawals/review";
import { openParquet, parquetBatches } from "../lerobot/parquet";
import { ApiClient } from "./api";
import { PROVENANCE_FILE } from "./plan";
import { pull } from "./pull";
import { sync } from "./sync";

// `das sync` against `next start` on the build and the run's object store: a directory pulled,
// episodes withdrawn, the directory brought in line, the acknowledgement on the reviewer's screen.

let server: AppServer;
const dirs: string[] = [];
const newDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
const sink = { write: () => true };
const sql = () => getDb().$client;
const reviewer = () => ({
  ...operatorCtx(),
  principal: { kind: "operator" as const, name: "sync-test", organizationId: null },
});

beforeAll(async () => {
  server = await startAppServer();
}, 180_000);
afterAll(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("das sync of a pulled directory", () => {
  let v: StoredVersion;
  beforeAll(async () => {
    v = await storedVersion({ episodes: 5, seed: 2626, fileBytes: [1, 2000] });
  });

  it("shows what it would delete with --dry-run, then deletes exactly the withdrawn files and acknowledges", async () => {
    const dir = newDir("das-sync-");
    const env = { DAS_API_URL: server.url, DAS_API_KEY: v.key };
    const pulled = await das(["pull", `${v.datasetId}@1.0.0`, "--dir", dir], env);
    expect(pulled.code, pulled.stderr).toBe(0);
    const [gone, kept] = [v.episodes[0]!.episode_id, v.episodes.slice(1).map((e) => e.episode_id)];
    const goneFiles = v.files.filter((f) => f.episode_id === gone).map((f) => f.path);
    expect(goneFiles.length).toBe(2);

    // Nothing withdrawn yet: nothing to do.
    const idle = await das(["sync", dir], env);
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.stderr).toContain("No notice concerns");

    const withdrawal = await withdrawEpisodes(operatorCtx(), { episodeIds: [gone], reason: "consent withdrawn" });
    const dry = await das(["sync", dir, "--dry-run", "--json"], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      dry_run: true,
      withdrawn_episodes: [gone],
      deleted: goneFiles.sort(),
    });
    expect(dry.stderr).toContain("Would delete 2 file(s)");
    for (const p of goneFiles) expect(existsSync(path.join(dir, p))).toBe(true);
    const acks = async () =>
      sql()<{ deleted_paths: string[] }[]>`
        select a.deleted_paths from notice_acknowledgements a join notices n on n.id = a.notice_id
        where n.withdrawal_id = ${withdrawal.withdrawal_id}`;
    expect(await acks()).toEqual([]);

    const run = await das(["sync", dir, "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const expected = v.files.filter((f) => f.episode_id !== gone).map((f) => f.path);
    expect(filesUnder(dir)).toEqual(expected.sort());
    expect((await acks()).map((a) => a.deleted_paths)).toEqual([goneFiles.sort()]);
    const provenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(provenance.files.map((f: { path: string }) => f.path).sort()).toEqual(expected.sort());
    // The provenance keeps counts: the ids and paths (which name the episode here) went to the server only.
    expect(provenance.withdrawals[0]).toMatchObject({ episodes: 1, deleted_files: 2 });
    expect(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8")).not.toContain(gone);
    expect(
      kept.every((id) => provenance.files.some((f: { episode_ids: string[] }) => f.episode_ids.includes(id))),
    ).toBe(true);

    // On the reviewer's screen: this organisation acknowledged.
    const [reviewed] = (await reviewWithdrawals(reviewer(), { limit: 50 })).filter(
      (w) => w.withdrawal_id === withdrawal.withdrawal_id,
    );
    expect(reviewed!.recipients).toHaveLength(1);
    expect(reviewed!.recipients[0]!.acknowledged_at).not.toBeNull();
    expect(reviewed!.recipients[0]!.deleted_paths).toBe(2);

    // Again: nothing left to delete, and no second acknowledgement.
    const again = await das(["sync", dir], env);
    expect(again.code, again.stderr).toBe(0);
    expect(await acks()).toHaveLength(1);
  });
});

describe.each(["v2.1", "v3.0"] as const)("das sync of a LeRobot %s subset", (codebase) => {
  it("deletes the withdrawn episode's files and leaves a subset that loads, with meta/ for the episodes left", async () => {
    const datasetId = uniqueId("lrs");
    const id = (e: number) => `${datasetId}-${String(e).padStart(6, "0")}`;
    const f = await buildLeRobotFixture(newDir("das-sync-src-"), {
      version: codebase,
      episodes: 6,
      cameras: ["observation.images.front"],
      episodesPerFile: 2,
      chunksSize: 4,
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
    const api = new ApiClient({ baseUrl: server.url, key: (await createTestKey(org.id)).secret });
    const dir = newDir("das-sync-lerobot-");
    const pulled = await pull({ api, datasetId, version: "1.0.0", dir, stderr: sink });
    expect(pulled.failed).toEqual([]);
    expect(await simulateLeRobotLoad(dir)).toMatchObject({ ok: true });

    // Episode 2 withdrawn: in v3.0 its files also hold episode 3, which goes with them.
    await withdrawEpisodes(operatorCtx(), { episodeIds: [id(2)], reason: "consent withdrawn" });
    const result = await sync({ api, dir });
    const left = codebase === "v3.0" ? [0, 1, 4, 5] : [0, 1, 3, 4, 5];
    expect(result.withdrawn_episodes).toEqual([id(2)]);
    expect(result.also_removed).toEqual(codebase === "v3.0" ? [id(3)] : []);
    expect(result.meta).toBe("rewritten");
    expect(result.notices[0]!.acknowledgement_id).toMatch(/^ack_/);
    const info = JSON.parse(readFileSync(path.join(dir, "meta/info.json"), "utf8"));
    expect(info.total_episodes).toBe(left.length);
    const provenance = JSON.parse(readFileSync(path.join(dir, PROVENANCE_FILE), "utf8"));
    expect(provenance.episodes.episode_indices).toEqual(left);
    // No file that held episode 2 is left anywhere in the directory.
    for (const relative of filesUnder(dir).filter((p) => p.startsWith("data/") || p.startsWith("videos/")))
      expect(provenance.files.some((x: { path: string }) => x.path === relative || relative.endsWith(x.path))).toBe(
        true,
      );
    expect(provenance.files.some((x: { episode_ids: string[] }) => x.episode_ids.includes(id(2)))).toBe(false);
    for (const deleted of result.deleted) expect(existsSync(path.join(dir, deleted))).toBe(false);
    // LeRobot opens it: v3.0 as it is, its data files renumbered 0..k-1 (the originals kept under
    // .das/original/); v2.1 with the episode list, as das pull's own subsets of it.
    expect(await simulateLeRobotLoad(dir, codebase === "v3.0" ? undefined : left)).toEqual({
      ok: true,
      frames: expect.any(Number),
    });
    if (codebase === "v3.0")
      expect(provenance.renumbering.episodes.map((e: { episode_index: number }) => e.episode_index)).toEqual([
        0, 1, 2, 3,
      ]);

    // Nowhere in the directory is the withdrawn episode left: no file's bytes name its id (the
    // provenance included), and no row of any parquet or JSON Lines file, meta/ or data, as used
    // or as kept under .das/original/, is of its episode index.
    const everything = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile());
    expect(everything.some((d) => d.name === "episodes.jsonl" || d.name.endsWith(".parquet"))).toBe(true);
    // In a renumbered v3.0 directory the files LeRobot reads carry the new indices; those under .das/ the version's.
    const originalOf = new Map<number, number>(
      (provenance.renumbering?.episodes ?? []).map((e: { episode_index: number; original_episode_index: number }) => [
        e.episode_index,
        e.original_episode_index,
      ]),
    );
    const seen = new Set<number>();
    for (const d of everything) {
      const file = path.join(d.parentPath, d.name);
      const relative = path.relative(dir, file);
      expect(readFileSync(file).includes(id(2)), relative).toBe(false);
      const asKept = relative.startsWith(".das");
      const indices: number[] = [];
      if (d.name.endsWith(".parquet")) {
        const parquet = await openParquet(file);
        for await (const batch of parquetBatches(parquet, ["episode_index"]))
          for (const row of batch.rows) if (row.episode_index !== undefined) indices.push(Number(row.episode_index));
        const keyValues = JSON.stringify(parquet.metadata.key_value_metadata ?? []);
        expect(keyValues.includes(id(2)), relative).toBe(false);
      } else if (d.name.endsWith(".jsonl"))
        for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
          const row = JSON.parse(line) as { episode_index?: number };
          if (row.episode_index !== undefined) indices.push(row.episode_index);
        }
      const versionIndices = indices.map((i) => (asKept ? i : (originalOf.get(i) ?? i)));
      for (const i of versionIndices) seen.add(i);
      expect(versionIndices.includes(2), `${relative} holds rows of episode 2`).toBe(false);
    }
    expect([...seen].sort((a, b) => a - b)).toEqual(left);
    // No copy of the version's own meta/ is kept (meta/ comes rendered by the service): none to list episode 2.
    expect(existsSync(path.join(dir, ".das/original/meta"))).toBe(false);
  });
});
