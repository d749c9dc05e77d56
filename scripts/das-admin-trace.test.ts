import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { importLeRobotVersion } from "@/lib/catalog/import/lerobot/source";
import { grantLicence } from "@/lib/admin/licences";
import { setFingerprinting } from "@/lib/fingerprints/admin";
import { startCopyWorker } from "@/lib/fingerprints/jobs";
import { JOB_QUEUE_SCHEMA, JOB_QUEUES } from "@/lib/db/job-queue";
import type { FileTrace } from "@/lib/fingerprints/trace";
import { s3Client } from "@/lib/storage/client";
import { objectKey, storeLocation } from "@/lib/storage/config";
import { adminCli, type CliOutput } from "@/lib/testing/admin-cli";
import { createTestKey, createTestOrg, operatorCtx, uniqueId } from "@/lib/testing/fixtures";
import { expectOk } from "@/lib/testing/expect-api";
import { call } from "@/lib/testing/http";
import { makeDueCopies } from "@/lib/testing/hub-fixtures";
import { buildLeRobotFixture } from "@/lib/testing/lerobot-fixtures";
import { runPython } from "@/lib/testing/python";
import { POST } from "@/app/api/[[...path]]/route";

// `das-admin trace` as an operator runs it, on what licensees really received: three licences'
// copies of a fingerprinted LeRobot v3.0 version downloaded through the API, changed the ways a
// leak changes them, and traced among the version's 50 licences.

const das = adminCli("admin-trace");
const scratch = das.dataDir;
const sql = () => getDb().$client;
const datasetId = uniqueId("tr");
const VERSION = "1.0.0";
const holders: { licenceId: string; key: string; dir: string; download: string }[] = [];

const trace = (args: string[]) => das.run(["trace", "--json", ...args]);

/**
 * The copy jobs of the licences whose copies this suite leaves unmade, taken off the queue: the
 * suites of a run share its database and its queue, and another suite's copy worker
 * (lib/fingerprints/fingerprints.test.ts) would otherwise make them, and spend its own time on them.
 */
async function forgetQueuedCopies(): Promise<void> {
  const holding = holders.map((h) => h.licenceId);
  await sql()`
    delete from ${sql()(`${JOB_QUEUE_SCHEMA}.job`)} where name = ${JOB_QUEUES.fingerprintCopy} and state = 'created'
      and data->>'licenceId' in (select l.id from licences l join dataset_versions v on v.id = l.version_id
                                 where v.dataset_id = ${datasetId} and not (l.id = any(${holding}::text[])))`;
}

const traced = (run: CliOutput): FileTrace[] => {
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { files: FileTrace[] }).files;
};

const TRANSFORM = `
import sys, numpy as np, pandas as pd, pyarrow as pa, pyarrow.parquet as pq
src, out = sys.argv[1], sys.argv[2]
t = pq.read_table(src)
pq.write_table(t, f"{out}/resaved.parquet")
# A careful leaker also drops the key/value metadata, and the token with it.
half = t.take(np.random.default_rng(3).permutation(t.num_rows)[: t.num_rows // 2])
pq.write_table(half.replace_schema_metadata(None), f"{out}/subset.parquet")
pd.read_parquet(src).to_csv(f"{out}/leak.csv", index=False)
`;

