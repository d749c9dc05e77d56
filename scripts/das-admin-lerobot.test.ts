import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DeleteObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { s3Client } from "@/lib/storage/client";
import { objectKey, storeLocation } from "@/lib/storage/config";
import { adminCli } from "@/lib/testing/admin-cli";
import { uniqueId, writeImportDir, randomEpisodes } from "@/lib/testing/fixtures";
import { buildLeRobotFixture } from "@/lib/testing/lerobot-fixtures";

// `das-admin import` of a LeRobot dataset and `das-admin store check`, run as an operator runs them.

// The run's database and store (S3_* are in the environment), never the project's .data/.
const das = adminCli("admin-lerobot");
const scratch = das.dataDir;

const fixtureDir = () => mkdtempSync(path.join(scratch, "lerobot-"));

describe("das-admin import of a LeRobot dataset", () => {
  it("recognises the dataset, uploads its files, prints the summary, and store check agrees until an object goes", async () => {
    const f = await buildLeRobotFixture(fixtureDir(), {
      version: "v3.0",
      episodes: 3,
      episodesPerFile: 2,
      extra: (e): Record<string, string> => (e === 0 ? { outcome: "success" } : {}),
    });
    const datasetId = uniqueId("lr");
    const meta = path.join(scratch, `${datasetId}-meta.jsonl`);
    writeFileSync(meta, `${JSON.stringify({ episode_index: 1, outcome: "failure", contributor: "op-1" })}\n`);
    const run = await das.run([
      "import",
      f.root,
      "--dataset",
      datasetId,
      "--version",
      "1.0.0",
      "--title",
      "A LeRobot dataset",
      "--episode-metadata",
      meta,
      "--environment",
      "lab",
      "--upload",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`Imported ${datasetId}@1.0.0 (LeRobot v3.0): 3 episodes, 0 annotations,`);
    expect(run.stderr).toContain(
      "  outcome: 1 from --episode-metadata, 1 from the episode records, 1 set to 'unknown'\n",
    );
    expect(run.stderr).toContain("  environment: 3 from --environment\n");
    expect(run.stderr).toContain("  contributor: 1 from --episode-metadata, 2 set to 'unknown'\n");
    expect(run.stderr).toContain("  has_recovery: 3 set to false\n");
    expect(run.stderr).toMatch(/ {2}Store: \d+ file\(s\) uploaded \(.+\) in [\d.]+ s, 0 already there/);

    const check = await das.run(["store", "check", `${datasetId}@1.0.0`]);
    expect(check.code, check.stderr).toBe(0);
    // (Node 20 makes the AWS SDK print a warning of its own on stderr first.)
    expect(check.stderr).toMatch(
      new RegExp(`(^|\\n)All \\d+ files of ${datasetId}@1.0.0 are in the store at their sizes.\\n`),
    );
    // The embedded store's rule lets any origin read: the plots work.
    expect(check.stderr).toMatch(
      /\nA browser on http:\/\/localhost:3000 may read the data tables from the store .*\n$/,
    );

    const location = storeLocation();
    const client = s3Client(location);
    await client.send(
      new DeleteObjectCommand({ Bucket: location.bucket, Key: objectKey(datasetId, "1.0.0", "meta/info.json") }),
    );
    client.destroy();
    const broken = await das.run(["store", "check", `${datasetId}@1.0.0`]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`1 of `);
    expect(broken.stderr).toContain("  missing: meta/info.json\n");

    // Again: unchanged, and nothing is sent again but the object that went.
    const again = await das.run([
      "import",
      f.root,
      "--dataset",
      datasetId,
      "--version",
      "1.0.0",
      "--title",
      "A LeRobot dataset",
      "--episode-metadata",
      meta,
      "--environment",
      "lab",
      "--upload",
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`Unchanged: ${datasetId}@1.0.0 (LeRobot v3.0)`);
    expect(again.stderr).toMatch(/Store: 1 file\(s\) uploaded .* already there/);
  });

  it("refuses a dataset with a missing file, naming it, and writes nothing; --skip-incomplete-episodes imports the rest", async () => {
    const f = await buildLeRobotFixture(fixtureDir(), { version: "v2.1", episodes: 3 });
    const gone = f.files.find((file) => file.stream !== "data" && file.episodes[0] === 1)!.path;
    rmSync(path.join(f.root, gone));
    const datasetId = uniqueId("lr");
    const refused = await das.run(["import", f.root, "--dataset", datasetId, "--version", "1.0.0"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `das-admin: Import refused, nothing was written:\n${gone}:0: file is missing: the metadata names it, but the directory does not hold it\n` +
        "To import the version without the episodes whose files are missing (they are listed in the summary), run the same command with --skip-incomplete-episodes; or put the missing files in place and run it again.\n",
    );
    const [row] = await getDb()
      .$client`select count(*)::int as n from dataset_versions where dataset_id = ${datasetId}`;
    expect(row!.n).toBe(0);

    const skipped = await das.run([
      "import",
      f.root,
      "--dataset",
      datasetId,
      "--version",
      "1.0.0",
      "--skip-incomplete-episodes",
    ]);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stderr).toContain(`Imported ${datasetId}@1.0.0 (LeRobot v2.1): 2 episodes,`);
    expect(skipped.stderr).toContain(
      `  Skipped 1 incomplete episode(s) (--skip-incomplete-episodes):\n    ${datasetId}-000001: ${gone} is missing\n`,
    );
    expect(skipped.stderr).toContain(`  1 file(s) the metadata names are missing from the directory:\n    ${gone}\n`);
    expect(skipped.stderr).toContain(
      `Without --upload they must be in the store already: check with das-admin store check ${datasetId}@1.0.0`,
    );
  });

  it("imports a dataset with stray files, an episode without a task and stale totals, and says so in the summary", async () => {
    const f = await buildLeRobotFixture(fixtureDir(), {
      version: "v2.1",
      episodes: 2,
      cameras: [],
      tasks: (e) => (e === 0 ? [""] : ["Pick."]),
      extraFiles: { "README.md": "# readme\n", ".git/HEAD": "ref: refs/heads/main\n", ".DS_Store": "\0" },
    });
    const infoFile = path.join(f.root, "meta/info.json");
    writeFileSync(infoFile, readFileSync(infoFile, "utf8").replace('"total_episodes": 2', '"total_episodes": 5'));
    const datasetId = uniqueId("lr");
    const run = await das.run(["import", f.root, "--dataset", datasetId, "--version", "1.0.0"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`Imported ${datasetId}@1.0.0 (LeRobot v2.1): 2 episodes,`);
    expect(run.stderr).toMatch(
      /\n {2}Note: info.json's total_episodes is 5, but the episode metadata lists 2 episodes: imported as listed: 1 \(meta\/info.json:\d+\)\n/,
    );
    expect(run.stderr).toContain(
      "\n  Note: left out: hidden files and directories (names starting with '.'), which are no part of a dataset: 2 (.DS_Store, .git/)\n",
    );
    expect(run.stderr).toContain(
      "\n  Note: episodes without a task (their tasks are none or blank): imported with an empty task: 1 (meta/episodes.jsonl:1)\n",
    );
  });

  it("says what is wrong with the command line (exit 2) before touching anything", async () => {
    const f = await buildLeRobotFixture(fixtureDir(), { version: "v2.1", episodes: 1, cameras: [] });
    const jsonl = writeImportDir(uniqueId("ds"), { version: "1.0.0", episodes: randomEpisodes(1, 1) });
    try {
      const [noDataset, badVersion, badOutcome, notLeRobot, wrongFormat] = await Promise.all([
        das.run(["import", f.root, "--version", "1.0.0"]),
        das.run(["import", f.root, "--dataset", "lr-x", "--version", "v1"]),
        das.run(["import", f.root, "--dataset", "lr-x", "--version", "1.0.0", "--outcome", "fail\nure"]),
        das.run(["import", jsonl, "--dataset", "lr-x", "--upload"]),
        das.run(["import", f.root, "--format", "csv"]),
      ]);
      for (const run of [noDataset, badVersion, badOutcome, notLeRobot, wrongFormat])
        expect(run.code, run.stderr).toBe(2);
      expect(noDataset.stderr).toContain(
        "das-admin: An import of a LeRobot dataset needs --dataset ID and --version X.Y.Z.\n\nUsage: das-admin import",
      );
      expect(badVersion.stderr).toContain(
        "das-admin: --version takes a version of three dot-separated numbers, e.g. 1.2.0.",
      );
      expect(badOutcome.stderr).toContain("das-admin: --outcome must not contain control characters");
      expect(notLeRobot.stderr).toContain(
        `das-admin: --dataset, --upload are for LeRobot datasets, but ${jsonl} has no meta/info.json, so it would be read as an import directory (docs/import-format.md).`,
      );
      expect(wrongFormat.stderr).toContain("das-admin: --format must be jsonl or lerobot.");
    } finally {
      rmSync(jsonl, { recursive: true, force: true });
    }
  });
});
