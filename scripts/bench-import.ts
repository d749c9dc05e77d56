// npm run bench:import [-- --episodes 100000 --upload-episodes 150 --file-mib 2 --small-files 100000 --steps ...]
// In one run (own embedded PostgreSQL and local store under .data/bench):
// 1. imports generated LeRobot v3.0 datasets of 10,000 and 100,000 episodes (metadata at scale,
//    placeholder data and video files: hashed, not uploaded) and reports time, episodes/s and the
//    importing process's peak RSS after each (flat memory: the second is not ten times the first);
// 2. uploads a LeRobot v2.1 dataset of real bytes (files of a few MiB, as its episodes' videos
//    are) with `--upload`, next to a raw PutObject loop over the same files with the same
//    concurrency in the same run;
// 3. uploads one file large enough for a multipart upload, next to one raw PutObject of it;
// 4. imports a LeRobot v2.1 dataset with 10,000 and then 100,000 files of 64 bytes beside its
//    episodes (each file a row of its own, hashed): the second takes ten times the first, no more.
// `--steps scale,upload,small-files` runs some of them (default all).
// Prints a table, then one JSON line (the last line of stdout).
import { spawn } from "node:child_process";
import { mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT, startEmbeddedDefault } from "@/lib/dev/embedded-default";

const { values } = parseArgs({
  options: {
    episodes: { type: "string", default: "100000" },
    "upload-episodes": { type: "string", default: "150" },
    "file-mib": { type: "string", default: "2" },
    concurrency: { type: "string", default: "8" },
    "small-files": { type: "string", default: "100000" },
    steps: { type: "string", default: "scale,upload,small-files" },
  },
});
const SMALL_FILES = Number(values["small-files"]);
const STEPS = new Set(values.steps.split(","));
const EPISODES = Number(values.episodes);
const UPLOAD_EPISODES = Number(values["upload-episodes"]);
const FILE_BYTES = Math.round(Number(values["file-mib"]) * 1024 * 1024);
const CONCURRENCY = Number(values.concurrency);
const BIG_FILE_BYTES = 96 * 1024 * 1024;
const PASSES = 3;
const mb = (bytes: number) => bytes / 1e6;

process.env.DAS_DATA_DIR ??= ".data/bench";
const runtime = await startEmbeddedDefault();
Object.assign(process.env, runtime.env);
const { createDb } = await import("@/lib/db/client");
const { importLeRobotVersion } = await import("@/lib/catalog/import/lerobot/source");
const { s3Client } = await import("@/lib/storage/client");
const { objectKey, storeLocation } = await import("@/lib/storage/config");
const { DeleteObjectCommand, PutObjectCommand } = await import("@aws-sdk/client-s3");
const { fileUploader } = await import("@/lib/catalog/import/upload");
const { progress, table } = await import("./bench/common");

const db = createDb(runtime.env.DATABASE_URL!, { max: 4 });
const sql = db.$client;
const run = Date.now().toString(36);
const scratch = mkdtempSync(path.join(tmpdir(), "das-bench-import-"));
const peakRssMiB = () => Math.round(process.resourceUsage().maxRSS / 1024);

/** The generator in a process of its own, so its memory is not counted as the import's. */
function generate(dir: string, version: "v3.0" | "v2.1", episodes: number, bytes?: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "scripts/bench/generate-lerobot.ts",
        dir,
        version,
        String(episodes),
        ...(bytes ? [String(bytes)] : []),
      ],
      { cwd: PROJECT_ROOT, stdio: ["ignore", "ignore", "inherit"] },
    );
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`the generator exited with ${code}`))));
  });
}

async function filesOf(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await filesOf(dir, relative)));
    else out.push(relative);
  }
  return out;
}

