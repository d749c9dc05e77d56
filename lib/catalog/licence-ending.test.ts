import { describe, expect, it } from "vitest";
import { endingText, licenceEnding } from "./licence-ending";

const now = new Date("2026-11-28T12:00:00Z");
const at = (iso: string) => new Date(iso);

describe("licenceEnding", () => {
  it("warns from 30 days before the end, counting whole days up", () => {
    expect(licenceEnding(at("2026-12-28T12:00:00Z"), now)).toEqual({ endsAt: at("2026-12-28T12:00:00Z"), days: 30 });
    expect(licenceEnding(at("2026-12-10T00:00:00Z"), now)?.days).toBe(12);
    expect(licenceEnding(at("2026-11-28T13:00:00Z"), now)?.days).toBe(1);
    expect(licenceEnding("2026-12-01T12:00:00.000Z", now)?.days).toBe(3);
  });

  it("says nothing of a licence without an end, ending later, or ended", () => {
    expect(licenceEnding(null, now)).toBeNull();
    expect(licenceEnding(at("2026-12-28T12:00:01Z"), now)).toBeNull();
    expect(licenceEnding(now, now)).toBeNull();
    expect(licenceEnding(at("2026-11-01T00:00:00Z"), now)).toBeNull();
  });

  it("words the warning with the date and the days", () => {
    expect(endingText({ endsAt: at("2026-12-10T00:00:00Z"), days: 12 })).toBe("ends on 2026-12-10, in 12 days");
    expect(endingText({ endsAt: at("2026-11-29T00:00:00Z"), days: 1 })).toBe("ends on 2026-11-29, in 1 day");
  });
});
