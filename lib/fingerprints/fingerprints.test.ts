import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { importLeRobotVersion } from "@/lib/catalog/import/lerobot/source";
import { filesDigest } from "@/lib/disclosures/chain";
import { verifyChain } from "@/lib/disclosures/verify";
import { getObjectBytes, s3Client } from "@/lib/storage/client";
import { objectKey, storeLocation } from "@/lib/storage/config";
import { grantLicence } from "@/lib/admin/licences";
import { createTestKey, createTestOrg, operatorCtx, uniqueId } from "@/lib/testing/fixtures";
import { expectError, expectOk } from "@/lib/testing/expect-api";
import { call } from "@/lib/testing/http";
import { buildLeRobotFixture } from "@/lib/testing/lerobot-fixtures";
import { GET, POST } from "@/app/api/[[...path]]/route";
import { parquetCells } from "@/lib/marks/cells";
import { steps32 } from "@/lib/marks/ulp";
import { BOX_BYTES, trailerToken } from "@/lib/marks/trailer";
import { copyToken, markKey } from "@/lib/marks/key";
import { fingerprintStatus, setFingerprinting } from "./admin";
import { startCopyWorker, type CopyWorker } from "./jobs";
import { traceFile } from "./trace";
import { apiKeyCaller, ctxOf, userOfRole } from "@/lib/testing/admin";

// A real LeRobot v3.0 dataset in the local store, three licences, fingerprinting turned on: the
// copy jobs (pg-boss, worked by the worker every server runs) make each licence its own copy of
// every file, and downloads, previews and manifests hand each licence its own, recorded in the log.

const sql = () => getDb().$client;
const datasetId = uniqueId("fp");
const VERSION = "1.0.0";
let root: string;
const holders: { organizationId: string; key: string; licenceId: string }[] = [];
let worker: CopyWorker | null = null;
const client = s3Client(storeLocation());

type Sha = { path: string; sha256: string; size_bytes: number };

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), "das-fingerprints-"));
  const fixture = await buildLeRobotFixture(root, { version: "v3.0", episodes: 4, episodesPerFile: 2 });
  const location = storeLocation();
  await importLeRobotVersion(sql(), {
    dir: fixture.root,
    datasetId,
    version: VERSION,
    upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, VERSION, p) },
  });
  for (let i = 0; i < 3; i++) {
    const org = await createTestOrg();
    const { id } = await grantLicence(operatorCtx(), { organizationId: org.id, datasetId, version: VERSION });
    holders.push({ organizationId: org.id, key: (await createTestKey(org.id)).secret, licenceId: id });
  }
}, 180_000);

afterAll(async () => {
  await worker?.stop();
  client.destroy();
  rmSync(root, { recursive: true, force: true });
});

const download = (key: string) =>
  call(POST, "/api/v1/downloads", { method: "POST", key, body: { dataset_id: datasetId, version: VERSION } });
const manifest = (key: string) => call(GET, `/api/v1/datasets/${datasetId}/versions/${VERSION}/manifest`, { key });
const originals = async () =>
  sql()<Sha[]>`select path, sha256, size_bytes::float8 as size_bytes from files f
    join dataset_versions v on v.id = f.version_id where v.dataset_id = ${datasetId} order by path`;
const entries = async () =>
  Number((await sql()`select count(*) from disclosures where dataset_id = ${datasetId}`)[0]!.count);

async function copiesMade(expected: number): Promise<void> {
  for (let waited = 0; waited < 120_000; waited += 250) {
    const [row] = await sql()<{ n: number }[]>`
      select count(*)::int as n from licence_copies c join dataset_versions v on v.id = c.version_id
      where v.dataset_id = ${datasetId}`;
    if (row!.n >= expected) return;
    await sleep(250);
  }
  throw new Error(`fewer than ${expected} copies made in two minutes`);
}

