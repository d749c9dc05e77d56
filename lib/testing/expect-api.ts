import { expect } from "vitest";
import type { ErrorCode } from "../errors";
import { withoutRequestId, type CallResult } from "./http";

/**
 * Assertions every API test shares: the headers each response carries, the one error envelope,
 * "cannot be told apart" for non-enumeration, cursor walks, and cursors a client might forge.
 */

const RATE_LIMIT_HEADERS = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"] as const;

/** JSON, a minted request id, and the three RateLimit headers with sane numbers. */
export function expectCommonHeaders(res: CallResult): void {
  expect(res.headers.get("content-type"), res.text).toBe("application/json; charset=utf-8");
  expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{10,}$/);
  for (const name of RATE_LIMIT_HEADERS) expect(res.headers.get(name), name).toMatch(/^[0-9]+$/);
  const limit = Number(res.headers.get("ratelimit-limit"));
  expect(limit).toBeGreaterThan(0);
  expect(Number(res.headers.get("ratelimit-remaining"))).toBeLessThanOrEqual(limit);
  expect(Number(res.headers.get("ratelimit-reset"))).toBeGreaterThanOrEqual(1);
}

/** Exactly `{"error":{"code","message","request_id"}}`, with the request id of the X-Request-Id header. */
export function expectError(res: CallResult, status: number, code: ErrorCode): void {
  expect(res.status, res.text).toBe(status);
  expectCommonHeaders(res);
  expect(Object.keys(res.json)).toEqual(["error"]);
  expect(Object.keys(res.json.error)).toEqual(["code", "message", "request_id"]);
  expect(res.json.error.code).toBe(code);
  expect(typeof res.json.error.message).toBe("string");
  expect(res.json.error.message.length).toBeGreaterThan(10);
  expect(res.json.error.request_id).toBe(res.headers.get("x-request-id"));
}

/** A success without a body (a HEAD's metadata, a redirect): the request id and the RateLimit headers. */
export function expectOkWithoutBody(res: CallResult, status = 200): void {
  expect(res.status, res.text).toBe(status);
  expect(res.text).toBe("");
  expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{10,}$/);
  for (const name of RATE_LIMIT_HEADERS) expect(res.headers.get(name), name).toMatch(/^[0-9]+$/);
}

export function expectOk(res: CallResult, status = 200): void {
  expect(res.status, res.text).toBe(status);
  expectCommonHeaders(res);
  expect(res.json).toBeTypeOf("object");
  expect(res.json.error).toBeUndefined();
}

/** The headers a response carries apart from the per-request id and the rate-limit counters. */
function comparableHeaders(res: CallResult): [string, string][] {
  return [...res.headers.entries()]
    .filter(([name]) => name !== "x-request-id" && !name.startsWith("ratelimit-"))
    .sort();
}

/** Two answers a client cannot tell apart: same status, same headers, same body byte for byte apart from request_id. */
export function expectIndistinguishable(a: CallResult, b: CallResult): void {
  expect(a.status).toBe(b.status);
  expect(withoutRequestId(a.text)).toBe(withoutRequestId(b.text));
  expect(a.text.length - a.json.error.request_id.length).toBe(b.text.length - b.json.error.request_id.length);
  expect(comparableHeaders(a)).toEqual(comparableHeaders(b));
}

/** Follows next_cursor from the first page to the last; each page must be 200 and at most `limit` long. */
export async function walkPages<T = any>(
  page: (cursor: string | undefined) => Promise<CallResult>,
  arrayName: string,
  limit: number,
): Promise<{ items: T[]; pages: CallResult[] }> {
  const items: T[] = [];
  const pages: CallResult[] = [];
  let cursor: string | undefined;
  do {
    const res = await page(cursor);
    expectOk(res);
    expect(Array.isArray(res.json[arrayName]), arrayName).toBe(true);
    expect(res.json[arrayName].length).toBeLessThanOrEqual(limit);
    // A page that says there is more must be full, or a client could stop early or loop.
    if (res.json.next_cursor !== null) {
      expect(res.json[arrayName].length).toBe(limit);
      expect(typeof res.json.next_cursor).toBe("string");
    }
    items.push(...res.json[arrayName]);
    pages.push(res);
    cursor = res.json.next_cursor ?? undefined;
    expect(pages.length, "page walk does not end").toBeLessThan(10_000);
  } while (cursor);
  return { items, pages };
}

/** Ways a client could alter a cursor it was given: each must be refused with 400 invalid_cursor. */
export function tamperedCursors(cursor: string): string[] {
  const [payload, mac] = cursor.split(".") as [string, string];
  const decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { k: unknown[]; q: string };
  const reencode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
  return [
    cursor.slice(0, -1),
    cursor.slice(0, Math.floor(cursor.length / 2)),
    payload,
    `${payload}.`,
    `.${mac}`,
    `${reencode({ ...decoded, k: decoded.k.map((v) => (typeof v === "number" ? v + 1 : `${String(v)}~`)) })}.${mac}`,
    `${reencode({ ...decoded, q: "AAAAAAAAAAAAAAAA" })}.${mac}`,
    `${payload}.${flip(mac, 0)}`,
    `${flip(payload, 2)}.${mac}`,
    `${cursor}.${mac}`,
    "not-a-cursor",
    "....",
  ];
}
