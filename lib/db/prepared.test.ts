import type { PendingQuery, Row } from "postgres";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createDb, type Sql } from "./client";
import { executePrepared } from "./prepared";

// As a transaction-mode pooler makes the driver (nothing prepared by it), on one connection, so
// that the statements the server session keeps are the ones these calls made.
const db = createDb(inject("databaseUrl"), { max: 1, transactionPooler: true });
const sql = db.$client as unknown as Sql;

afterAll(() => db.$client.end({ timeout: 5 }));

/** executePrepared as the append calls it: inside a transaction, where its statements share a session. */
const inTransaction = <T extends readonly Row[]>(query: PendingQuery<T>) =>
  sql.begin((tx) => executePrepared(tx as unknown as Sql, query)) as Promise<T>;

const kept = () =>
  sql<{ name: string; custom_plans: string; generic_plans: string }[]>`
    select name, custom_plans, generic_plans from pg_prepared_statements where name like 'das\\_%' order by name`;

describe("executePrepared", () => {
  it("hands the server every value as the driver would have sent it: quotes, escapes, braces, nulls, dates", async () => {
    const awkward = [
      "it's",
      'say "hi"',
      "back\\slash",
      "{braces},commas",
      "NULL",
      "",
      "$p$ $do$",
      "line\nbreak",
      "é ✓",
    ];
    const at = new Date("2026-12-02T13:44:07.123Z");
    const query = sql<
      { texts: string[]; alone: string; numbers: string; none: string[]; at: Date; yes: boolean; big: string }[]
    >`
      select ${awkward}::text[] as texts, ${awkward[0]!}::text || ${awkward[2]!} as alone, ${[1, null, 3]}::int[]::text as numbers,
        ${[] as string[]}::text[] as none, ${at} as at, ${true} as yes, ${12345678901234567n as unknown as string}::bigint + 1 as big
      where ${null}::text is null and ${"x"} = 'x'`;
    const [row] = await inTransaction(query);
    expect(row).toEqual({
      texts: awkward,
      alone: "it'sback\\slash",
      numbers: "{1,NULL,3}",
      none: [],
      at,
      yes: true,
      big: "12345678901234568",
    });
  });

  it("prepares a statement once per session, by its text: a second call executes it, another text is another", async () => {
    const before = (await kept()).length;
    const add = (n: number) => sql<{ sum: number }[]>`select ${n}::int + 1 as sum`;
    for (let n = 0; n < 8; n++) expect((await inTransaction(add(n)))[0]!.sum).toBe(n + 1);
    await inTransaction(sql`select ${1}::int - 1 as difference`);
    const after = await kept();
    expect(after).toHaveLength(before + 2);
    const plans = after.map((s) => Number(s.custom_plans) + Number(s.generic_plans));
    expect(plans).toContain(8);
    expect(plans).toContain(1);
  });

  it("keeps what it prepared when the transaction that prepared it rolls back", async () => {
    const query = () => sql<{ answer: string }[]>`select ${"kept across a rollback"}::text as answer`;
    await sql
      .begin(async (tx) => {
        await executePrepared(tx as unknown as Sql, query());
        throw new Error("roll back");
      })
      .catch(() => {});
    const before = (await kept()).length;
    expect((await inTransaction(query()))[0]!.answer).toBe("kept across a rollback");
    expect((await kept()).length).toBe(before);
  });

  it("refuses what it cannot write as a literal rather than send something else", async () => {
    await expect(inTransaction(sql`select ${[[1, 2]] as unknown as number[]}::int[]`)).rejects.toThrow(/flat arrays/);
    await expect(inTransaction(sql.unsafe("select 1") as never)).rejects.toThrow(/tagged template/);
    await expect(inTransaction(sql`select ${"a\u0000b"}::text`)).rejects.toThrow(/NUL/);
    await expect(inTransaction(sql`select ${["a", "\u0000"]}::text[]`)).rejects.toThrow(/NUL/);
    // Outside a transaction a pooler may run the PREPARE and the EXECUTE on two server sessions.
    await expect(executePrepared(sql, sql`select ${1}::int as one`)).rejects.toThrow(/inside a transaction/);
  });
});