beforeAll(async () => {
  const root = path.join(scratch, "dataset");
  await buildLeRobotFixture(root, { version: "v3.0", episodes: 4, episodesPerFile: 2, length: () => 40 });
  const location = storeLocation();
  const client = s3Client(location);
  try {
    await importLeRobotVersion(sql(), {
      dir: root,
      datasetId,
      version: VERSION,
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, VERSION, p) },
    });
  } finally {
    client.destroy();
  }
  for (let i = 0; i < 3; i++) {
    const org = await createTestOrg();
    const { id } = await grantLicence(operatorCtx(), { organizationId: org.id, datasetId, version: VERSION });
    holders.push({ licenceId: id, key: (await createTestKey(org.id)).secret, dir: "", download: "" });
  }
  await setFingerprinting(operatorCtx(), { datasetId, version: VERSION, on: true });
  const worker = await startCopyWorker({ url: inject("databaseUrl"), db: getDb(), pollingIntervalSeconds: 0.5 });
  try {
    const [files] = await sql()`select file_count from dataset_versions where dataset_id = ${datasetId}`;
    for (;;) {
      const [made] =
        await sql()`select count(*)::int as n from licence_copies where licence_id = any(${holders.map((h) => h.licenceId)})`;
      if (made!.n >= 3 * files!.file_count) break;
      await sleep(250);
    }
  } finally {
    await worker.stop();
  }
  // 47 more licences, whose copies are never made: their marks are tested all the same.
  for (let i = 0; i < 47; i++) {
    const org = await createTestOrg();
    await grantLicence(operatorCtx(), { organizationId: org.id, datasetId, version: VERSION });
  }
  await forgetQueuedCopies();
  // Each holder downloads the version into a LeRobot-shaped directory of its own.
  for (const holder of holders) {
    const res = await call(POST, "/api/v1/downloads", {
      method: "POST",
      key: holder.key,
      body: { dataset_id: datasetId, version: VERSION },
    });
    expectOk(res, 201);
    holder.download = res.json.download_id;
    holder.dir = path.join(scratch, holder.licenceId);
    for (const file of res.json.files as { path: string; url: string }[]) {
      const target = path.join(holder.dir, file.path);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, Buffer.from(await (await fetch(file.url)).arrayBuffer()));
    }
    const out = path.join(scratch, `${holder.licenceId}-leaks`);
    mkdirSync(out);
    await runPython(TRANSFORM, [path.join(holder.dir, "data/chunk-000/file-000.parquet"), out]);
  }
}, 600_000);

