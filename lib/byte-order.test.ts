import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { byteOrder } from "./byte-order";

const bytewise = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));

describe("byteOrder", () => {
  it("orders strings as their UTF-8 bytes do, characters past U+FFFF included", () => {
    // Well-formed text, as PostgreSQL stores it: every code point but the surrogates, with extra
    // weight on the ranges a UTF-16 comparison confuses (U+E000-U+FFFF and past U+FFFF).
    const codePoint = fc.oneof(
      fc.integer({ min: 0, max: 0xd7ff }),
      fc.integer({ min: 0xe000, max: 0xffff }),
      fc.integer({ min: 0x10000, max: 0x10ffff }),
      fc.constantFrom(0x2d, 0x30, 0x61, 0xe000, 0xffff, 0x10000, 0x1f600),
    );
    const unit = fc.string({ unit: codePoint.map((c) => String.fromCodePoint(c)) });
    fc.assert(
      fc.property(unit, unit, (a, b) => {
        expect(Math.sign(byteOrder(a, b))).toBe(bytewise(a, b));
      }),
      { numRuns: 5000 },
    );
  });

  it("puts a character past U+FFFF after U+E000-U+FFFF, where UTF-16's own order puts it before", () => {
    const high = "\u{1F600}"; // U+1F600, a surrogate pair in UTF-16
    const private_ = "\uE000";
    expect(high < private_).toBe(true);
    expect(byteOrder(high, private_)).toBeGreaterThan(0);
    expect(["kpp-10", "kpp-1", "kpp-02"].sort(byteOrder)).toEqual(["kpp-02", "kpp-1", "kpp-10"]);
  });
});
