import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError } from "../errors";
import { parseQuery } from "./query";

const schema = z.object({
  limit: z.string().regex(/^\d+$/).transform(Number).optional(),
  outcome: z.enum(["success", "failure"]).optional(),
});
const url = (search: string) => new URL(`http://service.test/api/v1/things${search}`);

// Parsed queries are kept per schema and query string: what is kept must be what a parse gives,
// must not be changeable by whoever receives it, and a refusal must stay a refusal.
describe("parseQuery", () => {
  it("gives the same parse for the same query, kept and frozen", () => {
    const first = parseQuery(url("?limit=5&outcome=success"), schema);
    expect(first).toEqual({ limit: 5, outcome: "success" });
    const again = parseQuery(url("?limit=5&outcome=success"), schema);
    expect(again).toBe(first);
    expect(Object.isFrozen(again)).toBe(true);
    expect(() => {
      (again as { limit?: number }).limit = 1000;
    }).toThrow(TypeError);
    expect(parseQuery(url("?limit=5&outcome=success"), schema).limit).toBe(5);
  });

  it("refuses a bad query every time it is sent, and keeps queries apart by schema", () => {
    for (let i = 0; i < 2; i++) {
      expect(() => parseQuery(url("?outcome=maybe"), schema)).toThrow(AppError);
      expect(() => parseQuery(url("?limit=1&limit=2"), schema)).toThrow(/more than once/);
      expect(() => parseQuery(url("?outcomes=success"), schema)).toThrow(/Unknown query parameter/);
    }
    const other = z.object({ outcome: z.string().optional() });
    expect(parseQuery(url("?outcome=maybe"), other)).toEqual({ outcome: "maybe" });
    expect(() => parseQuery(url("?outcome=maybe"), schema)).toThrow(AppError);
  });

  it("parses a long query each time without keeping it", () => {
    const long = `?outcome=success&limit=${"0".repeat(600)}7`;
    const first = parseQuery(url(long), schema);
    expect(first).toEqual({ outcome: "success", limit: 7 });
    expect(parseQuery(url(long), schema)).not.toBe(first);
  });
});
