import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, readFile, stat } from "node:fs/promises";
import path from "node:path";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { mediaTypeOf } from "./records";

/**
 * Local files into the object store, each hashed in the same read that uploads it where it can be:
 * a small file is read once into memory (hashed, then sent from that buffer); a large one is
 * hashed first (its checksum goes into the object's metadata, which S3 takes only when an upload
 * starts) and then sent in parts. An object already in the store with the same size and the same
 * `x-amz-meta-sha256` is skipped, so running the same upload again after an interruption sends
 * only what is missing.
 */

/** Files up to this size are read into memory once: hashed and sent from the same buffer. */
export const SINGLE_READ_BYTES = 16 * 1024 * 1024;
/** Files from this size are sent as a multipart upload. */
export const MULTIPART_THRESHOLD = 64 * 1024 * 1024;
export const PART_BYTES = 16 * 1024 * 1024;
const PARTS_IN_PARALLEL = 4;
/** Part buffers in memory at once, over all files (8 x 16 MiB). */
const PART_BUFFERS = 8;

export type StoreTarget = { client: S3Client; bucket: string; keyOf: (path: string) => string };

export type LocalFile = { path: string; size_bytes: number };
export type StoredFile = {
  path: string;
  size_bytes: number;
  sha256: string;
  action: "hashed" | "uploaded" | "skipped";
};

export type UploadOptions = {
  /** The directory the paths are relative to. */
  dir: string;
  /** Where a file's bytes are read from; the path under `dir` when left out (a LeRobot source gives the real path it checked). */
  localPath?: (path: string) => Promise<string>;
  /** Where to put the files; without it they are only hashed. */
  store?: StoreTarget;
  /** Files handled at once. */
  concurrency?: number;
  /** A progress display for these totals (das-admin draws a bar on stderr); none when left out. */
  progress?: (totals: { files: number; bytes: number }) => ProgressSink;
  signal?: AbortSignal;
  /** Told after each file (tests interrupt an upload with it). */
  onFile?: (file: StoredFile) => void;
};

/** What a progress display is told: bytes hashed or sent, files done, the end. */
export type ProgressSink = { bytes(n: number): void; fileDone(): void; finish(): void };

export type UploadTally = { files: number; uploaded: number; skipped: number; bytesUploaded: number; seconds: number };

const SHA256_METADATA = "sha256";

/** A limit on how many of something run at once. */
class Semaphore {
  private waiting: (() => void)[] = [];
  constructor(private free: number) {}
  async take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

/**
 * Hashes (and, with a store, uploads) batches of files with a progress bar over their totals.
 * `batch` completes every file of a batch, `concurrency` at a time, in any order.
 */
export function fileUploader(options: UploadOptions, totals: { files: number; bytes: number }) {
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const progress = options.progress?.(totals);
  const buffers = new Semaphore(PART_BUFFERS);
  const tally: UploadTally = { files: 0, uploaded: 0, skipped: 0, bytesUploaded: 0, seconds: 0 };
  const started = Date.now();
  return {
    tally,
    async batch(files: LocalFile[]): Promise<StoredFile[]> {
      const done: StoredFile[] = [];
      let next = 0;
      const worker = async () => {
        while (next < files.length) {
          options.signal?.throwIfAborted();
          const file = files[next++]!;
          const stored = await storeFile(options, file, { buffers, onBytes: (n) => progress?.bytes(n) });
          tally.files++;
          if (stored.action === "uploaded") {
            tally.uploaded++;
            tally.bytesUploaded += stored.size_bytes;
          } else if (stored.action === "skipped") tally.skipped++;
          progress?.fileDone();
          options.onFile?.(stored);
          done.push(stored);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
      return done;
    },
    finish(): void {
      tally.seconds = (Date.now() - started) / 1000;
      progress?.finish();
    },
  };
}

async function storeFile(
  options: UploadOptions,
  file: LocalFile,
  shared: { buffers: Semaphore; onBytes: (n: number) => void },
): Promise<StoredFile> {
  const local = options.localPath
    ? await options.localPath(file.path)
    : path.join(options.dir, ...file.path.split("/"));
  const size = (await stat(local)).size;
  const store = options.store;
  const contentType = mediaTypeOf({ path: file.path });
  if (size <= SINGLE_READ_BYTES) {
    const key = store?.keyOf(file.path);
    // Asked while the file is read and hashed: the answer is needed only after.
    const existing = store && key !== undefined ? objectHead(store, key, options.signal) : undefined;
    existing?.catch(() => undefined);
    const body = await readFile(local);
    const sha256 = createHash("sha256").update(body).digest("hex");
    const result = { path: file.path, size_bytes: body.length, sha256 };
    if (!store || key === undefined) {
      shared.onBytes(body.length);
      return { ...result, action: "hashed" };
    }
    const head = await existing!;
    if (head && head.size === body.length && head.sha256 === sha256) {
      shared.onBytes(body.length);
      return { ...result, action: "skipped" };
    }
    await store.client.send(
      withPayloadHash(
        new PutObjectCommand({
          Bucket: store.bucket,
          Key: key,
          Body: body,
          ContentLength: body.length,
          ContentType: contentType,
          Metadata: { [SHA256_METADATA]: sha256 },
        }),
        sha256,
      ),
      { abortSignal: options.signal },
    );
    shared.onBytes(body.length);
    return { ...result, action: "uploaded" };
  }
  // Large: hashed first, so the checksum can go with the upload (and decide whether to send at all).
  const sha256 = await hashFile(local, options.signal, store ? undefined : shared.onBytes);
  const result = { path: file.path, size_bytes: size, sha256 };
  if (!store) return { ...result, action: "hashed" };
  const key = store.keyOf(file.path);
  if (await sameObject(store, key, size, sha256, options.signal)) {
    shared.onBytes(size);
    return { ...result, action: "skipped" };
  }
  if (size < MULTIPART_THRESHOLD) {
    await store.client.send(
      withPayloadHash(
        new PutObjectCommand({
          Bucket: store.bucket,
          Key: key,
          Body: createReadStream(local),
          ContentLength: size,
          ContentType: contentType,
          Metadata: { [SHA256_METADATA]: sha256 },
        }),
        sha256,
      ),
      { abortSignal: options.signal },
    );
    shared.onBytes(size);
  } else {
    await multipartUpload(store, key, local, size, {
      sha256,
      contentType,
      signal: options.signal,
      buffers: shared.buffers,
      onBytes: shared.onBytes,
    });
  }
  return { ...result, action: "uploaded" };
}

/**
 * The body's SHA-256 given to the request signer, which would otherwise hash the body once more
 *  (SigV4 signs the payload's hash). S3 checks the body against it, so a file that changed
 * between hashing and sending is refused rather than stored under a checksum that is not its own.
 */
function withPayloadHash<C extends PutObjectCommand>(command: C, sha256: string): C {
  command.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) request.headers["x-amz-content-sha256"] = sha256;
      return next(args);
    },
    { step: "build", name: "dasPayloadHash" },
  );
  return command;
}

