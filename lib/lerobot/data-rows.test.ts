import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildLeRobotFixture } from "../testing/lerobot-fixtures";
import { plainValue } from "./format";
import { openParquet, parquetBatches } from "./parquet";
import { rewriteDataRows, type DataTransform } from "./data-rows";

// A data file written as a pull plan's transform says, by the client that fetched it: the plan
// comes from a server the client does not trust for more than its answers, so a transform that
// does not describe the file is refused, with nothing written.

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "das-data-rows-"));
  roots.push(dir);
  return dir;
};

// Two episodes a data file, as LeRobot writes them: file-000 holds episodes 0 and 1.
const fixture = buildLeRobotFixture(tempDir(), { version: "v3.0", episodes: 4, episodesPerFile: 2 });
const FILE = "data/chunk-000/file-000.parquet";

async function rows(file: string) {
  const out: Record<string, unknown>[] = [];
  for await (const batch of parquetBatches(await openParquet(file)))
    out.push(...batch.rows.map((r) => plainValue(r) as Record<string, unknown>));
  return out;
}

/** The transform that keeps episode 1 of FILE as episode 0 from frame 0, and drops episode 0. */
async function keepSecond(): Promise<DataTransform> {
  const f = await fixture;
  const [first, second] = [f.episodes[0]!.length, f.episodes[1]!.length];
  return {
    kind: "lerobot_v3_data_rows",
    changed_columns: ["episode_index", "index"],
    episodes: [{ episode_index: 1, new_episode_index: 0, index_from: first, new_index_from: 0, length: second }],
    dropped_episode_indices: [0],
  };
}

describe("a data file written as the plan says", () => {
  it("keeps the rows of the episodes it names, renumbered, and leaves out the dropped ones", async () => {
    const f = await fixture;
    const target = path.join(tempDir(), "out.parquet");
    const result = await rewriteDataRows(path.join(f.root, FILE), target, await keepSecond());
    expect(result).toEqual({ rows: f.episodes[1]!.length, dropped: f.episodes[0]!.length });
    const original = (await rows(path.join(f.root, FILE))).filter((r) => r.episode_index === 1);
    expect(await rows(target)).toEqual(original.map((r, i) => ({ ...r, episode_index: 0, index: i })));
  });

  it.each([
    [
      "frames of an episode it does not name",
      (t: DataTransform): DataTransform => ({ ...t, dropped_episode_indices: [] }),
      /holds frames of episode 0, which the plan does not name/,
    ],
    [
      "rows that do not exist (an episode longer than the file holds)",
      (t: DataTransform): DataTransform => ({ ...t, episodes: [{ ...t.episodes[0]!, length: 1e15 }] }),
      /episode 1 has \d+ frames, the plan says 1000000000000000/,
    ],
    [
      "an episode the file does not hold",
      (t: DataTransform): DataTransform => ({
        ...t,
        episodes: [
          ...t.episodes,
          { episode_index: 7, new_episode_index: 1, index_from: 0, new_index_from: 1e6, length: 5 },
        ],
      }),
      /episode 7 has 0 frames, the plan says 5/,
    ],
    [
      "frames outside the range it gives",
      (t: DataTransform): DataTransform => ({ ...t, episodes: [{ ...t.episodes[0]!, index_from: 1e9 }] }),
      /frame index \d+ of episode 1 is outside the plan's/,
    ],
  ])("refuses a transform naming %s, and writes nothing", async (_, change, message) => {
    const f = await fixture;
    const dir = tempDir();
    await expect(
      rewriteDataRows(path.join(f.root, FILE), path.join(dir, "out.parquet"), change(await keepSecond()), FILE),
    ).rejects.toThrow(message);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses a file that is no data file, and one that is not there", async () => {
    const dir = tempDir();
    const notParquet = path.join(dir, "x.parquet");
    writeFileSync(notParquet, "not a parquet file at all, but long enough to have a footer's length");
    await expect(rewriteDataRows(notParquet, path.join(dir, "out"), await keepSecond(), "x.parquet")).rejects.toThrow(
      /^x\.parquet: /,
    );
    await expect(
      rewriteDataRows(path.join(dir, "missing.parquet"), path.join(dir, "out"), await keepSecond(), "missing.parquet"),
    ).rejects.toThrow(/missing\.parquet: file is missing/);
    const tasks = path.join((await fixture).root, "meta/tasks.parquet");
    await expect(rewriteDataRows(tasks, path.join(dir, "out"), await keepSecond(), "tasks")).rejects.toThrow(
      /tasks: no episode_index, index column/,
    );
    expect(existsSync(path.join(dir, "out"))).toBe(false);
  });
});
