import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { joinSafely, pathInside, safePathProblem } from "./safe-path";

const root = realpathSync(mkdtempSync(path.join(tmpdir(), "das-safe-path-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("paths from outside, under a directory", () => {
  it("refuses every shape that could leave the directory or hide what it is", () => {
    for (const bad of [
      "",
      "/etc/passwd",
      "../x",
      "a/../../x",
      "a//b",
      "./a",
      "a/.",
      "a\\b",
      " a",
      "a\u001b]0;t\u0007",
      "a\u202eb",
    ])
      expect(safePathProblem(bad), JSON.stringify(bad)).not.toBeNull();
    expect(safePathProblem("data/chunk-000/file-000.parquet")).toBeNull();
    expect(() => joinSafely(root, "../../victim.parquet")).toThrow(/unsafe path "\.\.\/\.\.\/victim\.parquet"/);
    // The message shows the path escaped.
    expect(() => joinSafely(root, "a\u001b[2J")).toThrow('unsafe path "a\\u001b[2J"');
  });

  it("follows links that stay inside, and refuses one that leads out, anywhere on the way, or nowhere", async () => {
    const dir = path.join(root, "dir");
    const outside = path.join(root, "outside");
    mkdirSync(path.join(dir, "real"), { recursive: true });
    mkdirSync(outside);
    symlinkSync(path.join(dir, "real"), path.join(dir, "inner"));
    symlinkSync(outside, path.join(dir, "out"));
    symlinkSync(path.join(root, "nowhere"), path.join(dir, "dangling"));

    expect(await pathInside(dir, "real/x.parquet")).toBe(path.join(dir, "real/x.parquet"));
    expect(await pathInside(dir, "inner/x.parquet")).toBe(path.join(dir, "real/x.parquet"));
    expect(await pathInside(dir, "new/deep/x.parquet")).toBe(path.join(dir, "new/deep/x.parquet"));
    await expect(pathInside(dir, "out/x.parquet")).rejects.toThrow(/leads out of the directory/);
    await expect(pathInside(dir, "out")).rejects.toThrow(/leads out of the directory/);
    await expect(pathInside(dir, "dangling")).rejects.toThrow(/leads nowhere/);
    await expect(pathInside(dir, "../outside/x")).rejects.toThrow(/unsafe path/);
    // A directory that does not exist yet holds nothing, links included.
    expect(await pathInside(path.join(root, "later"), "a/b")).toBe(path.join(root, "later/a/b"));
  });
});
