import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { rateLimitHeaders } from "../http/rate-limit-headers";
import { createRateLimiters, type RateLimiters } from "./rate-limit";

const opened: RateLimiters[] = [];
const limiters = (options: Parameters<typeof createRateLimiters>[0]) => {
  const created = createRateLimiters(options);
  opened.push(created);
  return created;
};
afterAll(async () => {
  for (const l of opened) await l.close();
});

const id = () => randomBytes(6).toString("hex");

describe("in-process budgets", () => {
  it("allow the limit, then refuse with Retry-After until the window resets", async () => {
    const { perKey } = limiters({ perMinute: 3, authFailuresPerMinute: 2 });
    const key = id();
    const states = [];
    for (let i = 0; i < 4; i++) states.push(await perKey.consume(key));
    expect(states.map((s) => s.remaining)).toEqual([2, 1, 0, 0]);
    expect(states.map((s) => s.limited)).toEqual([false, false, false, true]);
    const headers = rateLimitHeaders(states[3]!);
    expect(headers["RateLimit-Limit"]).toBe("3");
    expect(headers["RateLimit-Remaining"]).toBe("0");
    expect(Number(headers["Retry-After"])).toBeGreaterThanOrEqual(1);
    expect(Number(headers["Retry-After"])).toBeLessThanOrEqual(60);
    expect(headers["Retry-After"]).toMatch(/^\d+$/);
    expect(rateLimitHeaders(states[0]!)["Retry-After"]).toBeUndefined();
  });

  it("keep each key's budget apart, and peek without spending", async () => {
    const { perKey, authFailuresPerIp } = limiters({ perMinute: 1, authFailuresPerMinute: 1 });
    const [a, b] = [id(), id()];
    expect((await perKey.consume(a)).limited).toBe(false);
    expect((await perKey.consume(a)).limited).toBe(true);
    expect((await perKey.consume(b)).limited).toBe(false);
    expect(await authFailuresPerIp.peek("10.0.0.1")).toMatchObject({ remaining: 1, limited: false });
    expect(await authFailuresPerIp.peek("10.0.0.1")).toMatchObject({ remaining: 1, limited: false });
  });

  it("are per process: two instances without Redis do not share", async () => {
    const key = id();
    const one = limiters({ perMinute: 1, authFailuresPerMinute: 1 });
    const two = limiters({ perMinute: 1, authFailuresPerMinute: 1 });
    expect((await one.perKey.consume(key)).limited).toBe(false);
    expect((await two.perKey.consume(key)).limited).toBe(false);
  });
});

describe.runIf(process.env.REDIS_URL)("budgets in Redis", () => {
  it("are shared by every instance pointing at the same Redis", async () => {
    const keyPrefix = `das:test:${id()}`;
    const one = limiters({ redisUrl: process.env.REDIS_URL, perMinute: 4, authFailuresPerMinute: 1, keyPrefix });
    const two = limiters({ redisUrl: process.env.REDIS_URL, perMinute: 4, authFailuresPerMinute: 1, keyPrefix });
    const key = id();
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await (i % 2 ? two : one).perKey.consume(key));
    expect(results.map((r) => r.limited)).toEqual([false, false, false, false, true, true]);
    expect(results.map((r) => r.remaining)).toEqual([3, 2, 1, 0, 0, 0]);
    expect((await one.perKey.peek(key)).limited).toBe(true);
  });
});