describe("das-admin trace", () => {
  it("names the licence of a copy by its sha256, with the download that delivered it", async () => {
    const holder = holders[0]!;
    const [file] = traced(await trace([path.join(holder.dir, "data/chunk-000/file-000.parquet")]));
    expect(file).toMatchObject({
      verdict: "copy",
      licences: [{ licence_id: holder.licenceId, dataset_id: datasetId }],
    });
    expect(file!.licences[0]!.deliveries.map((d) => d.id)).toEqual([holder.download]);
  });

  it("names the licence of a re-saved file by the token its metadata kept", async () => {
    const holder = holders[1]!;
    const [file] = traced(await trace([path.join(scratch, `${holder.licenceId}-leaks`, "resaved.parquet")]));
    expect(file).toMatchObject({ verdict: "token", licences: [{ licence_id: holder.licenceId }] });
  });

  it("names the licence of a changed parquet file and of a CSV by its mark, and no other of the 50", async () => {
    const files = holders.flatMap((h) =>
      ["subset.parquet", "leak.csv"].map((n) => path.join(scratch, `${h.licenceId}-leaks`, n)),
    );
    const results = traced(await trace(files));
    for (const [i, result] of results.entries()) {
      const holder = holders[Math.floor(i / 2)]!;
      expect(result.verdict, result.detail).toBe("mark");
      expect(result.licences.map((l) => l.licence_id)).toEqual([holder.licenceId]);
      expect(result.licences[0]!.mark!.log10_p_value).toBeLessThan(-9);
      expect(result.licences[0]!.deliveries.map((d) => d.id)).toEqual([holder.download]);
      expect(result.comparison!.licences_tested).toBe(50);
      for (const other of result.comparison!.strongest_others) expect(other.p_value).toBeGreaterThan(0.01);
    }
  });

  it("says 'no licence' for the original rows, and 'original' for the original's bytes", async () => {
    const original = path.join(scratch, "dataset/data/chunk-000/file-000.parquet");
    const csv = path.join(scratch, "original.csv");
    await runPython("import sys, pandas as pd; pd.read_parquet(sys.argv[1]).to_csv(sys.argv[2], index=False)", [
      original,
      csv,
    ]);
    const [bytes, rows] = traced(await trace([original, csv]));
    expect(bytes!.verdict).toBe("original");
    expect(rows!.verdict).toBe("no licence");
    expect(rows!.licences).toEqual([]);
  });

  it("shows each licence's copies with dataset fingerprint, and turns fingerprinting off and on", async () => {
    const shown = await das.run(["dataset", "fingerprint", datasetId, VERSION, "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    const status = JSON.parse(shown.stdout);
    expect(status).toMatchObject({ dataset_id: datasetId, version: VERSION, fingerprinted: true });
    expect(status.licences.length).toBe(50);
    const made = status.licences.filter((l: { copies: number }) => l.copies > 0);
    expect(made.map((l: { licence_id: string }) => l.licence_id).sort()).toEqual(
      holders.map((h) => h.licenceId).sort(),
    );
    for (const l of made) expect(l.copies).toBe(status.files);
    const off = await das.run(["dataset", "fingerprint", datasetId, VERSION, "off"]);
    expect(off.stderr).toContain(`${datasetId}@${VERSION}: fingerprinting off.`);
    const on = await das.run(["dataset", "fingerprint", datasetId, VERSION, "on"]);
    // The 47 licences without copies get theirs enqueued; the three with copies, nothing.
    expect(on.stderr).toContain(`${datasetId}@${VERSION}: fingerprinting on; ${47 * status.files} copies enqueued.`);
    await forgetQueuedCopies();
    const bad = await das.run(["dataset", "fingerprint", datasetId, VERSION, "maybe"]);
    expect(bad.code).toBe(2);
  });

  it("reads a Hugging Face snapshot directory and reports each file", async () => {
    const holder = holders[2]!;
    const repo = path.join(scratch, "hub", "datasets--someone--leak");
    const snapshot = path.join(repo, "snapshots", "0123abc");
    mkdirSync(path.join(repo, "blobs"), { recursive: true });
    const names = [
      "data/chunk-000/file-001.parquet",
      "meta/info.json",
      "videos/observation.images.front/chunk-000/file-000.mp4",
    ];
    for (const name of names) {
      const bytes = readFileSync(path.join(holder.dir, name));
      const blob = createHash("sha256").update(bytes).digest("hex");
      writeFileSync(path.join(repo, "blobs", blob), bytes);
      mkdirSync(path.dirname(path.join(snapshot, name)), { recursive: true });
      const depth = name.split("/").length + 1;
      symlinkSync(`${"../".repeat(depth)}blobs/${blob}`, path.join(snapshot, name));
    }
    const results = traced(await trace([snapshot]));
    expect(results.map((r) => path.relative(snapshot, r.file)).sort()).toEqual([...names].sort());
    for (const r of results) expect(r).toMatchObject({ verdict: "copy", licences: [{ licence_id: holder.licenceId }] });
  });

  it("names the licence when a newer fingerprinted version holds the same rows", async () => {
    // The same episodes imported again as another dataset (as a later version keeping earlier
    // episodes would hold them), fingerprinted, with a licence and copies of its own: its originals
    // match the leaked rows first, and its licence's mark does not pass on them.
    const twinId = uniqueId("trtwin");
    const location = storeLocation();
    const client = s3Client(location);
    try {
      await importLeRobotVersion(sql(), {
        dir: path.join(scratch, "dataset"),
        datasetId: twinId,
        version: VERSION,
        upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(twinId, VERSION, p) },
      });
    } finally {
      client.destroy();
    }
    const org = await createTestOrg();
    await grantLicence(operatorCtx(), { organizationId: org.id, datasetId: twinId, version: VERSION });
    await setFingerprinting(operatorCtx(), { datasetId: twinId, version: VERSION, on: true });
    await makeDueCopies(twinId, VERSION);
    const holder = holders[0]!;
    const [result] = traced(await trace([path.join(scratch, `${holder.licenceId}-leaks`, "subset.parquet")]));
    expect(result!.verdict, result!.detail).toBe("mark");
    expect(result!.licences.map((l) => l.licence_id)).toEqual([holder.licenceId]);
    expect(result!.licences[0]!.dataset_id).toBe(datasetId);
  });
});
