import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { FileLine } from "../catalog/import/records";
import { createTestKey, createTestOrg, grant, importTestDataset, randomEpisodes } from "../testing/fixtures";
import { call } from "../testing/http";
import { expectOk } from "../testing/expect-api";
import { disclosureRows, expectSignedUrls, postDownload } from "../testing/downloads";
import { GET as manifestGET } from "@/app/api/[[...path]]/route";
import { putObject, s3Client } from "../storage/client";
import { objectKey, presigner, storeLocation, URL_TTL_SECONDS } from "../storage/config";
import { BatchPresigner } from "../storage/presigner";
import { randomStoreCredentials, startLocalStore } from "./local-store";

// End to end against this run's local S3-compatible store (@20minutes/s3rver), which checks
// SigV4 signatures and expiry as S3 does: real bytes in, a download, the bytes out.

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

const episodes = randomEpisodes(2, 401);
const [e0, e1] = episodes.map((e) => e.episode_id) as [string, string];
// Paths a client's file names may really have: spaces, '+', parentheses, quotes, '&', '=', unicode.
const CONTENT: Record<string, Buffer> = {
  "README.md": Buffer.from("# Demo\n\nReal bytes for a real download.\n"),
  [`${e0}/cam.mp4`]: randomBytes(256 * 1024 + 17),
  [`${e0}/joints.parquet`]: randomBytes(4096),
  [`${e1}/cam (take 2) + ü & 'x'=y.mp4`]: randomBytes(1234),
  [`${e1}/joints.parquet`]: Buffer.alloc(0),
};
const STREAMS: Record<string, string> = { cam: "cam", joints: "joints" };
const FILES: FileLine[] = Object.entries(CONTENT).map(([path, bytes]) => {
  const [episode, name] = path.includes("/") ? path.split("/") : [undefined, path];
  const stream = episode ? STREAMS[name!.startsWith("cam") ? "cam" : "joints"] : undefined;
  return { path, ...(episode ? { episode_id: episode, stream } : {}), size_bytes: bytes.length, sha256: sha256(bytes) };
});

let key: string;
let datasetId: string;
let download: {
  download_id: string;
  dataset_id: string;
  version: string;
  expires_at: string;
  files: { path: string; sha256: string; size_bytes: number; url: string }[];
};
let manifest: { files: { path: string; sha256: string; size_bytes: number }[] };

beforeAll(async () => {
  const org = await createTestOrg();
  key = (await createTestKey(org.id)).secret;
  datasetId = await importTestDataset([{ version: "1.0.0", episodes, files: FILES }]);
  await grant(org.id, datasetId, "1.0.0");
  const location = storeLocation();
  const client = s3Client(location);
  for (const [path, bytes] of Object.entries(CONTENT))
    await putObject(client, location.bucket, objectKey(datasetId, "1.0.0", path), bytes);
  const res = await postDownload(key, { dataset_id: datasetId, version: "1.0.0" });
  expectOk(res, 201);
  download = res.json;
  const m = await call(manifestGET, `/api/v1/datasets/${datasetId}/versions/1.0.0/manifest`, {
    key,
    params: { id: datasetId, version: "1.0.0" },
  });
  expectOk(m);
  manifest = m.json;
});

const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());

