import { describe, expect, it } from "vitest";
import { Lru } from "./lru";

describe("Lru", () => {
  it("holds at most its capacity, dropping the oldest first", () => {
    const lru = new Lru<number, string>(4);
    for (let i = 0; i < 10; i++) lru.set(i, `v${i}`);
    expect(lru.size).toBe(4);
    expect([6, 7, 8, 9].map((k) => lru.get(k))).toEqual(["v6", "v7", "v8", "v9"]);
    expect(lru.get(5)).toBeUndefined();
  });

  it("keeps an entry read while it is among the older half, and drops those not read", () => {
    const lru = new Lru<number, number>(10);
    for (let i = 0; i < 10; i++) lru.set(i, i);
    // 0 and 1 are the oldest: reading 1 moves it to the newest end.
    expect(lru.get(1)).toBe(1);
    for (let i = 10; i < 18; i++) lru.set(i, i);
    expect(lru.get(1)).toBe(1);
    expect(lru.get(0)).toBeUndefined();
    for (let i = 2; i < 9; i++) expect(lru.get(i)).toBeUndefined();
  });

  it("never lets an entry read again and again be dropped before one never read", () => {
    const lru = new Lru<number, number>(100);
    for (let i = 0; i < 10_000; i++) {
      lru.set(i, i);
      expect(lru.get(0)).toBe(0);
    }
    expect(lru.size).toBe(100);
  });

  it("bounds weight, not entries, with a weigh function", () => {
    const lru = new Lru<string, string>(10, (v) => v.length);
    lru.set("a", "12345");
    lru.set("b", "12345");
    lru.set("c", "123");
    expect(lru.weight).toBeLessThanOrEqual(10);
    expect(lru.get("a")).toBeUndefined();
    lru.set("huge", "x".repeat(11));
    expect(lru.get("huge")).toBeUndefined();
  });
});