const rows: Record<string, string | number>[] = [];
const result: Record<string, number> = {};
try {
  // 1. Metadata at scale.
  for (const episodes of STEPS.has("scale") ? [EPISODES / 10, EPISODES] : []) {
    const dir = path.join(scratch, `v30-${episodes}`);
    progress(`generating a LeRobot v3.0 dataset of ${episodes} episodes`);
    await generate(dir, "v3.0", episodes);
    const datasetId = `bench-lerobot-${run}-${episodes}`;
    progress(`importing ${datasetId}`);
    const started = process.hrtime.bigint();
    const imported = await importLeRobotVersion(sql, { dir, datasetId, version: "1.0.0" });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (imported.status !== "imported" || imported.episodes !== episodes)
      throw new Error(`import of ${episodes} episodes: ${JSON.stringify(imported).slice(0, 300)}`);
    const rss = peakRssMiB();
    const again = process.hrtime.bigint();
    const unchanged = await importLeRobotVersion(sql, { dir, datasetId, version: "1.0.0" });
    const againSeconds = Number(process.hrtime.bigint() - again) / 1e9;
    if (unchanged.status !== "unchanged") throw new Error("the re-import was not unchanged");
    rows.push({
      step: `import v3.0, ${episodes} episodes`,
      seconds,
      "episodes/s": Math.round(episodes / seconds),
      files: imported.files,
      "peak RSS MiB": rss,
      "re-import (unchanged) s": againSeconds,
    });
    if (episodes === EPISODES)
      Object.assign(result, {
        import_100k_s: Number(seconds.toFixed(2)),
        episodes_per_s: Math.round(episodes / seconds),
        peak_rss_mib: rss,
        reimport_unchanged_s: Number(againSeconds.toFixed(2)),
      });
    else result.peak_rss_10k_mib = rss;
    await rm(dir, { recursive: true, force: true });
  }

  if (STEPS.has("upload")) {
    // 2. Real bytes into the store.
    const dir = path.join(scratch, "v21-upload");
    progress(`generating a LeRobot v2.1 dataset of ${UPLOAD_EPISODES} episodes, ${FILE_BYTES} bytes a file`);
    await generate(dir, "v2.1", UPLOAD_EPISODES, FILE_BYTES);
    const files = await filesOf(dir);
    const location = storeLocation();
    const client = s3Client(location);

    const sizes = await Promise.all(
      files.map(async (p) => ({ path: p, size_bytes: (await stat(path.join(dir, p))).size })),
    );
    const totalBytes = sizes.reduce((n, f) => n + f.size_bytes, 0);

    /** The raw loop: read each file, one PutObject, `concurrency` at a time. */
    async function rawPut(slice: string[], prefix: string): Promise<void> {
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, slice.length) }, async () => {
          while (next < slice.length) {
            const p = slice[next++]!;
            const body = await readFile(path.join(dir, p));
            await client.send(
              new PutObjectCommand({
                Bucket: location.bucket,
                Key: `${prefix}/${p}`,
                Body: body,
                ContentLength: body.length,
              }),
            );
          }
        }),
      );
    }
    async function removeObjects(keys: string[]): Promise<void> {
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < keys.length)
            await client.send(new DeleteObjectCommand({ Bucket: location.bucket, Key: keys[next++]! }));
        }),
      );
    }

    // PostgreSQL writes out the 100,000-episode import in the background for a while; the upload is
    // measured against a quiet disk, as the raw loop is.
    await sql`checkpoint`.catch(() => undefined);

    // a. The import with --upload, as an operator runs it.
    const datasetId = `bench-lerobot-${run}-upload`;
    progress(`importing ${datasetId} (${files.length} files, ${Math.round(mb(totalBytes))} MB) with --upload`);
    const importStarted = process.hrtime.bigint();
    const uploaded = await importLeRobotVersion(sql, {
      dir,
      datasetId,
      version: "1.0.0",
      concurrency: CONCURRENCY,
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) },
    });
    const importSeconds = Number(process.hrtime.bigint() - importStarted) / 1e9;
    const t = uploaded.transfer!;
    if (uploaded.status !== "imported" || t.uploaded !== files.length)
      throw new Error(`upload import: ${JSON.stringify(t)}`);

    // b. The same uploader against the raw loop. The machine is shared and its speed swings from one
    // second to the next, so the two take turns slice by slice (each going first in every other
    // slice) over the same files, and their totals are compared.
    const SLICE = 12;
    const spent = { ours: 0, raw: 0, bytes: 0 };
    for (let pass = 0; pass < PASSES; pass++) {
      progress(`pass ${pass + 1}/${PASSES}: the uploader and the raw loop, ${SLICE} files at a time`);
      for (let from = 0; from < sizes.length; from += SLICE) {
        const slice = sizes.slice(from, from + SLICE);
        const bytes = slice.reduce((n, f) => n + f.size_bytes, 0);
        const ourPrefix = `bench-upload/${run}/${pass}`;
        const rawPrefix = `bench-raw/${run}/${pass}`;
        const timed = async (work: () => Promise<void>) => {
          const started = process.hrtime.bigint();
          await work();
          return Number(process.hrtime.bigint() - started) / 1e9;
        };
        const ourTurn = () =>
          timed(async () => {
            const uploader = fileUploader(
              {
                dir,
                concurrency: CONCURRENCY,
                store: { client, bucket: location.bucket, keyOf: (p) => `${ourPrefix}/${p}` },
              },
              { files: slice.length, bytes },
            );
            await uploader.batch(slice);
            uploader.finish();
          });
        const rawTurn = () =>
          timed(() =>
            rawPut(
              slice.map((f) => f.path),
              rawPrefix,
            ),
          );
        if ((from / SLICE + pass) % 2 === 0) {
          spent.ours += await ourTurn();
          spent.raw += await rawTurn();
        } else {
          spent.raw += await rawTurn();
          spent.ours += await ourTurn();
        }
        spent.bytes += bytes;
      }
      await removeObjects(files.flatMap((p) => [`bench-upload/${run}/${pass}/${p}`, `bench-raw/${run}/${pass}/${p}`]));
    }

    // Resuming the same upload: every object is there already.
    const resumeStarted = process.hrtime.bigint();
    const resumed = await importLeRobotVersion(sql, {
      dir,
      datasetId,
      version: "1.0.0",
      concurrency: CONCURRENCY,
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) },
    });
    const resumeSeconds = Number(process.hrtime.bigint() - resumeStarted) / 1e9;

    // 3. One large file: the uploader's multipart upload against one raw PutObject of it.
    const bigDir = path.join(scratch, "big");
    await mkdir(bigDir);
    await writeFile(path.join(bigDir, "calibration.bin"), Buffer.alloc(BIG_FILE_BYTES, 0x5a));
    progress(`a ${BIG_FILE_BYTES / 1024 / 1024} MiB file: multipart upload, then one raw PutObject`);
    const multipart = fileUploader(
      {
        dir: bigDir,
        concurrency: CONCURRENCY,
        store: { client, bucket: location.bucket, keyOf: (p) => `bench-multipart/${run}/${p}` },
      },
      { files: 1, bytes: BIG_FILE_BYTES },
    );
    const multipartStarted = process.hrtime.bigint();
    await multipart.batch([{ path: "calibration.bin", size_bytes: BIG_FILE_BYTES }]);
    multipart.finish();
    const multipartSeconds = Number(process.hrtime.bigint() - multipartStarted) / 1e9;
    const singleStarted = process.hrtime.bigint();
    const bigBody = await readFile(path.join(bigDir, "calibration.bin"));
    await client.send(
      new PutObjectCommand({
        Bucket: location.bucket,
        Key: `bench-raw/${run}/calibration.bin`,
        Body: bigBody,
        ContentLength: bigBody.length,
      }),
    );
    const singleSeconds = Number(process.hrtime.bigint() - singleStarted) / 1e9;
    client.destroy();

    const uploadRate = mb(spent.bytes) / spent.ours;
    const rawRate = mb(spent.bytes) / spent.raw;
    rows.push({
      step: `import --upload, ${files.length} files, ${Math.round(mb(totalBytes))} MB`,
      seconds: importSeconds,
      "MB/s": mb(t.bytesUploaded) / t.seconds,
    });
    rows.push({ step: `uploader, ${PASSES} passes in slices of 12 files`, seconds: spent.ours, "MB/s": uploadRate });
    rows.push({ step: `raw PutObject loop, the same slices in turn`, seconds: spent.raw, "MB/s": rawRate });
    rows.push({ step: `re-run of the upload (${resumed.transfer?.skipped} skipped)`, seconds: resumeSeconds });
    rows.push({
      step: `${BIG_FILE_BYTES / 1024 / 1024} MiB file, multipart (hash, then 16 MiB parts)`,
      seconds: multipartSeconds,
      "MB/s": mb(BIG_FILE_BYTES) / multipartSeconds,
    });
    rows.push({
      step: `${BIG_FILE_BYTES / 1024 / 1024} MiB file, one raw PutObject`,
      seconds: singleSeconds,
      "MB/s": mb(BIG_FILE_BYTES) / singleSeconds,
    });
    Object.assign(result, {
      upload_mb_per_s: Number(uploadRate.toFixed(1)),
      raw_put_mb_per_s: Number(rawRate.toFixed(1)),
      upload_to_raw_ratio: Number((uploadRate / rawRate).toFixed(2)),
      import_upload_mb_per_s: Number((mb(t.bytesUploaded) / t.seconds).toFixed(1)),
      upload_files: files.length,
      upload_mb: Math.round(mb(totalBytes)),
      upload_rerun_s: Number(resumeSeconds.toFixed(2)),
      multipart_mb_per_s: Number((mb(BIG_FILE_BYTES) / multipartSeconds).toFixed(1)),
      raw_single_put_big_mb_per_s: Number((mb(BIG_FILE_BYTES) / singleSeconds).toFixed(1)),
    });
  }

  // 4. Many small files: the walk, the staging of a row per file and the hashing, each linear.
  for (const count of STEPS.has("small-files") ? [SMALL_FILES / 10, SMALL_FILES] : []) {
    const dir = path.join(scratch, `v21-small-${count}`);
    progress(`generating a LeRobot v2.1 dataset of 10 episodes and ${count} files of 64 bytes`);
    await generate(dir, "v2.1", 10);
    for (let first = 0; first < count; first += 1000) {
      const folder = path.join(dir, "notes", String(first / 1000).padStart(4, "0"));
      await mkdir(folder, { recursive: true });
      await Promise.all(
        Array.from({ length: Math.min(1000, count - first) }, (_, i) =>
          writeFile(path.join(folder, `${first + i}.txt`), `note ${String(first + i).padStart(58, "0")}\n`),
        ),
      );
    }
    const datasetId = `bench-lerobot-${run}-small-${count}`;
    progress(`importing ${datasetId}`);
    const started = process.hrtime.bigint();
    const imported = await importLeRobotVersion(sql, { dir, datasetId, version: "1.0.0" });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (imported.status !== "imported" || imported.files < count)
      throw new Error(`import of ${count} small files: ${JSON.stringify(imported).slice(0, 300)}`);
    rows.push({ step: `import v2.1, ${count} files of 64 bytes`, seconds, files: imported.files });
    result[`import_${count / 1000}k_small_files_s`] = Number(seconds.toFixed(2));
    await rm(dir, { recursive: true, force: true });
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
  await db.$client.end({ timeout: 5 });
  await runtime.stop();
}

const columns = ["step", "seconds", "episodes/s", "files", "peak RSS MiB", "re-import (unchanged) s", "MB/s"];
process.stdout.write(`${table(rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? ""]))))}\n`);
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
