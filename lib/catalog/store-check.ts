import { HeadObjectCommand } from "@aws-sdk/client-s3";
import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { AppError } from "../errors";
import type { StoreTarget } from "./import/upload";

export type StoreCheck = {
  /** Files of the version's manifest. */
  files: number;
  /** A data table of the version (the first by path), which the episode page reads by fetch, or null without one. */
  dataTable: string | null;
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
  const [table] = await sql<{ path: string }[]>`
    select path from files where version_id = ${version.id} and stream = 'data' order by path limit 1`;
  const result: StoreCheck = { files: 0, dataTable: table?.path ?? null, missing: [], wrongSize: [] };
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

/**
 * The rule a store needs for the episode page's plots, as PutBucketCors takes it (the JSON of
 * `aws s3api put-bucket-cors --cors-configuration`): the portal's origin may GET and HEAD with a
 * `Range` header and read the answer's range and length. The embedded store has the same rule for
 * any origin (lib/dev/local-store.ts).
 */
export function corsConfiguration(origin: string) {
  return {
    CORSRules: [
      {
        AllowedOrigins: [origin],
        AllowedMethods: ["GET", "HEAD"],
        AllowedHeaders: ["Range"],
        ExposeHeaders: ["Content-Range", "Content-Length", "ETag"],
        MaxAgeSeconds: 3000,
      },
    ],
  };
}

export type CorsCheck = { ok: true } | { ok: false; problem: string };

/**
 * What a browser on the portal's `origin` meets when the episode page reads a data table: the
 * preflight it sends before a GET with `Range` to the file's signed URL, then the GET itself, each
 * with the portal's `Origin`. The browser hides a refusal from the page ("Failed to fetch"); this
 * names it.
 */
export async function checkStoreCors(url: string, origin: string, fetchImpl: typeof fetch = fetch): Promise<CorsCheck> {
  const store = new URL(url).origin;
  const ask = async (init: RequestInit) => {
    try {
      return await fetchImpl(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(10_000) });
    } catch (error) {
      return `the store at ${store} could not be reached (${(error as Error).message})`;
    }
  };
  const preflight = await ask({
    method: "OPTIONS",
    headers: { Origin: origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "range" },
  });
  if (typeof preflight === "string") return { ok: false, problem: preflight };
  const refusal = await s3ErrorOf(preflight);
  if (!preflight.ok)
    return {
      ok: false,
      problem: `the store refused the browser's preflight from ${origin} (OPTIONS answered ${preflight.status}${refusal ? `: ${refusal}` : ""})`,
    };
  const allowed = (name: string) => preflight.headers.get(name)?.toLowerCase() ?? "";
  if (!allowsOrigin(preflight.headers.get("access-control-allow-origin"), origin))
    return {
      ok: false,
      problem: `the store's preflight answer does not allow ${origin} (Access-Control-Allow-Origin: ${preflight.headers.get("access-control-allow-origin") ?? "none"})`,
    };
  if (!/(^|[ ,])(get|\*)($|[ ,])/.test(allowed("access-control-allow-methods")))
    return { ok: false, problem: "the store's preflight answer does not allow GET (Access-Control-Allow-Methods)" };
  if (!/(^|[ ,])(range|\*)($|[ ,])/.test(allowed("access-control-allow-headers")))
    return {
      ok: false,
      problem: "the store's preflight answer does not allow the Range header (Access-Control-Allow-Headers)",
    };
  const read = await ask({ headers: { Origin: origin, Range: "bytes=0-0" } });
  if (typeof read === "string") return { ok: false, problem: read };
  await read.body?.cancel();
  if (!read.ok) return { ok: false, problem: `the store answered a GET of the file with ${read.status}` };
  if (!allowsOrigin(read.headers.get("access-control-allow-origin"), origin))
    return {
      ok: false,
      problem: `the store's answer to a GET does not allow ${origin} (Access-Control-Allow-Origin: ${read.headers.get("access-control-allow-origin") ?? "none"})`,
    };
  if (!/(^|[ ,])(content-range|\*)($|[ ,])/i.test(read.headers.get("access-control-expose-headers") ?? ""))
    return {
      ok: false,
      problem:
        "the store's answer to a GET does not let the page read its Content-Range (Access-Control-Expose-Headers)",
    };
  return { ok: true };
}

const allowsOrigin = (header: string | null, origin: string) => header === "*" || header === origin;

/** The code and message of an S3 error document (`<Code>CORSResponse</Code>...`), or "". */
async function s3ErrorOf(response: Response): Promise<string> {
  if (response.ok) {
    await response.body?.cancel();
    return "";
  }
  const text = (await response.text()).slice(0, 4096);
  const code = /<Code>([^<]{1,100})<\/Code>/.exec(text)?.[1];
  const message = /<Message>([^<]{1,300})<\/Message>/.exec(text)?.[1];
  return [code, message].filter(Boolean).join(": ");
}
