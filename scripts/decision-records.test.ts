import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";

// A decision record says what else was weighed and why not (docs/decisions/README.md): every
// record from 0101 on has an "Alternatives considered" section with something in it.

const DECISIONS = path.join(PROJECT_ROOT, "docs/decisions");
const FIRST_WITH_ALTERNATIVES = 101;

/** The text of a record's `## Alternatives considered` section, or null when it has none. */
function alternativesOf(markdown: string): string | null {
  const match = /^## Alternatives considered[ \t]*\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(markdown);
  return match ? match[1]!.trim() : null;
}

const records = readdirSync(DECISIONS)
  .filter((name) => /^\d{4}-[a-z0-9-]+\.md$/.test(name) && Number(name.slice(0, 4)) >= FIRST_WITH_ALTERNATIVES)
  .sort();

describe("decision records", () => {
  it("from 0101 on, each say what else was weighed and why not", () => {
    expect(records.length).toBeGreaterThan(10);
    const without = records.filter((name) => !alternativesOf(readFileSync(path.join(DECISIONS, name), "utf8")));
    expect(without).toEqual([]);
  });

  it("are read by the check as written: a missing or empty section is found", () => {
    expect(alternativesOf("# 1. X\n\n## Decision\n\nY.\n")).toBeNull();
    expect(alternativesOf("# 1. X\n\n## Alternatives considered\n\n## Consequences\n\nZ.\n")).toBe("");
    expect(alternativesOf("# 1. X\n\n## Alternatives considered\n\n- A: not B.\n")).toBe("- A: not B.");
  });
});