/** Whether the store holds this object already: the same size and the same checksum in its metadata. */
async function sameObject(
  store: StoreTarget,
  key: string,
  size: number,
  sha256: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const head = await objectHead(store, key, signal);
  return head !== null && head.size === size && head.sha256 === sha256;
}

/** An object's size and recorded checksum, or null when the store has no such object. */
async function objectHead(
  store: StoreTarget,
  key: string,
  signal?: AbortSignal,
): Promise<{ size: number | undefined; sha256: string | undefined } | null> {
  try {
    const head = await store.client.send(new HeadObjectCommand({ Bucket: store.bucket, Key: key }), {
      abortSignal: signal,
    });
    return { size: head.ContentLength, sha256: head.Metadata?.[SHA256_METADATA] };
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
    throw error;
  }
}

async function hashFile(file: string, signal?: AbortSignal, onBytes?: (n: number) => void): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file, { signal, highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    onBytes?.((chunk as Buffer).length);
  }
  return hash.digest("hex");
}

/** Parts of PART_BYTES, a few at a time; the upload is aborted (its parts dropped) if one fails. */
async function multipartUpload(
  store: StoreTarget,
  key: string,
  local: string,
  size: number,
  options: {
    sha256: string;
    contentType: string;
    signal?: AbortSignal;
    buffers: Semaphore;
    onBytes: (n: number) => void;
  },
): Promise<void> {
  const { signal } = options;
  const { UploadId } = await store.client.send(
    new CreateMultipartUploadCommand({
      Bucket: store.bucket,
      Key: key,
      ContentType: options.contentType,
      Metadata: { [SHA256_METADATA]: options.sha256 },
    }),
    { abortSignal: signal },
  );
  const handle = await open(local, "r");
  const count = Math.ceil(size / PART_BYTES);
  const etags: string[] = new Array(count);
  let next = 0;
  try {
    const worker = async () => {
      while (next < count) {
        signal?.throwIfAborted();
        const index = next++;
        const offset = index * PART_BYTES;
        const length = Math.min(PART_BYTES, size - offset);
        await options.buffers.take();
        try {
          const body = Buffer.allocUnsafe(length);
          const { bytesRead } = await handle.read(body, 0, length, offset);
          if (bytesRead !== length)
            throw new Error(
              `${local} changed while it was uploaded (read ${bytesRead} of ${length} bytes at ${offset})`,
            );
          const part = await store.client.send(
            new UploadPartCommand({
              Bucket: store.bucket,
              Key: key,
              UploadId,
              PartNumber: index + 1,
              Body: body,
              ContentLength: length,
            }),
            { abortSignal: signal },
          );
          etags[index] = part.ETag!;
        } finally {
          options.buffers.give();
        }
        options.onBytes(length);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARTS_IN_PARALLEL, count) }, worker));
    await store.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: store.bucket,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }),
      { abortSignal: signal },
    );
  } catch (error) {
    // Without this the store would keep the parts (and bill for them) until a lifecycle rule ran.
    await store.client
      .send(new AbortMultipartUploadCommand({ Bucket: store.bucket, Key: key, UploadId }))
      .catch(() => undefined);
    throw error;
  } finally {
    await handle.close();
  }
}
