import { afterEach, describe, expect, it, vi } from "vitest";
import { startSchedule } from "./schedule";

afterEach(() => {
  vi.useRealTimers();
});

describe("startSchedule", () => {
  it("works first after its delay, then every interval, and starts once per name", async () => {
    vi.useFakeTimers();
    const runs: string[] = [];
    const name = `test-${Math.random()}`;
    startSchedule(name, 2, 1_000, async () => void runs.push("a"));
    // Started again (a module loaded twice): the first schedule stands alone.
    startSchedule(name, 1, 10, async () => void runs.push("b"));
    await vi.advanceTimersByTimeAsync(999);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual(["a"]);
    await vi.advanceTimersByTimeAsync(2 * 60_000);
    expect(runs).toEqual(["a", "a"]);
    await vi.advanceTimersByTimeAsync(4 * 60_000);
    expect(runs).toEqual(["a", "a", "a", "a"]);
  });

  it("is off at 0 minutes", async () => {
    vi.useFakeTimers();
    const runs: number[] = [];
    startSchedule(`test-${Math.random()}`, 0, 10, async () => void runs.push(1));
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(runs).toEqual([]);
  });
});
