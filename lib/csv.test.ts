import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseCsv } from "@/lib/testing/disclosure-fixtures";
import { csvLine, CsvRecords } from "./csv";

describe("csvLine", () => {
  it("quotes commas, quotes, line breaks and edge spaces (RFC 4180)", () => {
    expect(csvLine(["plain", "a,b", 'say "hi"', "two\nlines", " padded", null, undefined, 42, true])).toBe(
      'plain,"a,b","say ""hi""","two\nlines"," padded",,,42,true\r\n',
    );
    expect(csvLine([["a", "b"], { k: "v" }, "one; two"])).toBe('"a;b","{""k"":""v""}","one; two"\r\n');
  });

  // OWASP's CSV injection rule: a cell a spreadsheet would run as a formula gets a leading quote
  // (read as "this is text") and is quoted as a field.
  it.each([
    ['=HYPERLINK("http://evil","x")', `"'=HYPERLINK(""http://evil"",""x"")"`],
    ["=1+1", `"'=1+1"`],
    ["+1+1", `"'+1+1"`],
    ["-1+1", `"'-1+1"`],
    ["-1.5", `"'-1.5"`],
    ["@SUM(A1:A2)", `"'@SUM(A1:A2)"`],
    ["\t=1+1", `"'\t=1+1"`],
    ["\tplain", `"'\tplain"`],
    ["\r=1+1", `"'\r=1+1"`],
    ["  =1+1", `"'  =1+1"`],
    ["\n@cmd", `"'\n@cmd"`],
    ["-", `"'-"`],
  ])("neutralises %j", (cell, field) => {
    expect(csvLine([cell])).toBe(`${field}\r\n`);
    // What a CSV reader gets back is the cell as text, behind the one quote.
    expect(parseCsv(csvLine([cell, "next"]))).toEqual([[`'${cell}`, "next"]]);
  });

  it("neutralises the text of arrays and objects too, and leaves cells that merely contain a sign", () => {
    expect(csvLine([["=cmd", "b"]])).toBe(`"'=cmd;b"\r\n`);
    expect(csvLine([["b", "=cmd", "+1"]])).toBe(`"b;'=cmd;'+1"\r\n`);
    expect(csvLine(["a=b", "x-y", "mail@example.com", "1+1"])).toBe("a=b,x-y,mail@example.com,1+1\r\n");
  });

  // A spreadsheet in a locale that separates lists with ";" splits a comma-separated file on
  // semicolons when it opens it: every text after a semicolon is the start of a cell there.
  it.each([
    ['acme;=HYPERLINK("http://evil","x")', `"acme;'=HYPERLINK(""http://evil"",""x"")"`],
    ["a; @SUM(A1)", `"a;' @SUM(A1)"`],
    ["a;\tb", `"a;'\tb"`],
    ["=1;-2", `"'=1;'-2"`],
    ["a;b", `"a;b"`],
  ])("neutralises %j at every cell a semicolon would start", (cell, field) => {
    expect(csvLine([cell])).toBe(`${field}\r\n`);
    // Split as such a spreadsheet splits it, no piece starts a formula.
    for (const piece of parseCsv(csvLine([cell]))[0]![0]!.split(";"))
      expect(piece).not.toMatch(/^(?:[\t\r]|\s*[=+\-@])/);
  });

  it("treats every text as the rule says, built from the characters that matter at any place", () => {
    // The rule written out plainly: each cell a spreadsheet may see (the field, and each piece after
    // a semicolon) gets a quote in front if it starts a formula; the field is quoted if anything
    // was neutralised or it holds a quote, comma, semicolon or line break or has a space at an end.
    const byRule = (text: string) => {
      const cells = text.split(";").map((cell) => (/^(?:[\t\r]|\s*[=+\-@])/.test(cell) ? `'${cell}` : cell));
      const quoted = cells.join(";") !== text || /[",;\r\n]|^\s|\s$/.test(text);
      return quoted ? `"${cells.join(";").replaceAll('"', '""')}"` : text;
    };
    const parts = ["", "a", " ", "\t", "\r", "\n", '"', ",", ";", "=", "+", "-", "@", "\u00a0", "x=1"];
    let checked = 0;
    for (const a of parts)
      for (const b of parts)
        for (const c of parts) {
          const text = a + b + c;
          expect(csvLine([text]), JSON.stringify(text)).toBe(`${byRule(text)}\r\n`);
          checked++;
        }
    expect(checked).toBe(parts.length ** 3);
  });

  it("writes numbers as numbers, negative ones included: a number cell is never a formula", () => {
    expect(csvLine([-1.5, 0, 2.25, -0])).toBe("-1.5,0,2.25,0\r\n");
  });
});

// The disclosure log's CSV export writes the database's raw bytes through CsvRecords: it must write
// every record exactly as csvLine does, or a formula that one neutralises would pass the other.
describe("CsvRecords, csvLine from the database's bytes", () => {
  const pieces = [
    "=",
    "+",
    "-",
    "@",
    ";",
    ",",
    '"',
    "'",
    "\t",
    "\r",
    "\n",
    "\v",
    "\f",
    " ",
    "\u00a0",
    "\u1680",
    "\u2000",
    "\u200a",
    "\u2028",
    "\u202f",
    "\u3000",
    "\ufeff",
    "\u0085",
    "\u180e",
    "\u0001",
    "a",
    "1",
    "é",
    "😀",
  ];
  const text = fc.oneof(
    fc.array(fc.constantFrom(...pieces), { maxLength: 8 }).map((p) => p.join("")),
    fc
      .array(fc.oneof(fc.constantFrom(...pieces), fc.string({ unit: "binary", maxLength: 4 })), { maxLength: 10 })
      .map((p) => p.join("")),
  );
  const field = fc.oneof(
    text.map((value) => ({ kind: "text" as const, value })),
    fc.constant({ kind: "text" as const, value: null }),
    fc.nat().map((value) => ({ kind: "number" as const, value })),
  );

  it("writes any records of text, numbers and nulls as csvLine writes them", () => {
    fc.assert(
      fc.property(fc.array(fc.array(field, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }), (rows) => {
        const records = new CsvRecords();
        for (const row of rows) {
          for (const { kind, value } of row)
            records.field(value === null ? null : Buffer.from(String(value), "utf8"), kind);
          records.end();
        }
        expect(records.take().toString()).toBe(rows.map((row) => csvLine(row.map((f) => f.value))).join(""));
      }),
      { numRuns: 2000 },
    );
  });

  it("neutralises a formula, quotes what must be quoted, and starts again empty after take()", () => {
    const records = new CsvRecords();
    for (const value of ['=HYPERLINK("http://evil","x")', "acme;=1", "plain", "a,b", " padded"])
      records.field(Buffer.from(value), "text");
    records.end();
    expect(records.take().toString()).toBe(`"'=HYPERLINK(""http://evil"",""x"")","acme;'=1",plain,"a,b"," padded"\r\n`);
    expect(records.take()).toHaveLength(0);
  });

  it("grows past its first megabyte without losing a byte, and is used again after take()", () => {
    const records = new CsvRecords();
    const long = "x".repeat(300_000);
    for (let i = 0; i < 5; i++) {
      records.field(Buffer.from(long), "text");
      records.field(Buffer.from(String(i)), "number");
      records.end();
    }
    const first = records.take();
    records.field(Buffer.from("again"), "text");
    records.end();
    expect(records.take().toString()).toBe("again\r\n");
    expect(first.toString()).toBe(`${long},0\r\n${long},1\r\n${long},2\r\n${long},3\r\n${long},4\r\n`);
  });
});