describe("a fingerprinted version", () => {
  it("hands out the originals before fingerprinting", async () => {
    const res = await download(holders[0]!.key);
    expectOk(res, 201);
    const files = await originals();
    expect(res.json.files.map((f: Sha) => [f.path, f.sha256])).toEqual(files.map((f) => [f.path, f.sha256]));
    const [entry] = await sql()`select files_sha256 from disclosures where id = ${res.json.download_id}`;
    expect(entry!.files_sha256).toBeNull();
  });

  it("answers 503 with Retry-After, recording nothing, while a licence's copies are being made", async () => {
    const changed = await setFingerprinting(operatorCtx(), { datasetId, version: VERSION, on: true });
    const files = await originals();
    expect(changed).toMatchObject({ fingerprinted: true, changed: true, jobs: 3 * files.length });
    const before = await entries();
    const res = await download(holders[0]!.key);
    expectError(res, 503, "unavailable");
    expect(res.headers.get("retry-after")).toBe("30");
    expect(res.json.error.message).toMatch(/fingerprinted.*still being made/);
    expectError(await manifest(holders[0]!.key), 503, "unavailable");
    expect(await entries()).toBe(before);
  });

  it("makes every licence a copy of every file, each with a sha256 of its own", async () => {
    worker = await startCopyWorker({ url: process.env.DATABASE_URL!, db: getDb(), pollingIntervalSeconds: 0.5 });
    const files = await originals();
    await copiesMade(3 * files.length);
    const status = await fingerprintStatus(operatorCtx(), { datasetId, version: VERSION });
    expect(status.licences.map((l) => l.copies)).toEqual([files.length, files.length, files.length]);
    const copies = await sql()<(Sha & { licence_id: string; object_key: string; method: string; token: string })[]>`
      select licence_id, path, sha256, size_bytes::float8 as size_bytes, object_key, method, token
      from licence_copies where licence_id = any(${holders.map((h) => h.licenceId)}) order by path, licence_id`;
    const hashes = new Set([...copies.map((c) => c.sha256), ...files.map((f) => f.sha256)]);
    expect(hashes.size).toBe(copies.length + files.length);
    for (const copy of copies) {
      const original = files.find((f) => f.path === copy.path)!;
      const bytes = await getObjectBytes(client, storeLocation().bucket, copy.object_key);
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(copy.sha256);
      expect(bytes.length).toBe(copy.size_bytes);
      const token = copyToken(markKey(process.env.APP_SECRET!, copy.licence_id), copy.path).toString("hex");
      expect(copy.token).toBe(token);
      const originalBytes = await getObjectBytes(
        client,
        storeLocation().bucket,
        objectKey(datasetId, VERSION, copy.path),
      );
      if (copy.path.endsWith(".mp4")) {
        // The original, then a box of the licence's own.
        expect(copy.method).toBe("box");
        expect(bytes.subarray(0, originalBytes.length).equals(originalBytes)).toBe(true);
        expect(bytes.length).toBe(original.size_bytes + BOX_BYTES);
        expect(trailerToken(bytes)?.toString("hex")).toBe(token);
      } else if (copy.path.endsWith(".json") || copy.path.endsWith(".jsonl") || copy.path.endsWith(".md")) {
        expect(copy.method).toBe("text");
        expect(trailerToken(bytes)?.toString("hex")).toBe(token);
        if (copy.path.endsWith(".json"))
          expect(JSON.parse(bytes.toString())).toEqual(JSON.parse(originalBytes.toString()));
        if (copy.path.endsWith(".jsonl"))
          expect(
            bytes
              .toString()
              .trimEnd()
              .split("\n")
              .map((l) => JSON.parse(l)),
          ).toEqual(
            originalBytes
              .toString()
              .trimEnd()
              .split("\n")
              .map((l) => JSON.parse(l)),
          );
      } else if (copy.path.startsWith("data/")) {
        expect(copy.method).toBe("mark");
        await expectWithinOneStep(originalBytes, bytes);
      } else {
        expect(copy.path).toMatch(/\.parquet$/);
        expect(copy.method).toBe("token");
      }
    }
  });

  it("hands each licence its own copies, and records the sha256 of the bytes that left", async () => {
    const digests = new Set<string>();
    for (const holder of holders) {
      const res = await download(holder.key);
      expectOk(res, 201);
      const copies = await sql()<Sha[]>`
        select path, sha256, size_bytes::float8 as size_bytes from licence_copies
        where licence_id = ${holder.licenceId} order by path`;
      expect(res.json.files.map((f: Sha) => [f.path, f.sha256, f.size_bytes])).toEqual(
        copies.map((c) => [c.path, c.sha256, c.size_bytes]),
      );
      for (const file of res.json.files as (Sha & { url: string })[]) {
        expect(new URL(file.url).pathname).toContain(`/copies/${holder.licenceId}/`);
        const fetched = Buffer.from(await (await fetch(file.url)).arrayBuffer());
        expect(createHash("sha256").update(fetched).digest("hex")).toBe(file.sha256);
      }
      const [entry] = await sql()`
        select files_sha256, total_bytes::float8 as total_bytes from disclosures where id = ${res.json.download_id}`;
      expect(entry!.files_sha256).toBe(filesDigest(copies));
      expect(entry!.total_bytes).toBe(copies.reduce((n, c) => n + c.size_bytes, 0));
      const recorded = await sql()<{ path: string; sha256: string }[]>`
        select path, sha256 from disclosure_files where disclosure_id = ${res.json.download_id} order by path`;
      expect(recorded).toEqual(copies.map(({ path, sha256 }) => ({ path, sha256 })));
      digests.add(entry!.files_sha256);
      // The manifest is the licence's too: what das pull verifies against.
      const listed = await manifest(holder.key);
      expectOk(listed);
      expect(listed.json.files.map((f: Sha) => [f.path, f.sha256, f.size_bytes])).toEqual(
        copies.map((c) => [c.path, c.sha256, c.size_bytes]),
      );
      expect(listed.json.total_bytes).toBe(entry!.total_bytes);
    }
    expect(digests.size).toBe(3);
    expect((await verifyChain(operatorCtx())).intact).toBe(true);
  });

  it("previews a licence's own copies of the episode's video and data", async () => {
    const holder = holders[1]!;
    const res = await call(POST, "/api/v1/previews", {
      method: "POST",
      key: holder.key,
      body: { episode_id: `${datasetId}-000001` },
    });
    expectOk(res, 201);
    for (const stream of res.json.streams as { url: string }[])
      expect(new URL(stream.url).pathname).toContain(`/copies/${holder.licenceId}/`);
    const recorded = await sql()<{ sha256: string }[]>`
      select f.sha256 from disclosure_files f where f.disclosure_id = ${res.json.preview_id}`;
    expect(recorded.length).toBe(res.json.streams.length);
  });

  it("enqueues a new licence's copies when it is granted", async () => {
    const org = await createTestOrg();
    const { id } = await grantLicence(operatorCtx(), { organizationId: org.id, datasetId, version: VERSION });
    const [jobs] = await sql()<{ n: number }[]>`
      select count(*)::int as n from pgboss.job where name = 'fingerprint-copy' and data->>'licenceId' = ${id}`;
    expect(jobs!.n).toBe((await originals()).length);
  });

  it("traces for reviewers and admins only: a licensee and an API key are refused", async () => {
    const org = holders[0]!.organizationId;
    const input = { name: "x.parquet", bytes: new Uint8Array(16) };
    for (const principal of [await userOfRole("licensee", org), await apiKeyCaller(org)])
      await expect(traceFile(ctxOf(principal), input)).rejects.toMatchObject({ code: "forbidden" });
    const reviewer = await traceFile(ctxOf(await userOfRole("reviewer")), input);
    expect(reviewer.verdict).toBe("not traced");
  });

  it("hands out the originals again once fingerprinting is off", async () => {
    await setFingerprinting(operatorCtx(), { datasetId, version: VERSION, on: false });
    const res = await download(holders[2]!.key);
    expectOk(res, 201);
    expect(res.json.files.map((f: Sha) => f.sha256)).toEqual((await originals()).map((f) => f.sha256));
  });
});

/** Every float cell of the copy within one float32 step of the original's, and a quarter of them moved. */
async function expectWithinOneStep(original: Buffer, copy: Buffer): Promise<void> {
  const a = await parquetCells(new Uint8Array(original));
  const b = await parquetCells(new Uint8Array(copy));
  let moved = 0;
  let cells = 0;
  for (const [name, column] of a.columns) {
    const other = b.columns.get(name)!;
    for (let i = 0; i < column.values.length; i++) {
      const d = steps32(column.values[i]!, other.values[i]!, 1_000_000)!;
      expect(Math.abs(d)).toBeLessThanOrEqual(1);
      if (d) moved++;
      cells++;
    }
  }
  expect(moved / cells).toBeGreaterThan(0.15);
}
