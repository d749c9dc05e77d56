import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_LINE_BYTES, readLines, splitLines, type Line } from "./read-lines";

const dir = mkdtempSync(path.join(tmpdir(), "das-read-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function fileOf(content: Buffer | string): string {
  const file = path.join(dir, `f${files++}`);
  writeFileSync(file, content);
  return file;
}

async function linesOf(file: string, maxBytes?: number): Promise<Line[]> {
  const lines: Line[] = [];
  for await (const line of readLines(file, maxBytes)) lines.push(line);
  return lines;
}

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

describe("readLines", () => {
  it("numbers lines from 1, splits at LF, drops the CR of CRLF and keeps blank lines", async () => {
    expect(await linesOf(fileOf("a\r\nb\n\nc"))).toEqual([
      { number: 1, bytes: 1, text: "a" },
      { number: 2, bytes: 1, text: "b" },
      { number: 3, bytes: 0, text: "" },
      { number: 4, bytes: 1, text: "c" },
    ]);
    expect(await linesOf(fileOf("only\n"))).toEqual([{ number: 1, bytes: 4, text: "only" }]);
    expect(await linesOf(fileOf(""))).toEqual([]);
  });

  it("keeps free text as it is: tabs, a CR inside a line, U+2028 and every script", async () => {
    const text = "tab\there, cr\rinside, sep\u2028arator, données 日本語 🤖";
    expect(await linesOf(fileOf(`${text}\n`))).toEqual([{ number: 1, bytes: Buffer.byteLength(text), text }]);
  });

  it.each([
    ["a byte that starts no character", [0xff]],
    ["a lone continuation byte", [0x80]],
    ["an overlong encoding of '/'", [0xc0, 0xaf]],
    ["a surrogate encoded in UTF-8 (CESU-8)", [0xed, 0xa0, 0x80]],
    ["a sequence cut short", [0xe6, 0x97]],
    ["a code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
  ])("reports a line that is not valid UTF-8 (%s) at its number, and reads on", async (_what, bad) => {
    const lines = await linesOf(fileOf(bytes('{"a":1}\n{"task":"pick ', bad, ' cube"}\n{"b":2}')));
    expect(lines.map((l) => ("text" in l ? l.text : l.problem))).toEqual([
      '{"a":1}',
      "line is not valid UTF-8",
      '{"b":2}',
    ]);
    expect(lines[1]!.number).toBe(2);
  });

  it("reports invalid UTF-8 on the last line, without a line break after it", async () => {
    expect(await linesOf(fileOf(bytes("ok\nbad ", [0xe6, 0x97])))).toEqual([
      { number: 1, bytes: 2, text: "ok" },
      { number: 2, bytes: 6, problem: "line is not valid UTF-8" },
    ]);
  });

  it("reads a character whose bytes are split between two reads of the file", async () => {
    // The stream reads 64 KiB at a time: "é" (2 bytes) straddles the first boundary.
    const text = `${"x".repeat(64 * 1024 - 1)}é${"y".repeat(10)}`;
    expect(await linesOf(fileOf(`${text}\n`))).toEqual([{ number: 1, bytes: Buffer.byteLength(text), text }]);
  });

  it("takes a line of exactly the limit, with LF or CRLF, and refuses one byte more", async () => {
    const limit = 10;
    const lines = await linesOf(
      fileOf(`${"a".repeat(10)}\n${"b".repeat(10)}\r\n${"c".repeat(11)}\n${"d".repeat(11)}\r\nshort`),
      limit,
    );
    expect(lines).toEqual([
      { number: 1, bytes: 10, text: "a".repeat(10) },
      { number: 2, bytes: 10, text: "b".repeat(10) },
      { number: 3, bytes: 11, problem: "line is longer than 10 bytes, the limit for a line" },
      { number: 4, bytes: 11, problem: "line is longer than 10 bytes, the limit for a line" },
      { number: 5, bytes: 5, text: "short" },
    ]);
  });

  it("refuses a 64 MB line with its number, goes on to the next, and never holds more of it than the limit", async () => {
    // What stays alive while the line streams through, measured after a full collection: the
    // garbage of chunks already dropped is the collector's business, not a leak.
    v8.setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const live = async () => {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const before = await live();
    let peak = 0;
    const MiB = 1024 * 1024;
    async function* source() {
      yield Buffer.from('{"first":true}\n{"task":"');
      for (let i = 0; i < 64; i++) {
        yield Buffer.alloc(MiB, "x");
        if (i % 4 === 3) peak = Math.max(peak, (await live()) - before);
      }
      yield Buffer.from('"}\n{"third":true}\n');
    }
    const lines: Line[] = [];
    for await (const line of splitLines(source())) lines.push(line);
    expect(lines.map((l) => ("text" in l ? l.text : l.problem))).toEqual([
      '{"first":true}',
      `line is longer than ${MAX_LINE_BYTES.toLocaleString("en")} bytes, the limit for a line`,
      '{"third":true}',
    ]);
    expect(lines[1]).toMatchObject({ number: 2, bytes: 64 * MiB + 11 });
    // Holding the line whole would keep 64 MB (more as a string); the reader keeps the first 1 MiB.
    expect(peak).toBeLessThan(8 * MiB);
  });
});
