import { describe, expect, it } from "vitest";
import { assertDurationRange } from "@/lib/catalog/episode-filter";
import { AppError } from "@/lib/errors";
import { filterProblemOf } from "./filter-problem";

const refusalOf = (run: () => void): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a refusal");
};

describe("filterProblemOf", () => {
  it("words a duration range upside down in the form's terms", () => {
    const filter = { min_duration_s: 70, max_duration_s: 50 };
    const error = refusalOf(() => assertDurationRange(filter));
    expect(filterProblemOf(error, filter)).toBe("The minimum duration (70 s) is above the maximum (50 s)");
  });

  it("passes any other invalid_parameter on in its own words, not as a range problem", () => {
    const filter = { min_duration_s: 10, max_duration_s: 50 };
    const error = new AppError("invalid_parameter", "task must be at most 200 characters");
    expect(filterProblemOf(error, filter)).toBe("task must be at most 200 characters");
    expect(filterProblemOf(error, {})).toBe("task must be at most 200 characters");
  });

  it("leaves every other error to the caller", () => {
    expect(filterProblemOf(new AppError("invalid_cursor", "stale"), {})).toBeNull();
    expect(filterProblemOf(new Error("boom"), {})).toBeNull();
  });
});
