import { HeadObjectCommand } from "@aws-sdk/client-s3";
import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { AppError } from "../errors";
import type { StoreTarget } from "./import/upload";

export type StoreCheck = {
  /** Files of the version's manifest. */
  files: number;
  /** Manifest paths with no object in the store, in path order. */
  missing: string[];
  /** Objects whose size is not the manifest's. */
  wrongSize: { path: string; expected: number; actual: number }[];
};

/** Objects asked about at once. */
const PARALLEL = 32;

/**
 * Whether the store holds every file of a version's manifest at its size: a HEAD per file, 32 at a
 * time, reading the manifest in batches (flat memory). A listing would take fewer requests, but
 * the local store (s3rver) computes signatures of bucket-level requests differently from the SDK.
 */
export async function checkVersionStore(
  ctx: Ctx,
  input: { datasetId: string; version: string },
  store: StoreTarget,
): Promise<StoreCheck> {
  const sql = sqlOf(ctx.db);
  const [version] = await sql<
    { id: number }[]
  >`select id from dataset_versions where dataset_id = ${input.datasetId} and version = ${input.version}`;
  if (!version) throw new AppError("not_found", `Dataset '${input.datasetId}' has no version '${input.version}'.`);
  const result: StoreCheck = { files: 0, missing: [], wrongSize: [] };
  let after = "";
  for (;;) {
    const rows = await sql<{ path: string; size_bytes: number }[]>`
      select path, size_bytes::float8 as size_bytes from files where version_id = ${version.id} and path > ${after} order by path limit 2000`;
    if (!rows.length) break;
    const sizes: (number | null)[] = new Array(rows.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < rows.length) {
          const i = next++;
          sizes[i] = await objectSize(store, store.keyOf(rows[i]!.path));
        }
      }),
    );
    for (const [i, { path, size_bytes }] of rows.entries()) {
      result.files++;
      const actual = sizes[i];
      if (actual === null) result.missing.push(path);
      else if (actual !== size_bytes) result.wrongSize.push({ path, expected: size_bytes, actual: actual! });
    }
    after = rows.at(-1)!.path;
  }
  return result;
}

async function objectSize(store: StoreTarget, key: string): Promise<number | null> {
  try {
    return (await store.client.send(new HeadObjectCommand({ Bucket: store.bucket, Key: key }))).ContentLength ?? 0;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
    throw error;
  }
}
