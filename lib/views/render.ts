import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { copyOfBytes } from "../fingerprints/copies";
import { listedEpisodes, SubsetError, writeSubsetMeta, type SubsetResult } from "../lerobot/subset";
import { log } from "../log";
import { downloadObject, objectExists, putObject, s3Client } from "../storage/client";
import { objectKey, renderedObjectKey, storeLocation } from "../storage/config";

/**
 * Files rendered for a view of a LeRobot version: its `meta/` written for the episodes the view
 * holds, by the same writer `das pull` used to run on the client (lib/lerobot/subset.ts), from
 * the version's own meta/ in the object store. A set is rendered once, whoever asks and on
 * whichever instance: keyed by the digest of what determines it (`key`), its files go to the
 * store under their own SHA-256 (`renderedObjectKey`) and their list into `rendered_files` in one
 * transaction, so every later request reads them back instead (decision 0121). Clients fetch the
 * bytes from the store by signed URL, as any other file; the service never streams them. A view
 * unused for longer than RENDERED_VIEW_RETENTION_DAYS is collected, with every object no other
 * view names (lib/views/collect.ts, decision 0147), and rendered again if it is asked for after.
 */

export type RenderedFile = { path: string; size_bytes: number; sha256: string };

/** What a rendering decided besides its files (kept in `rendered_views.facts`). */
export type RenderFacts = {
  /**
   * The version's own meta/ already describes exactly these episodes (and every camera, with no
   * data file to rewrite): nothing was rendered, the view keeps the version's meta/ as it is.
   */
  whole: boolean;
  /** The episode indices meta/ lists, ascending. */
  episodes: number[];
  /** The data and video files meta/ points at. */
  referenced_files: string[];
  loader: SubsetResult["loader"];
  /** v3.0 data files to write again for LeRobot (renumbered, or without frames of episodes meta/ leaves out), or null. */
  rewrite: {
    renumbered: boolean;
    layout: NonNullable<SubsetResult["rewrite"]>["layout"];
  } | null;
};

export type RenderedView = { key: string; files: RenderedFile[]; facts: RenderFacts };

export type RenderRequest = {
  version: { versionId: number; datasetId: string; version: string };
  /** The digest of everything the result depends on; the caller's to compute (64 hex). */
  key: string;
  /** The episode indices meta/ is written for; only called when the view was never rendered. */
  episodes: () => Promise<number[]>;
  /**
   * A fingerprinted view's licence: each file is written as its copy (lib/fingerprints/copies.ts),
   * so that every licence's rendered meta/ has sha256s of its own (decision 0124). The key must
   * then name the licence too.
   */
  copiesOf?: string | null;
  /** The cameras meta/ keeps (default every one). */
  videoKeys?: string[];
  /** v3.0: plan the data files' rewrite for LeRobot (see lib/lerobot/subset.ts's rewriteData). */
  rewrite?: boolean;
};

/** Renderings under way in this process, so concurrent requests for one view wait for one rendering. */
const underWay = new Map<string, Promise<RenderedView>>();

export async function renderView(ctx: Ctx, request: RenderRequest): Promise<RenderedView> {
  const done = await renderedView(sqlOf(ctx.db), request.key);
  if (done) return done;
  let running = underWay.get(request.key);
  if (!running) {
    running = render(ctx, request).finally(() => underWay.delete(request.key));
    underWay.set(request.key, running);
  }
  return running;
}

/**
 * How stale a view's `used_at` may be before a reader touches it: a view read all day is written
 * once an hour, not at every Hub read. Collection's retention is far longer (lib/views/collect.ts).
 */
export const USED_AT_RESOLUTION_SECONDS = 3600;

/**
 * The advisory lock between rendering and collection (lib/views/collect.ts): a render holds it
 * shared from before it looks for its objects in the store until the rows naming them commit;
 * collection holds it alone while it deletes objects no row names. So an object a render found or
 * put is never deleted before its rows exist, and renders never wait for each other.
 */
export const RENDERED_OBJECTS_LOCK = "das:rendered-objects";

/**
 * A view rendered earlier (by any instance), or null; its use recorded. `used_at` is touched when
 * it is more than an hour old, by an UPDATE that also decides a race with collection: a view
 * deleted since it was read is null (and is rendered again), one touched first is kept.
 */
export async function renderedView(sql: Sql, key: string): Promise<RenderedView | null> {
  const [view] = await sql<{ facts: RenderFacts; stale: boolean }[]>`
    select facts, used_at < now() - make_interval(secs => ${USED_AT_RESOLUTION_SECONDS}) as stale
    from rendered_views where view_key = ${key}`;
  if (!view) return null;
  if (view.stale) {
    const touched = await sql`update rendered_views set used_at = now() where view_key = ${key} returning 1`;
    if (!touched.length) return null;
  }
  const files = await sql<RenderedFile[]>`
    select path, size_bytes::float8 as size_bytes, sha256 from rendered_files where view_key = ${key} order by path`;
  return { key, files: [...files], facts: view.facts };
}

