import { describe, expect, it } from "vitest";
import { clipText } from "./format";

describe("clipText", () => {
  it("keeps text that fits and cuts longer text to the limit, ellipsis included, without splitting a character", () => {
    expect(clipText("reach", 5)).toBe("reach");
    expect(clipText("reach the cup", 6)).toBe("reach…");
    // 🤖 is two UTF-16 units: the limit counts it as one character, and never halves it.
    expect(clipText("🤖🤖🤖🤖", 4)).toBe("🤖🤖🤖🤖");
    expect(clipText("🤖🤖🤖🤖🤖", 3)).toBe("🤖🤖…");
    expect(Array.from(clipText("x".repeat(10_000), 300))).toHaveLength(300);
  });
});
