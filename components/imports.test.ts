import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";

// Pages depend on components, never the other way round: a component that imported a route
// folder's server actions or types would tie a shared piece to one page.

const componentsDir = path.join(PROJECT_ROOT, "components");
const sources = (readdirSync(componentsDir, { recursive: true, encoding: "utf8" }) as string[]).filter(
  (f) => /\.tsx?$/.test(f) && !f.endsWith(".test.ts"),
);
const specifiers = (text: string) => [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);
const intoApp = (file: string, specifier: string) =>
  specifier.startsWith("@/")
    ? specifier.startsWith("@/app/")
    : specifier.startsWith(".") &&
      path
        .relative(PROJECT_ROOT, path.resolve(path.dirname(path.join(componentsDir, file)), specifier))
        .split(path.sep)[0] === "app";

describe("components/", () => {
  it("has sources to check", () => {
    expect(sources.length).toBeGreaterThan(10);
  });

  it("imports nothing from app/", () => {
    const upward = sources.flatMap((file) =>
      specifiers(readFileSync(path.join(componentsDir, file), "utf8"))
        .filter((s) => intoApp(file, s))
        .map((s) => `${file}: ${s}`),
    );
    expect(upward).toEqual([]);
  });
});
