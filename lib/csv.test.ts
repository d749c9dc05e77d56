import { describe, expect, it } from "vitest";
import { parseCsv } from "@/lib/testing/disclosure-fixtures";
import { csvLine } from "./csv";

describe("csvLine", () => {
  it("quotes commas, quotes, line breaks and edge spaces (RFC 4180)", () => {
    expect(csvLine(["plain", "a,b", 'say "hi"', "two\nlines", " padded", null, undefined, 42, true])).toBe(
      'plain,"a,b","say ""hi""","two\nlines"," padded",,,42,true\r\n',
    );
    expect(csvLine([["a", "b"], { k: "v" }])).toBe('a;b,"{""k"":""v""}"\r\n');
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
    expect(csvLine(["a=b", "x-y", "mail@example.com", "1+1"])).toBe("a=b,x-y,mail@example.com,1+1\r\n");
  });

  it("writes numbers as numbers, negative ones included: a number cell is never a formula", () => {
    expect(csvLine([-1.5, 0, 2.25, -0])).toBe("-1.5,0,2.25,0\r\n");
  });
});
