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

  it("treats every text as the rule says, built from the characters that matter at any place", () => {
    // The rule written out plainly: neutralised if a formula's start, else quoted if it holds a
    // quote, comma or line break or has a space at an end, else as it is.
    const byRule = (text: string) =>
      /^(?:[\t\r]|\s*[=+\-@])/.test(text) ? `"'${text.replaceAll('"', '""')}"` : /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
    const parts = ["", "a", " ", "\t", "\r", "\n", '"', ",", "=", "+", "-", "@", "\u00a0", "x=1"];
    let checked = 0;
    for (const a of parts) for (const b of parts) for (const c of parts) {
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
