import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { fileHoldsNoWithdrawn } from "../catalog/withdrawn";
import { deliveredFiles } from "../fingerprints/delivered";
import { objectKey, renderedObjectKey } from "../storage/config";
import { deliveredVersion, isMetaPath, type VersionView, type ViewMeta } from "./view";

/**
 * A file of a view, by its path in the view, as the caller receives it: for a fingerprinted
 * version, its size and SHA-256 are those of the caller's licence's own copy, and its object that
 * copy (lib/fingerprints/delivered.ts; a 503 while the copy is being made). Every reader by path
 * (the Hub's listings and resolve, the pull plan) therefore names the bytes its caller gets.
 */
export type ViewFile = {
  path: string;
  size_bytes: number;
  sha256: string;
  stream: string | null;
  /** Where its bytes are in the object store. */
  objectKey: string;
  /** Rendered for the view (lib/views/render.ts) rather than one of the version's own. */
  rendered: boolean;
};

/** A file the view holds, with every episode it carries ([] for a file of the whole version or a rendered one). */
export type HeldFile = ViewFile & { episode_ids: string[] };

/**
 * One path of a view: the file, or why there is none. `withdrawn`: the version has a file there
 * that holds withdrawn episodes (`only`: nothing else), so the view does not.
 */
export type PathLookup =
  | { file: HeldFile }
  | { absent: "missing" }
  | { absent: "withdrawn"; withdrawn: string[]; only: boolean };

export async function lookUpPath(ctx: Ctx, view: VersionView, meta: ViewMeta, path: string): Promise<PathLookup> {
  const found = await lookUpStored(ctx, view, meta, path);
  if (!("file" in found)) return found;
  const [file] = await delivered(ctx, view, [found.file]);
  return { file: file! };
}

/**
 * A path of the view as the service stores it (a fingerprinted version's original, not the
 * caller's copy): for what the service reads itself, such as a README's card. Never hand its
 * size, sha256 or object to the caller; `lookUpPath` does.
 */
export async function lookUpStored(ctx: Ctx, view: VersionView, meta: ViewMeta, path: string): Promise<PathLookup> {
  if (meta && isMetaPath(path)) {
    const rendered = meta.files.get(path);
    return rendered ? { file: renderedFile(rendered) } : { absent: "missing" };
  }
  const sql = sqlOf(ctx.db);
  const { versionId } = view.version;
  const [row] = await sql<(Omit<HeldFile, "objectKey" | "rendered"> & { withdrawn: string[] })[]>`
    select f.path, f.size_bytes::float8 as size_bytes, f.sha256, f.stream,
      case when f.episode_id is not null then array[f.episode_id]
           else array(select fe.episode_id from file_episodes fe where fe.version_id = f.version_id and fe.path = f.path order by fe.episode_id) end as episode_ids,
      ${
        view.withdrawn.length
          ? sql`array(select w.episode_id from file_episodes fe join withdrawn_episodes w on w.version_id = fe.version_id and w.episode_id = fe.episode_id
              where fe.version_id = f.version_id and fe.path = f.path order by w.episode_id)`
          : sql`array[]::text[]`
      } as withdrawn
    from files f where f.version_id = ${versionId} and f.path = ${path}`;
  if (!row) return { absent: "missing" };
  const { withdrawn, ...file } = row;
  if (withdrawn.length)
    return { absent: "withdrawn", withdrawn, only: withdrawn.length === new Set(file.episode_ids).size };
  return {
    file: { ...file, objectKey: objectKey(view.datasetId, view.version.version, file.path), rendered: false },
  };
}

/**
 * Files of the view as the caller receives them: the version's own files of a fingerprinted
 * version become the caller's licence's copies (one query for all; a 503 while any is being
 * made), rendered files are already the view's. Order kept.
 */
export async function delivered<F extends ViewFile>(ctx: Ctx, view: VersionView, files: readonly F[]): Promise<F[]> {
  if (view.copiesOf === null) return [...files];
  const own = files.filter((f) => !f.rendered);
  const copies = new Map(
    (await deliveredFiles(sqlOf(ctx.db), deliveredVersion(view), view.copiesOf, own)).map((c) => [c.path, c]),
  );
  return files.map((f) => (f.rendered ? f : copies.get(f.path)!));
}

const renderedFile = (f: { path: string; size_bytes: number; sha256: string }): HeldFile => ({
  ...f,
  stream: null,
  episode_ids: [],
  objectKey: renderedObjectKey(f.sha256),
  rendered: true,
});

type Range = { from: string; below: string | null; limit: number };

/**
 * The view's files from `from` (included) to `below` (excluded; null: to the end), in byte order,
 * at most `limit`, as the caller receives them (`delivered`).
 */
export async function filesInRange(ctx: Ctx, view: VersionView, meta: ViewMeta, range: Range): Promise<ViewFile[]> {
  return delivered(ctx, view, await storedInRange(ctx, view, meta, range));
}

/**
 * The view's files in a range as stored: the version's own, less those holding withdrawn episodes
 * and, when meta/ is rendered, its own meta/, merged with the rendered files. Keyset bounds only,
 * so a listing of a version of millions of files reads what it returns. For walking the view's
 * paths; what reaches the caller of a file goes through `delivered` first.
 */
export async function storedInRange(ctx: Ctx, view: VersionView, meta: ViewMeta, range: Range): Promise<ViewFile[]> {
  const sql = sqlOf(ctx.db);
  const { versionId } = view.version;
  const upper = range.below === null ? sql`` : sql`and f.path < ${range.below}`;
  const own = await sql<Omit<ViewFile, "objectKey" | "rendered">[]>`
    select f.path, f.size_bytes::float8 as size_bytes, f.sha256, f.stream from files f
    where f.version_id = ${versionId} and f.path >= ${range.from} ${upper}
      ${meta ? sql`and not (f.path >= 'meta/' and f.path < 'meta0')` : sql``}
      ${view.withdrawn.length ? sql`and ${fileHoldsNoWithdrawn(sql)}` : sql``}
    order by f.path limit ${range.limit}`;
  const files: ViewFile[] = own.map((f) => ({
    ...f,
    objectKey: objectKey(view.datasetId, view.version.version, f.path),
    rendered: false,
  }));
  if (!meta) return files;
  const inRange = [...meta.files.values()].filter(
    (f) => byteOrder(f.path, range.from) >= 0 && (range.below === null || byteOrder(f.path, range.below) < 0),
  );
  return [...files, ...inRange.map(renderedFile)].sort((a, b) => byteOrder(a.path, b.path)).slice(0, range.limit);
}

/** Every file of the view in byte order (for small views: a plan, a listing of a few thousand files). */
export async function* viewFiles(ctx: Ctx, view: VersionView, meta: ViewMeta, batch = 2000): AsyncGenerator<ViewFile> {
  let from = "";
  for (;;) {
    const files = await filesInRange(ctx, view, meta, { from, below: null, limit: batch });
    yield* files;
    if (files.length < batch) return;
    from = justAfter(files.at(-1)!.path);
  }
}

/** The first path after `path` in byte order: paths hold no control characters, so nothing lies between. */
export const justAfter = (path: string) => `${path}\u0001`;

export const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
