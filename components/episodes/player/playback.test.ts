import { describe, expect, it } from "vitest";
import type { AnnotationRecord } from "@/lib/catalog/list-annotations";
import { formatClock, nextSpan, positionText, previousSpan, spansNow, toEpisodeTime, toFileTime } from "./playback";

const span = (id: number, start_s: number, end_s: number, label = `s${id}`): AnnotationRecord => ({
  annotation_id: `ann_${id}`,
  label,
  start_s,
  end_s,
  attributes: {},
});
// Out of order on purpose, with a recovery inside the second phase.
const spans = [span(3, 6, 9), span(1, 0, 3), span(4, 4, 5, "recovery"), span(2, 3, 6)];

describe("the player's time", () => {
  it("maps the episode's seconds into a file that holds it from start_s to end_s, and back, never outside the range", () => {
    const shared = { start_s: 120.5, end_s: 138.5 };
    expect(toFileTime(shared, 0)).toBe(120.5);
    expect(toFileTime(shared, 10)).toBe(130.5);
    expect(toFileTime(shared, 99)).toBe(138.5);
    expect(toFileTime(shared, -3)).toBe(120.5);
    expect(toEpisodeTime(shared, 130.5)).toBe(10);
    // A neighbour's frames before or after the episode map to its ends.
    expect(toEpisodeTime(shared, 5)).toBe(0);
    expect(toEpisodeTime(shared, 200)).toBe(18);
    const own = { start_s: 0, end_s: 18 };
    expect(toFileTime(own, 7.25)).toBe(7.25);
  });

  it("goes to the next span's start with ], and with [ to the previous one (the one before when a span has just begun)", () => {
    expect(nextSpan(spans, 0)?.annotation_id).toBe("ann_2");
    expect(nextSpan(spans, 3)?.annotation_id).toBe("ann_4");
    expect(nextSpan(spans, 4.5)?.annotation_id).toBe("ann_3");
    expect(nextSpan(spans, 6)).toBeUndefined();
    expect(previousSpan(spans, 7)?.annotation_id).toBe("ann_3");
    expect(previousSpan(spans, 6.2)?.annotation_id).toBe("ann_4");
    expect(previousSpan(spans, 0.2)).toBeUndefined();
  });

  it("names the spans under the playhead by their place in time, not in the order the import listed them", () => {
    // ann_1 is listed second but starts first: it is span 1 of 4.
    expect(spansNow(spans, 1).map((n) => [n.span.annotation_id, n.position])).toEqual([["ann_1", 1]]);
    // Inside the recovery, both it and the phase around it, the phase first (it started first).
    expect(spansNow(spans, 4.5).map((n) => [n.span.annotation_id, n.position])).toEqual([
      ["ann_2", 2],
      ["ann_4", 3],
    ]);
    expect(spansNow(spans, 9)).toEqual([]);
    expect(positionText([1], 4)).toBe("span 1 of 4");
    expect(positionText([2, 3], 4)).toBe("spans 2 and 3 of 4");
    expect(positionText([2, 3, 4], 9)).toBe("spans 2, 3 and 4 of 9");
  });

  it("shows minutes and tenths", () => {
    expect(formatClock(0)).toBe("0:00.0");
    expect(formatClock(65.34)).toBe("1:05.3");
    expect(formatClock(-1)).toBe("0:00.0");
  });
});
