import { describe, expect, it } from "vitest";
import { ifNoneMatchFails } from "./conditional";

// RFC 9110 section 13.1.2, with the list syntax of section 5.6.1.
describe("If-None-Match", () => {
  const etag = '"abc,def"';

  it("fails (so a GET answers 304) for the current tag, alone, in a list, weak, or *", () => {
    for (const field of [
      etag,
      ` ${etag} `,
      `"x", ${etag}`,
      `${etag},"x"`,
      `W/${etag}`,
      `"x" ,, W/"y", ${etag}`,
      "*",
      " * ",
    ]) {
      expect(ifNoneMatchFails(field, etag), field).toBe(true);
    }
  });

  it("holds (a full answer) for other tags, no field, and a field that is not a list of entity tags", () => {
    for (const field of [
      null,
      "",
      '"abc"',
      '"def"',
      "abc,def",
      `${etag} x`,
      `x ${etag}`,
      `"x" "abc,def"`,
      `w/${etag}`,
      '"unterminated',
    ]) {
      expect(ifNoneMatchFails(field, etag), String(field)).toBe(false);
    }
  });
});
