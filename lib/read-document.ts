import { stat } from "node:fs/promises";
import type { z } from "zod";
import { parseJsonDocument, type Problem } from "./json-document";
import { readLines } from "./read-lines";

/** The most a whole JSON document may hold: dataset.json, version.json, LeRobot's meta/info.json, a --changelog file (docs/import-format.md). */
export const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

/**
 * Reads a whole JSON document and checks it against a schema, every problem at `name:line`: a
 * file that is missing or not a regular file, longer than MAX_DOCUMENT_BYTES, with a line that is
 * not valid UTF-8 or longer than a line may be (read-lines.ts: never read with replacement
 * characters), not JSON, or not of the schema. Returns the value and the text it was parsed
 * from (lines joined with LF whatever the file used, so offsets fall on the same line numbers).
 */
export async function readDocument<S extends z.ZodType>(
  file: string,
  name: string,
  schema: S,
  problems: { add(...problems: Problem[]): void },
): Promise<{ value?: z.infer<S>; text?: string }> {
  const kind = await stat(file).catch((error: NodeJS.ErrnoException) => error);
  if (kind instanceof Error) {
    problems.add({
      file: name,
      line: 0,
      message: kind.code === "ENOENT" ? "file is missing" : `cannot be read (${kind.message})`,
    });
    return {};
  }
  // A FIFO or a device would block or never end.
  if (!kind.isFile()) {
    problems.add({ file: name, line: 0, message: "not a regular file" });
    return {};
  }
  const lines: string[] = [];
  let bytes = 0;
  let readable = true;
  try {
    for await (const line of readLines(file)) {
      bytes += line.bytes + 1;
      if (bytes > MAX_DOCUMENT_BYTES) {
        problems.add({
          file: name,
          line: line.number,
          message: `file is longer than ${MAX_DOCUMENT_BYTES.toLocaleString("en")} bytes, the limit for ${name}`,
        });
        return {};
      }
      if ("problem" in line) {
        problems.add({ file: name, line: line.number, message: line.problem });
        readable = false;
      } else lines.push(line.text);
    }
  } catch (error) {
    problems.add({ file: name, line: 0, message: `cannot be read (${(error as Error).message})` });
    return {};
  }
  if (!readable) return {};
  const text = lines.join("\n");
  const result = parseJsonDocument(name, text, schema);
  problems.add(...result.problems);
  return { value: result.value, text };
}
