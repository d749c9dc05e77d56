import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { localStoreCredentials, startEmbeddedDefault } from "./embedded-default";
import { putObject, s3Client } from "../storage/client";
import { BatchPresigner } from "../storage/presigner";

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "das-embedded-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe("the embedded default's local store credentials", () => {
  it("are made at random on first start, kept in the data directory with mode 0600, and the same on every later start", () => {
    const dir = scratch();
    const first = localStoreCredentials(dir);
    const file = path.join(dir, "s3-credentials");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(first);
    expect(first.accessKeyId).toMatch(/^DAS[0-9A-F]{20}$/);
    expect(first.secretAccessKey).toMatch(/^[A-Za-z0-9_-]{40}$/);
    expect(localStoreCredentials(dir)).toEqual(first);
    const other = localStoreCredentials(scratch());
    expect(other.accessKeyId).not.toBe(first.accessKeyId);
    expect(other.secretAccessKey).not.toBe(first.secretAccessKey);
  });

  it("are what the store accepts and what every start on the data directory (the app's launcher, das-admin) signs with", async () => {
    const dir = scratch();
    const saved = { ...process.env };
    // The embedded store only, on the run's database: as `das-admin` or `npm start` without S3_* set.
    for (const name of ["S3_ENDPOINT", "S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_FORCE_PATH_STYLE"])
      delete process.env[name];
    process.env.DAS_DATA_DIR = dir;
    try {
      const runtime = await startEmbeddedDefault();
      try {
        expect(runtime.embedded).toEqual({ database: false, store: true });
        const credentials = localStoreCredentials(dir);
        expect(runtime.env.S3_ACCESS_KEY_ID).toBe(credentials.accessKeyId);
        expect(runtime.env.S3_SECRET_ACCESS_KEY).toBe(credentials.secretAccessKey);
        const location = {
          endpoint: runtime.env.S3_ENDPOINT!,
          region: runtime.env.S3_REGION!,
          bucket: runtime.env.S3_BUCKET!,
          forcePathStyle: true,
          accessKeyId: runtime.env.S3_ACCESS_KEY_ID!,
          secretAccessKey: runtime.env.S3_SECRET_ACCESS_KEY!,
        };
        await putObject(s3Client(location), location.bucket, "ds/1.0.0/a.txt", Buffer.from("bytes"));
        const sign = (pair: { accessKeyId: string; secretAccessKey: string }) =>
          new BatchPresigner({ ...location, ...pair }).presignKeys(["ds/1.0.0/a.txt"], {
            signingDate: new Date(),
            expiresIn: 900,
          });
        const [signed] = await sign(credentials);
        const ok = await fetch(signed!);
        expect(ok.status).toBe(200);
        expect(await ok.text()).toBe("bytes");
        const [wellKnown] = await sign({ accessKeyId: "S3RVER", secretAccessKey: "S3RVER" });
        expect((await fetch(wellKnown!)).status).toBe(403);
      } finally {
        await runtime.stop();
      }
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });
});
