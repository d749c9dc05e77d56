import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { ManifestFile } from "./api";
import { describe } from "./api";
import { backoffSeconds, MAX_WAIT_SECONDS, retryAfterSeconds, sleep, waitTooLong } from "./retry";

/**
 * One file from a signed URL into `dest`: written to `dest.das-partial` and renamed into place
 * only once its size and SHA-256 match the manifest. A partial file left by an interrupted run is
 * continued with an HTTP Range request; a store that ignores Range sends the whole file again,
 * which is written from the start. The SHA-256 is taken of the bytes as they are written (after
 * those of a partial file continued), so that no file is read back after it is fetched.
 */

export const PARTIAL_SUFFIX = ".das-partial";

/** What a file is checked against: its size and SHA-256 (in the plan, or a manifest). */
type Checked = Pick<ManifestFile, "path" | "size_bytes" | "sha256">;
export const partialPath = (dest: string) => `${dest}${PARTIAL_SUFFIX}`;

export type TransferResult =
  | { ok: true; resumedFrom: number; rangeIgnored: boolean }
  /** The store refused the URL (403): it expired, so a fresh one is needed. */
  | { ok: false; expired: true }
  | { ok: false; expired?: false; reason: string };

export type TransferOptions = {
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** Bytes received, chunk by chunk. */
  onBytes?: (n: number) => void;
  onWait?: (what: string, seconds: number) => void;
  throttle?: Throttle;
  maxAttempts?: number;
  sleep?: (ms: number) => Promise<void>;
};

/** Shares one byte rate (bytes per second) between all transfers. */
export class Throttle {
  private readonly start = Date.now();
  private taken = 0;
  constructor(private readonly bytesPerSecond: number) {}

  async take(n: number, signal?: AbortSignal): Promise<void> {
    this.taken += n;
    const due = this.start + (this.taken / this.bytesPerSecond) * 1000;
    const wait = due - Date.now();
    if (wait > 0) await sleepUnless(wait, signal);
  }
}

export async function sha256File(file: string): Promise<string> {
  return (await hashed(file, createHash("sha256"))).digest("hex");
}

/** `hash` updated with the bytes of `file`. */
async function hashed(file: string, hash: Hash): Promise<Hash> {
  for await (const chunk of createReadStream(file, { highWaterMark: READ_BYTES })) hash.update(chunk as Buffer);
  return hash;
}

/** Bytes per read of a file being hashed, and per write of one being fetched: a few large system calls rather than many small ones. */
const READ_BYTES = 1 << 20;
const WRITE_BYTES = 1 << 19;

/** The size of the file at `file`, or undefined when there is none to stat. */
export async function sizeOf(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).size;
  } catch {
    return undefined;
  }
}

/** A file already on disk: verified against the manifest, missing, or different. */
export async function localState(dest: string, file: Checked): Promise<"verified" | "missing" | "corrupt"> {
  const size = await sizeOf(dest);
  if (size === undefined) return "missing";
  if (size !== file.size_bytes) return "corrupt";
  return (await sha256File(dest)) === file.sha256 ? "verified" : "corrupt";
}

