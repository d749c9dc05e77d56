import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { newRequestId } from "./http/request-id";
import { base62, newId, newLogId } from "./ids";

const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The base62 of a byte string as first written, in BigInt: what `base62` must still answer. */
function base62BigInt(bytes: Uint8Array): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  while (n > 0n) {
    out = alphabet[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(Math.ceil((bytes.length * 8) / Math.log2(62)), "0");
}

describe("ids", () => {
  it("write bytes in base62 as the number they are, whatever their length and values", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 33 }), (bytes) => {
        expect(base62(bytes)).toBe(base62BigInt(bytes));
      }),
      { numRuns: 2000 },
    );
    for (const edge of [
      new Uint8Array(12),
      new Uint8Array(12).fill(255),
      new Uint8Array(16).fill(255),
      Uint8Array.of(1),
    ])
      expect(base62(edge)).toBe(base62BigInt(edge));
  });

  it("of requests are 96 random bits in base62, never the same twice across the pool's refills", () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[0-9A-Za-z]{17}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("carry their kind and 128 random bits in base62", () => {
    expect(newId("key")).toMatch(/^key_[0-9A-Za-z]{22}$/);
    expect(new Set(Array.from({ length: 1000 }, () => newId("dl"))).size).toBe(1000);
  });

  it("of the log carry the time they were made, then 80 random bits, in the API's alphabet", () => {
    const madeAt = Date.UTC(2026, 10, 23, 4, 5, 6, 789);
    const id = newLogId("dl", madeAt);
    expect(id).toMatch(/^dl_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
    expect(Number.parseInt(id.slice(3, 15), 16)).toBe(madeAt);
    expect(newLogId("pv")).toMatch(/^pv_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
    expect(new Set(Array.from({ length: 1000 }, () => newLogId("dl", madeAt))).size).toBe(1000);
  });

  it("of the log sort in the order they were made, in bytes and in PostgreSQL under C, the database's default and ICU collations", async () => {
    // Instants that cross hex digits' boundaries (…0fff to …1000, 9 to a) as well as arbitrary ones,
    // each with random bits that would sort the other way if they counted first.
    const instants = fc.sample(fc.integer({ min: 0, max: 2 ** 48 - 1 }), 300);
    for (const edge of [0x9, 0xa, 0xf, 0x10, 0xfff, 0x1000, 0x9fff_ffff, 0xa000_0000, 2 ** 48 - 1]) instants.push(edge);
    const made = [...new Set(instants)].sort((a, b) => a - b);
    const ids = made.map((t, i) =>
      newLogId(
        "dl",
        t,
        Uint8Array.from({ length: 10 }, () => (i % 2 ? 0 : 255)),
      ),
    );
    expect([...ids].sort(byBytes)).toEqual(ids);
    const shuffled = fc.sample(fc.shuffledSubarray(ids, { minLength: ids.length }), 1)[0]!;
    const sql = getDb().$client;
    for (const collation of ["C", "default", "und-x-icu", "en-US-x-icu"]) {
      const [known] = await sql<
        { n: number }[]
      >`select count(*)::int as n from pg_collation where collname = ${collation}`;
      if (collation !== "default") expect(known!.n, `collation ${collation} on this server`).toBe(1);
      const rows = await sql<{ id: string }[]>`
        select id from unnest(${shuffled}::text[]) as id order by id collate ${sql(collation)}`;
      expect(
        rows.map((r) => r.id),
        collation,
      ).toEqual(ids);
    }
  });
});
