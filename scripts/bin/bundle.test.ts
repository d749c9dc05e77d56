import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, utimesSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
// @ts-expect-error: a plain ES module of the bins, with no type declarations.
import { bundle, bundled, bundleIsCurrent } from "./bundle.mjs";

const OUT = path.join(PROJECT_ROOT, "dist/cli");

describe("the command-line tools' bundle", () => {
  it("runs without TypeScript at start: the bundle alone prints das's and das-admin's help", async () => {
    await bundle();
    for (const tool of ["das", "das-admin"]) {
      // Node alone, no loader: what the bins import.
      const run = spawnSync(process.execPath, [path.join(OUT, `${tool}.mjs`), "--help"], {
        cwd: PROJECT_ROOT,
        encoding: "utf8",
      });
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(`Usage: ${tool}`);
    }
  });

  it("is made again before a tool starts when a source it was made from is newer", async () => {
    await bundle();
    expect(bundleIsCurrent()).toBe(true);
    const source = path.join(PROJECT_ROOT, "scripts/cli/terminal.ts");
    const { atime, mtime } = statSync(source);
    try {
      utimesSync(source, atime, new Date(Date.now() + 60_000));
      expect(bundleIsCurrent()).toBe(false);
      const url: string = await bundled("das");
      expect(url).toBe(`file://${path.join(OUT, "das.mjs")}`);
      utimesSync(source, atime, mtime);
      expect(bundleIsCurrent()).toBe(true);
    } finally {
      utimesSync(source, atime, mtime);
    }
  });

  it("finds the project's own files from inside the bundle: import.meta.url is the source's own", async () => {
    await bundle();
    const text = readdirSync(OUT)
      .filter((f) => f.endsWith(".mjs"))
      .map((f) => readFileSync(path.join(OUT, f), "utf8"))
      .join("\n");
    // Each source that finds files beside itself (the project's root, the migrations, the demo's
    // clips, a verification thread's module) does so from its own place, not the bundle's.
    for (const source of [
      "lib/dev/embedded-default.ts",
      "lib/db/migrate.ts",
      "lib/dev/demo/generate.ts",
      "lib/disclosures/verify-parallel.ts",
    ])
      expect(text).toContain(`new URL("../../${source}",import.meta.url)`);
    // das-admin reads the package's version that way (scripts/cli/program.ts), from any directory.
    const run = spawnSync(process.execPath, [path.join(OUT, "das-admin.mjs"), "--version"], {
      cwd: "/",
      encoding: "utf8",
    });
    expect(run.status).toBe(0);
    const { version } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    expect(run.stdout.trim()).toBe(version);
  });
});
