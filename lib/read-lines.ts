import { isUtf8 } from "node:buffer";
import { createReadStream } from "node:fs";

/**
 * The longest line an import file may hold, in bytes, line break not counted (docs/import-format.md).
 * Real lines are far shorter: the longest field is a description of up to 100,000 characters,
 * which is at most 600 KB even with every character written as a JSON escape.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

export type Line = { number: number; bytes: number; text: string } | { number: number; bytes: number; problem: string };

const tooLong = (maxBytes: number) =>
  `line is longer than ${maxBytes.toLocaleString("en")} bytes, the limit for a line`;

const LF = 0x0a;
const CR = 0x0d;

/**
 * The lines of a file, numbered from 1 and split at LF (a CR before it is dropped), each checked to
 * be valid UTF-8 and at most `maxBytes` long. The file is read as bytes and a line's bytes beyond
 * the limit are dropped as they arrive, so a line of any size costs at most `maxBytes` of memory;
 * Node's own 'utf8' decoding would replace invalid bytes with U+FFFD and go on silently.
 */
export function readLines(file: string, maxBytes = MAX_LINE_BYTES, signal?: AbortSignal): AsyncGenerator<Line> {
  // The signal stops the read itself: a line with no end (a sparse file of zeros) never yields.
  return splitLines(createReadStream(file, { signal }), maxBytes);
}

/** readLines over any source of bytes. */
export async function* splitLines(source: AsyncIterable<Buffer>, maxBytes = MAX_LINE_BYTES): AsyncGenerator<Line> {
  let number = 0;
  let kept: Buffer[] = [];
  let keptBytes = 0;
  let bytes = 0;
  let endsInCr = false;

  const finish = (): Line => {
    number++;
    const parts = kept;
    // The CR of a CRLF ends the line; it is not part of it.
    const length = endsInCr ? bytes - 1 : bytes;
    kept = [];
    keptBytes = 0;
    bytes = 0;
    endsInCr = false;
    if (length > maxBytes) return { number, bytes: length, problem: tooLong(maxBytes) };
    const line = (parts.length === 1 ? parts[0]! : Buffer.concat(parts)).subarray(0, length);
    if (!isUtf8(line)) return { number, bytes: length, problem: "line is not valid UTF-8" };
    return { number, bytes: length, text: line.toString("utf8") };
  };

  for await (const chunk of source) {
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(LF, start);
      const stop = end === -1 ? chunk.length : end;
      // One byte over the limit is kept: it may be the CR of a CRLF.
      const room = maxBytes + 1 - keptBytes;
      if (room > 0 && stop > start) {
        const part = chunk.subarray(start, Math.min(stop, start + room));
        kept.push(part);
        keptBytes += part.length;
      }
      if (stop > start) {
        bytes += stop - start;
        endsInCr = chunk[stop - 1] === CR;
      }
      if (end === -1) break;
      yield finish();
      start = end + 1;
    }
  }
  if (bytes > 0) yield finish();
}
