import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { productionBuildIsCurrent } from "./next-server";

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A file written with a modification time `secondsAgo` in the past. */
function place(file: string, secondsAgo: number) {
  const full = path.join(root, file);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, "x");
  const at = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(full, at, at);
}

describe("productionBuildIsCurrent", () => {
  it("is false without a build, true for a build newer than every source, false once any source is newer", () => {
    root = mkdtempSync(path.join(tmpdir(), "das-build-"));
    place("lib/disclosures/verify.ts", 300);
    place("app/(portal)/page.tsx", 300);
    expect(productionBuildIsCurrent(root)).toBe(false);
    place(".next/BUILD_ID", 100);
    expect(productionBuildIsCurrent(root)).toBe(true);
    place("lib/disclosures/deep/new-file.ts", 10);
    expect(productionBuildIsCurrent(root)).toBe(false);
  });

  it("is not made stale by a changed test or test helper, which are not in the bundle", () => {
    root = mkdtempSync(path.join(tmpdir(), "das-build-"));
    place("lib/catalog/list.ts", 300);
    place(".next/BUILD_ID", 100);
    place("lib/catalog/list.test.ts", 10);
    place("app/(portal)/rbac.test.tsx", 10);
    place("lib/testing/app-server.ts", 10);
    expect(productionBuildIsCurrent(root)).toBe(true);
    place("lib/catalog/list.ts", 5);
    expect(productionBuildIsCurrent(root)).toBe(false);
  });

  it("notices a changed proxy or package.json as well", () => {
    root = mkdtempSync(path.join(tmpdir(), "das-build-"));
    place(".next/BUILD_ID", 100);
    place("proxy.ts", 200);
    expect(productionBuildIsCurrent(root)).toBe(true);
    place("package.json", 5);
    expect(productionBuildIsCurrent(root)).toBe(false);
  });
});