async function render(ctx: Ctx, request: RenderRequest): Promise<RenderedView> {
  const sql = sqlOf(ctx.db);
  const started = Date.now();
  const episodes = await request.episodes();
  const work = await mkdtemp(path.join(tmpdir(), "das-render-"));
  try {
    const source = path.join(work, "source");
    const target = path.join(work, "target");
    await fetchMeta(sql, request.version, source);
    const listed = episodes.length ? await listedEpisodes(source) : null;
    const whole =
      listed !== null &&
      !request.videoKeys &&
      !request.rewrite &&
      JSON.stringify(listed.episodes) === JSON.stringify(episodes);
    let facts: RenderFacts;
    const files: RenderedFile[] = [];
    /** The files written under `target`, to store under the lock with their rows. */
    let written: string[] | null = null;
    if (whole || !episodes.length) {
      facts = {
        whole,
        episodes,
        referenced_files: listed?.referencedFiles ?? [],
        loader: { loadsAsIs: whole, loadsWithEpisodeList: whole, note: null },
        rewrite: null,
      };
    } else {
      const result = await writeSubsetMeta({
        sourceRoot: source,
        targetRoot: target,
        episodes,
        videoKeys: request.videoKeys,
        rewriteData: request.rewrite,
      });
      facts = {
        whole: false,
        episodes: result.episodes,
        referenced_files: result.referencedFiles,
        loader: result.loader,
        rewrite: result.rewrite && { renumbered: result.rewrite.renumbered, layout: result.rewrite.layout },
      };
      written = result.written;
    }
    await sql.begin(async (tx) => {
      // Shared with other renders, exclusive of collection: from the store's answer to the rows (see RENDERED_OBJECTS_LOCK).
      await tx`select pg_advisory_xact_lock_shared(hashtext(${RENDERED_OBJECTS_LOCK}))`;
      if (written) files.push(...(await store(target, written, request.copiesOf ?? null)));
      const inserted = await tx`
        insert into rendered_views (view_key, version_id, facts) values (${request.key}, ${request.version.versionId}, ${JSON.stringify(facts)}::jsonb)
        on conflict (view_key) do nothing returning view_key`;
      if (!files.length) return;
      // In the ledger whatever happens next: an object this render put is collected once no row names it.
      await tx`insert into rendered_objects (sha256) select distinct * from unnest(${files.map((f) => f.sha256)}::text[])
        on conflict (sha256) do nothing`;
      // Another instance rendered the same view first: its files are the same bytes.
      if (!inserted.length) return;
      await tx`insert into rendered_files (view_key, path, size_bytes, sha256)
        select ${request.key}, * from unnest(${files.map((f) => f.path)}::text[], ${files.map((f) => f.size_bytes)}::bigint[], ${files.map((f) => f.sha256)}::text[])`;
    });
    log.info("view rendered", {
      dataset_id: request.version.datasetId,
      version: request.version.version,
      view_key: request.key,
      episodes: episodes.length,
      files: files.length,
      ms: Date.now() - started,
    });
    return (await renderedView(sql, request.key))!;
  } catch (error) {
    if (error instanceof SubsetError)
      throw new Error(
        `The meta/ of ${request.version.datasetId}@${request.version.version} cannot be rendered for a view: ${error.message}`,
        { cause: error },
      );
    throw error;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The version's own meta/ (its files that belong to no episode), from the store into `dir`. */
async function fetchMeta(sql: Sql, version: RenderRequest["version"], dir: string): Promise<void> {
  const files = await sql<{ path: string }[]>`
    select f.path from files f
    where f.version_id = ${version.versionId} and f.path >= 'meta/' and f.path < 'meta0'
      and not exists (select 1 from file_episodes fe where fe.version_id = f.version_id and fe.path = f.path)
    order by f.path`;
  const location = storeLocation();
  const client = s3Client(location);
  try {
    for (const { path: relative } of files) {
      // Paths were admitted by the importer's safe-path rule: relative, no '..' segment.
      const file = path.join(dir, ...relative.split("/"));
      await mkdir(path.dirname(file), { recursive: true });
      await downloadObject(client, location.bucket, objectKey(version.datasetId, version.version, relative), file);
    }
  } finally {
    client.destroy();
  }
}

/**
 * Each written file into the store under its SHA-256 (once: the same bytes are never uploaded
 * twice), as the licence's copy of it when the view is a licence's.
 */
async function store(root: string, written: string[], copiesOf: string | null): Promise<RenderedFile[]> {
  const location = storeLocation();
  const client = s3Client(location);
  try {
    const files: RenderedFile[] = [];
    for (const relative of [...new Set(written)].sort(byteOrder)) {
      const rendered = await readFile(path.join(root, ...relative.split("/")));
      const bytes = copiesOf ? Buffer.from(await copyOfBytes(copiesOf, relative, rendered)) : rendered;
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      const key = renderedObjectKey(sha256);
      if (!(await objectExists(client, location.bucket, key))) await putObject(client, location.bucket, key, bytes);
      files.push({ path: relative, size_bytes: bytes.length, sha256 });
    }
    return files;
  } finally {
    client.destroy();
  }
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