export async function fetchFile(
  file: Checked,
  url: string,
  dest: string,
  options: TransferOptions = {},
): Promise<TransferResult> {
  const doFetch = options.fetch ?? fetch;
  const maxAttempts = options.maxAttempts ?? 6;
  const wait = async (seconds: number, why: string) => {
    options.onWait?.(`${file.path}: ${why}`, seconds);
    await (options.sleep ?? ((ms: number) => sleepUnless(ms, options.signal)))(seconds * 1000);
  };
  const temp = partialPath(dest);
  await mkdir(path.dirname(dest), { recursive: true });
  let resumedFrom = 0;
  let rangeIgnored = false;
  let restartedAfterMismatch = false;
  let lastProblem = "no attempt made";

  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    /** What this attempt wrote: the file's size after it, and the SHA-256 of all of it so far. */
    let received: { size: number; hash: Hash } | undefined;
    let offset = (await sizeOf(temp)) ?? 0;
    if (offset > file.size_bytes) {
      await rm(temp, { force: true });
      offset = 0;
    }
    if (offset < file.size_bytes || file.size_bytes === 0) {
      if (attempt === 1) resumedFrom = offset;
      const headers: Record<string, string> = offset > 0 ? { Range: `bytes=${offset}-` } : {};
      let response: Response;
      try {
        response = await doFetch(url, { headers, signal: options.signal });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        lastProblem = `cannot reach the store: ${describe(error)}`;
        await wait(backoffSeconds(attempt), lastProblem);
        continue;
      }
      if (response.status === 403) {
        await response.body?.cancel();
        return { ok: false, expired: true };
      }
      if (response.status === 416) {
        // The partial file does not fit the object: start over.
        await response.body?.cancel();
        await rm(temp, { force: true });
        lastProblem = "the store refused the byte range";
        continue;
      }
      if ([408, 429, 500, 502, 503, 504].includes(response.status)) {
        await response.body?.cancel();
        lastProblem = `the store answered ${response.status}`;
        const asked = retryAfterSeconds(response.headers.get("retry-after"));
        if (asked !== undefined && asked > MAX_WAIT_SECONDS)
          return { ok: false, reason: `${lastProblem}, and ${waitTooLong(asked)}` };
        await wait(asked ?? backoffSeconds(attempt), lastProblem);
        continue;
      }
      if (response.status === 404) {
        await response.body?.cancel();
        return { ok: false, reason: "the store has no such object (404)" };
      }
      let append = false;
      if (response.status === 206 && offset > 0) {
        const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get("content-range") ?? "");
        if (!range || Number(range[1]) !== offset) {
          await response.body?.cancel();
          await rm(temp, { force: true });
          lastProblem = `the store answered a different byte range (${response.headers.get("content-range")})`;
          continue;
        }
        append = true;
      } else if (response.status === 200) {
        if (offset > 0) rangeIgnored = true;
      } else {
        await response.body?.cancel();
        return { ok: false, reason: `the store answered HTTP ${response.status}` };
      }
      // A store that sends more than the manifest's size is not believed: the body is read up to
      // one byte past it and no further, so it cannot fill the disk before the check below.
      const room = file.size_bytes - (append ? offset : 0);
      try {
        const hash = append ? await hashed(temp, createHash("sha256")) : createHash("sha256");
        const written = await writeBody(response, temp, append, room, hash, options);
        if (written === "too long") {
          await rm(temp, { force: true });
          return {
            ok: false,
            reason: `the store sent more than the manifest's ${file.size_bytes} bytes (stopped after ${file.size_bytes + 1})`,
          };
        }
        received = { size: (append ? offset : 0) + written, hash };
      } catch (error) {
        if (options.signal?.aborted) throw error;
        lastProblem = `the transfer broke off: ${describe(error)}`;
        await wait(backoffSeconds(attempt), lastProblem);
        continue;
      }
    }

    const size = received?.size ?? (await sizeOf(temp)) ?? 0;
    if (size < file.size_bytes) {
      lastProblem = `the store sent ${size} of ${file.size_bytes} bytes`;
      continue;
    }
    // A partial file that was whole already is hashed from the disk; what was fetched, as it was written.
    const sha256 = size !== file.size_bytes ? null : received ? received.hash.digest("hex") : await sha256File(temp);
    if (sha256 !== file.sha256) {
      await rm(temp, { force: true });
      lastProblem =
        sha256 === null ? `${size} bytes instead of ${file.size_bytes}` : `sha256 ${sha256} instead of ${file.sha256}`;
      // A bad partial file from an earlier run may be to blame: fetch it whole, once.
      if (!restartedAfterMismatch && (resumedFrom > 0 || attempt > 1)) {
        restartedAfterMismatch = true;
        continue;
      }
      return { ok: false, reason: `verification failed: ${lastProblem}` };
    }
    await rename(temp, dest);
    return { ok: true, resumedFrom, rangeIgnored };
  }
  return { ok: false, reason: `gave up after ${maxAttempts} attempts: ${lastProblem}` };
}

/**
 * Buffers that bodies are gathered in before they are written, kept for the next transfer: one per
 * transfer at a time. The network's chunks are tens of kilobytes; written one by one they cost a
 * system call each, and held until there are enough of them they outlive the young generation's
 * collections and are copied there again and again.
 */
const spareBuffers: Buffer[] = [];

/**
 * Writes the body to `temp` (and into `hash`), at most `room` bytes of it, and resolves to how
 * many it wrote: a body that goes on past them is cut off there, its connection dropped, and
 * "too long" returned. Chunks are copied into a buffer of WRITE_BYTES and written when it is full
 * (and at the end, or when the connection breaks, so that a later attempt continues after them).
 */
async function writeBody(
  response: Response,
  temp: string,
  append: boolean,
  room: number,
  hash: Hash,
  options: TransferOptions,
): Promise<number | "too long"> {
  const handle = await open(temp, append ? "a" : "w");
  const buffer = spareBuffers.pop() ?? Buffer.allocUnsafeSlow(WRITE_BYTES);
  let used = 0;
  const flush = async () => {
    if (used) await handle.write(buffer, 0, used);
    used = 0;
  };
  let left = room;
  const reader = response.body?.getReader();
  try {
    if (!reader) return 0;
    for (;;) {
      const { done, value: chunk } = await reader.read().catch(async (error: unknown) => {
        await flush();
        throw error;
      });
      if (done) {
        await flush();
        return room - left;
      }
      const kept = chunk.length > left ? chunk.subarray(0, left) : chunk;
      hash.update(kept);
      for (let from = 0; from < kept.length; ) {
        const n = Math.min(kept.length - from, WRITE_BYTES - used);
        buffer.set(kept.subarray(from, from + n), used);
        used += n;
        from += n;
        if (used === WRITE_BYTES) await flush();
      }
      options.onBytes?.(chunk.length);
      if (chunk.length > left) {
        await flush();
        await reader.cancel().catch(() => undefined);
        return "too long";
      }
      left -= chunk.length;
      if (options.throttle) await options.throttle.take(chunk.length, options.signal);
    }
  } finally {
    reader?.releaseLock();
    spareBuffers.push(buffer);
    await handle.close();
  }
}

function sleepUnless(ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return sleep(ms);
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
