import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
// @ts-expect-error: a plain ES module of the bins, with no type declarations.
import { bundle, bundled, bundleIsCurrent } from "./bundle.mjs";

// A bundle of its own beside dist/cli, at the same depth: the suites that run the tools meanwhile
// keep theirs, and no source of the checkout is touched.
const OUT = path.join(PROJECT_ROOT, "dist", `cli-test-${process.pid}`);
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

const made = bundle(OUT);
// Awaited by each test; until then a failure must not count as unhandled.
made.catch(() => undefined);

describe("the command-line tools' bundle", () => {
  it("runs under Node alone, no TypeScript loader: the bundle prints das's and das-admin's help", async () => {
    await made;
    for (const tool of ["das", "das-admin"]) {
      const run = spawnSync(process.execPath, [path.join(OUT, `${tool}.mjs`), "--help"], {
        cwd: PROJECT_ROOT,
        encoding: "utf8",
      });
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(`Usage: ${tool}`);
    }
  });

  it("is made again before a tool starts when a source it was made from is newer than it", async () => {
    await made;
    expect(bundleIsCurrent(OUT)).toBe(true);
    // As if it had been made before the sources last changed.
    const inputs = path.join(OUT, "inputs.json");
    const recorded = JSON.parse(readFileSync(inputs, "utf8")) as { started: number; inputs: string[] };
    expect(recorded.inputs).toContain("scripts/das.ts");
    expect(recorded.inputs).toContain("lib/client/pull.ts");
    writeFileSync(inputs, JSON.stringify({ ...recorded, started: 0 }));
    expect(bundleIsCurrent(OUT)).toBe(false);
    expect(await bundled("das", OUT)).toBe(`file://${path.join(OUT, "das.mjs")}`);
    expect(bundleIsCurrent(OUT)).toBe(true);
    expect((JSON.parse(readFileSync(inputs, "utf8")) as { started: number }).started).toBeGreaterThan(0);
  });

  it("finds the project's own files from inside the bundle: import.meta.url is the source's own", async () => {
    await made;
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
