import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { parquetReadObjects, asyncBufferFromFile } from "hyparquet";
import { parquetWriteFile } from "hyparquet-writer";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { FREE_TEXT_DESCRIPTION } from "@/lib/characters";
import { openParquet } from "@/lib/lerobot/parquet";
import { adminCli } from "@/lib/testing/admin-cli";
import { uniqueId } from "@/lib/testing/fixtures";
import {
  buildHuggingFaceSnapshot,
  buildLeRobotFixture,
  forgeParquetRowCount,
  type LeRobotFixtureOptions,
} from "@/lib/testing/lerobot-fixtures";
import { OUTSIDE } from "@/lib/local-path";
import { ImportError } from "../problems";
import { importLeRobotVersion, type LeRobotImportOptions } from "./source";

// LeRobot directories built to attack the importer: links out of the dataset wherever they sit
// on a path, forged parquet footers, unused columns that inflate, an endless metadata file, text
// that drives terminals. Each is refused or bounded, and nothing is written.

const sql = () => getDb().$client;
const admin = adminCli("hostile");
const scratch = admin.dataDir;

async function fixture(options: LeRobotFixtureOptions) {
  return buildLeRobotFixture(mkdtempSync(path.join(scratch, "lerobot-")), options);
}

async function refused(options: LeRobotImportOptions): Promise<ImportError> {
  const error = await importLeRobotVersion(sql(), options).catch((e: unknown) => e);
  if (error instanceof ImportError) return error;
  throw error instanceof Error ? error : new Error("expected a refusal");
}

async function versionsOf(datasetId: string): Promise<number> {
  const [row] = await sql()<
    { n: number }[]
  >`select count(*)::int as n from dataset_versions where dataset_id = ${datasetId}`;
  return row!.n;
}

const editInfo = (root: string, edit: (info: Record<string, unknown>) => void) => {
  const file = path.join(root, "meta", "info.json");
  const info = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  edit(info);
  writeFileSync(file, JSON.stringify(info, null, 2));
};

