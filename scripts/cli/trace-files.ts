import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { linkRoots } from "@/lib/local-path";
import { DatasetDirectory } from "@/lib/lerobot/walk";
import type { TraceInput } from "@/lib/fingerprints/trace";

/** Files larger than this are traced by their sha256 and last bytes only (a verbatim copy, a trailer). */
const MAX_READ_BYTES = 1024 ** 3;

/**
 * The files `das-admin trace` is given, one at a time: each file, and each file of each directory
 * (a LeRobot dataset, or a Hugging Face snapshot, whose files are links into the cache's blobs/),
 * read the way the importer reads a dataset directory: links followed only inside it (or into the
 * snapshot's blobs), hidden files and directories left out.
 */
export async function* tracedFiles(inputs: string[]): AsyncGenerator<TraceInput> {
  for (const input of inputs) {
    const info = await stat(input);
    if (!info.isDirectory()) {
      yield await readForTrace(input, input);
      continue;
    }
    const directory = new DatasetDirectory(input, await linkRoots(input), {
      report: (problem) => process.stderr.write(`das-admin: ${problem.file}: ${problem.message}\n`),
      notice: () => {},
    });
    for await (const relative of directory.walk("", new Set())) {
      const real = await directory.realPathOf(relative);
      yield await readForTrace(path.join(input, relative), real);
    }
  }
}

async function readForTrace(name: string, file: string): Promise<TraceInput> {
  const { size } = await stat(file);
  if (size <= MAX_READ_BYTES) return { name, bytes: new Uint8Array(await readFile(file)) };
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  const handle = await open(file);
  try {
    const tail = Buffer.alloc(Math.min(size, 4096));
    await handle.read(tail, 0, tail.length, size - tail.length);
    return { name, sha256: hash.digest("hex"), size, tail };
  } finally {
    await handle.close();
  }
}