describe("a download from the local store", () => {
  it("serves every file's bytes, matching the manifest's size and sha256", async () => {
    expect(download.files.map((f) => f.path).sort()).toEqual(Object.keys(CONTENT).sort());
    const [entry] = await disclosureRows({ id: download.download_id });
    expectSignedUrls(download, entry!.occurred_at);
    for (const file of download.files) {
      const res = await fetch(file.url);
      expect(res.status, `${file.path}: ${res.status}`).toBe(200);
      const bytes = await bytesOf(res);
      const listed = manifest.files.find((f) => f.path === file.path)!;
      expect(bytes.equals(CONTENT[file.path]!), file.path).toBe(true);
      expect(bytes.length).toBe(listed.size_bytes);
      expect(sha256(bytes)).toBe(listed.sha256);
      expect(file.sha256).toBe(listed.sha256);
    }
  });

  it("refuses the URL with one character of the signature changed", async () => {
    const file = download.files.find((f) => f.path === `${e0}/cam.mp4`)!;
    const url = new URL(file.url);
    const signature = url.searchParams.get("X-Amz-Signature")!;
    for (const at of [0, 31, 63]) {
      const changed = signature.slice(0, at) + (signature[at] === "0" ? "1" : "0") + signature.slice(at + 1);
      expect(changed).not.toBe(signature);
      const tampered = file.url.replace(`X-Amz-Signature=${signature}`, `X-Amz-Signature=${changed}`);
      const res = await fetch(tampered);
      expect(res.status, tampered).toBe(403);
      expect(await res.text()).not.toContain(CONTENT[file.path]!.subarray(0, 16).toString("latin1"));
    }
    // The untouched URL still works: the refusals were the signature's doing.
    expect((await fetch(file.url)).status).toBe(200);
  });

  it("refuses a URL re-pointed at another file", async () => {
    const [a, b] = [
      download.files.find((f) => f.path === `${e0}/joints.parquet`)!,
      download.files.find((f) => f.path === "README.md")!,
    ];
    const repointed = new URL(a.url);
    repointed.pathname = new URL(b.url).pathname;
    const res = await fetch(repointed);
    expect(res.status).toBe(403);
    expect(await res.text()).not.toContain("Real bytes");
    // So is a URL for a file outside the download, of a key the store holds.
    const other = new URL(a.url);
    other.pathname = other.pathname.replace(`/${datasetId}/`, `/${datasetId}-other/`);
    expect((await fetch(other)).status).toBe(403);
  });

  it("refuses a URL signed 901 s ago, and serves one signed 880 s ago", async () => {
    const path = `${e1}/cam (take 2) + ü & 'x'=y.mp4`;
    const keyOf = objectKey(datasetId, "1.0.0", path);
    const [stale] = await presigner().presignKeys([keyOf], {
      signingDate: new Date(Date.now() - 901_000),
      expiresIn: URL_TTL_SECONDS,
    });
    const res = await fetch(stale!);
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/expired/i);
    const [fresh] = await presigner().presignKeys([keyOf], {
      signingDate: new Date(Date.now() - 880_000),
      expiresIn: URL_TTL_SECONDS,
    });
    const ok = await fetch(fresh!);
    expect(ok.status).toBe(200);
    expect((await bytesOf(ok)).equals(CONTENT[path]!)).toBe(true);
  });

  it("refuses the object without a signature, as a private S3 bucket does", async () => {
    const url = new URL(download.files[0]!.url);
    const bare = await fetch(`${url.origin}${url.pathname}`);
    expect(bare.status).toBe(403);
    expect(await bare.text()).toContain("<Code>AccessDenied</Code>");
    // Without its signature parameter a presigned URL is malformed: S3 answers 400 for that.
    url.searchParams.delete("X-Amz-Signature");
    const unsigned = await fetch(url);
    expect(unsigned.status).toBe(400);
    expect(await unsigned.text()).toContain("<Error>");
  });
});

describe("the local store's key pair", () => {
  // s3rver's built-in pair, printed in its documentation: any local process could sign with it.
  const WELL_KNOWN = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

  it("refuses a URL or an upload signed with s3rver's well-known pair, and serves the app's URL", async () => {
    const location = storeLocation();
    expect(location.accessKeyId).not.toBe(WELL_KNOWN.accessKeyId);
    expect(location.secretAccessKey).not.toBe(WELL_KNOWN.secretAccessKey);
    const file = download.files.find((f) => f.path === "README.md")!;
    const [forged] = await new BatchPresigner({ ...location, ...WELL_KNOWN }).presignKeys(
      [objectKey(datasetId, "1.0.0", file.path)],
      {
        signingDate: new Date(),
        expiresIn: URL_TTL_SECONDS,
      },
    );
    const refused = await fetch(forged!);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("<Code>InvalidAccessKeyId</Code>");
    await expect(
      putObject(
        s3Client({ ...location, ...WELL_KNOWN }),
        location.bucket,
        objectKey(datasetId, "1.0.0", "README.md"),
        Buffer.from("overwritten"),
      ),
    ).rejects.toMatchObject({
      $metadata: { httpStatusCode: 403 },
    });
    const served = await fetch(file.url);
    expect(served.status).toBe(200);
    expect((await bytesOf(served)).equals(CONTENT["README.md"]!)).toBe(true);
  });
});

describe("local stores started on one directory at once", () => {
  it("all start, and a running one answers every CORS preflight meanwhile", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "das-store-"));
    const credentials = randomStoreCredentials();
    const first = await startLocalStore(dir, credentials);
    const preflight = () =>
      fetch(`${first.location.endpoint}/${first.location.bucket}/x`, {
        method: "OPTIONS",
        headers: { Origin: "http://portal.example", "Access-Control-Request-Method": "GET" },
      });
    try {
      for (let round = 0; round < 3; round++) {
        const [others, answers] = await Promise.all([
          Promise.allSettled(Array.from({ length: 8 }, () => startLocalStore(dir, credentials))),
          Promise.all(Array.from({ length: 24 }, preflight)),
        ]);
        for (const other of others) if (other.status === "fulfilled") await other.value.stop();
        expect(others.filter((o) => o.status === "rejected")).toEqual([]);
        for (const answer of answers) {
          expect(answer.status).toBe(200);
          expect(answer.headers.get("access-control-allow-origin")).toBe("*");
        }
      }
      expect(readdirSync(dir)).toEqual([first.location.bucket]);
    } finally {
      await first.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