describe("links on the path of a file the metadata names", () => {
  // `.keys -> ~/.ssh` is hidden and `images/` is left out by the walk, so the walk only noted
  // them; `videos/chunk-000` is a link in the middle of LeRobot's own path.
  it.each([
    [".keys", ".keys/{video_key}/episode_{episode_index:06d}.mp4"],
    ["images/k", "images/k/{video_key}/episode_{episode_index:06d}.mp4"],
    ["videos/chunk-000", null],
  ])("%s pointing outside: refused, the same whether the outside file exists or not", async (link, template) => {
    const f = await fixture({ version: "v2.1", episodes: 2 });
    // The operator's own directory, holding files at the names the metadata asks for.
    const outside = mkdtempSync(path.join(scratch, "home-"));
    rmSync(outside, { recursive: true });
    renameSync(path.join(f.root, "videos", "chunk-000"), outside);
    mkdirSync(path.dirname(path.join(f.root, link)), { recursive: true });
    symlinkSync(outside, path.join(f.root, link));
    if (template) editInfo(f.root, (info) => (info.video_path = template));
    const camera = f.cameras[0]!;
    const datasetId = uniqueId("lr");
    const options = { dir: f.root, datasetId, version: "1.0.0" };

    const first = await refused(options);
    const named = [0, 1].map((e) => `${link}/${camera}/episode_00000${e}.mp4`);
    for (const file of named)
      expect(first.problems).toContainEqual({ file, line: 0, message: `not imported: ${OUTSIDE}` });

    // Nothing outside is looked at: with the outside files gone the import says exactly the same.
    for (const name of readdirSync(path.join(outside, camera))) rmSync(path.join(outside, camera, name));
    const second = await refused(options);
    expect(second.problems).toEqual(first.problems);
    expect(await versionsOf(datasetId)).toBe(0);
  });

  it("a Hugging Face cache snapshot still imports: every file a link into the repository's blobs/", async () => {
    const f = await buildHuggingFaceSnapshot(mkdtempSync(path.join(scratch, "hf-")), { version: "v3.0", episodes: 3 });
    expect(f.linked.length).toBeGreaterThan(3);
    expect(readlinkSync(path.join(f.root, f.linked[0]!))).toMatch(/^(\.\.\/)+blobs\//);
    const datasetId = uniqueId("lr");
    const result = await importLeRobotVersion(sql(), { dir: f.root, datasetId, version: "1.0.0" });
    expect(result).toMatchObject({ status: "imported", episodes: 3 });
  });
});

describe("forged parquet footers", () => {
  const episodesFile = "meta/episodes/chunk-000/file-000.parquet";

  it.each([
    [
      "rows",
      false,
      /^not a readable parquet file \(the parquet footer declares 1000000000000000 rows in row group 0, but its column \S+ holds only \d+ values\)$/,
    ],
    [
      "rows and values",
      true,
      /^not a readable parquet file from this row on \(the parquet footer declares more rows than the column chunks hold/,
    ],
  ])("a footer declaring 10^15 %s is refused within seconds, naming the file", async (_what, values, message) => {
    const f = await fixture({ version: "v3.0", episodes: 3 });
    forgeParquetRowCount(path.join(f.root, episodesFile), 10n ** 15n, { values });
    const datasetId = uniqueId("lr");
    const started = Date.now();
    const error = await refused({ dir: f.root, datasetId, version: "1.0.0" });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error.problems).toContainEqual({
      file: episodesFile,
      line: expect.any(Number),
      message: expect.stringMatching(message),
    });
    expect(await versionsOf(datasetId)).toBe(0);
  });
});

describe("imported text", () => {
  it("refuses a task or a subtask label holding ESC, a C1 control or a right-to-left override", async () => {
    const f = await fixture({
      version: "v2.1",
      episodes: 3,
      task: (e) => ["pick\u001b]0;owned\u0007 the cube", "place \u009b2J it", "clip\u202e4pm.exe"][e]!,
      subtasks: { source: "language_persistent", labels: () => ["reach\u001b[31m"] },
    });
    const datasetId = uniqueId("lr");
    const error = await refused({ dir: f.root, datasetId, version: "1.0.0" });
    const messages = error.problems.map((p) => p.message);
    expect(messages.filter((m) => m === `task must not contain ${FREE_TEXT_DESCRIPTION}`)).toHaveLength(3);
    expect(messages).toContain(`label must not contain ${FREE_TEXT_DESCRIPTION}`);
    expect(await versionsOf(datasetId)).toBe(0);
  });
});

/** `das-admin import` of a LeRobot dataset as an operator runs it, against the run's database. */
const importCli = (dir: string, datasetId: string) =>
  admin.spawn(["import", dir, "--dataset", datasetId, "--version", "1.0.0"]);

/** The process's peak resident memory so far (VmHWM), in bytes; 0 once it is gone. */
function peakMemory(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

describe("das-admin import, bounded", () => {
  it("stops on SIGTERM while it reads the metadata, rolls back and exits 130", async () => {
    const f = await fixture({ version: "v2.1", episodes: 2 });
    // An episodes.jsonl of 256 GiB of NUL bytes (sparse: no disk): minutes of reading, one over-long line after another.
    const endless = path.join(f.root, "meta", "episodes.jsonl");
    rmSync(endless);
    writeFileSync(endless, "");
    truncateSync(endless, 256 * 2 ** 30);
    const real = realpathSync(endless);
    const datasetId = uniqueId("lr");
    const { child, done } = importCli(f.root, datasetId);
    try {
      // Signalled once the process has the file open, so the signal lands in the reading loop.
      const deadline = Date.now() + 50_000;
      const reading = () => {
        try {
          return readdirSync(`/proc/${child.pid}/fd`).some((fd) => {
            try {
              return readlinkSync(`/proc/${child.pid}/fd/${fd}`) === real;
            } catch {
              return false;
            }
          });
        } catch {
          return false;
        }
      };
      while (!reading()) {
        expect(Date.now(), "das-admin never opened episodes.jsonl").toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const signalled = Date.now();
      child.kill("SIGTERM");
      const run = await done;
      expect(Date.now() - signalled).toBeLessThan(10_000);
      expect(run.code, run.stderr).toBe(130);
      expect(run.stderr).toContain("Interrupted: nothing was written to the catalog.");
      expect(await versionsOf(datasetId)).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }, 90_000);

  it("does not decode an unused column: 4 x 48 MB of GZIP strings in meta/episodes cost no memory", async () => {
    const peakOf = async (dir: string) => {
      const { child, done } = importCli(dir, uniqueId("lr"));
      let peak = 0;
      const timer = setInterval(() => (peak = Math.max(peak, peakMemory(child.pid!))), 20);
      const run = await done;
      clearInterval(timer);
      expect(run.code, run.stderr).toBe(0);
      return peak;
    };
    const plain = await fixture({ version: "v3.0", episodes: 4 });
    const hostile = await fixture({ version: "v3.0", episodes: 4 });
    // meta/episodes written again with a column no reader of LeRobot's uses, 48 MB a row, GZIP.
    const file = path.join(hostile.root, "meta/episodes/chunk-000/file-000.parquet");
    const parquet = await openParquet(file);
    const rows = await parquetReadObjects({ file: await asyncBufferFromFile(file), metadata: parquet.metadata });
    expect(rows).toHaveLength(4);
    const schema = [...parquet.metadata.schema];
    schema[0] = { ...schema[0]!, num_children: schema[0]!.num_children! + 1 };
    schema.push({ name: "notes", type: "BYTE_ARRAY", repetition_type: "OPTIONAL" });
    parquetWriteFile({
      filename: file,
      schema,
      kvMetadata: parquet.metadata.key_value_metadata,
      columnData: [
        ...parquet.columns.map((name) => ({ name, data: rows.map((row) => row[name] ?? null) })),
        { name: "notes", data: rows.map(() => new Uint8Array(48 * 2 ** 20).fill(0x61)), codec: "GZIP" as const },
      ],
      compressors: { GZIP: (bytes: Uint8Array) => new Uint8Array(gzipSync(bytes)) },
    });
    const plainPeak = await peakOf(plain.root);
    const hostilePeak = await peakOf(hostile.root);
    // Decoding the column would take 192 MB of pages at least.
    expect(hostilePeak - plainPeak).toBeLessThan(96 * 2 ** 20);
  }, 120_000);
});
