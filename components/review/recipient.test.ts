import { describe, expect, it } from "vitest";
import { cappedCountText } from "./recipient";

// What the reviewer reads of a count that stops at its cap (lib/disclosures/search.ts, countDisclosures).
describe("cappedCountText", () => {
  it("says the exact count up to the cap, and 'more than' the cap past it", () => {
    expect(cappedCountText({ count: 0, more: false }, "entry", "entries")).toBe("0 entries");
    expect(cappedCountText({ count: 1, more: false }, "entry", "entries")).toBe("1 entry");
    expect(cappedCountText({ count: 10_000, more: false }, "entry", "entries")).toBe("10,000 entries");
    expect(cappedCountText({ count: 10_000, more: true }, "entry", "entries")).toBe("more than 10,000 entries");
  });
});
