import type { Ctx } from "../context";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";
import { delivered, justAfter, storedInRange, type ViewFile } from "../views/files";
import { isMetaPath, viewMeta, type VersionView, type ViewMeta } from "../views/view";
import { checkedPath, fileEntry, folderEntry, type TreeEntry } from "./entries";
import { hubError } from "./errors";

/**
 * The tree of a view (`GET .../tree/{revision}[/{path}]`) a page at a time, and the entries of
 * named paths (`POST .../paths-info/{revision}`). Both read the view's files through keyset
 * ranges (lib/views/files.ts): a folder's listing jumps over each subfolder in one step, so a page
 * costs about what it shows whatever the version's size.
 */

/** Entries per page, as the Hub's own tree pages. */
export const TREE_PAGE = 1000;
/** Paths per paths-info request. */
export const MAX_PATHS_INFO = 1000;

export type TreePage = { entries: TreeEntry[]; cursor: string | null };

export async function listTree(
  ctx: Ctx,
  view: VersionView,
  input: { path?: string; recursive: boolean; expand: boolean; cursor?: string },
): Promise<TreePage> {
  const folder = input.path ? checkedPath(input.path) : "";
  const meta = await metaFor(ctx, view, folder);
  const prefix = folder ? `${folder}/` : "";
  // Paths under a folder lie between "<folder>/" and "<folder>0" ('0' follows '/' in byte order).
  const below = folder ? `${folder}0` : null;
  const binding = queryBinding(["hub-tree", view.datasetId, view.sha, folder, input.recursive ? 1 : 0]);
  let [from, previous] = input.cursor ? decodeCursor(input.cursor, binding, ["string", "string"]) : [prefix, ""];
  if (!input.cursor && folder) {
    const [first] = await storedInRange(ctx, view, meta, { from: prefix, below, limit: 1 });
    if (!first)
      throw hubError(
        "not_found",
        "EntryNotFound",
        `No folder '${folder}' in revision ${view.sha} of das/${view.datasetId}.`,
      );
  }
  // The page is walked on the stored files (paths decide it), then its files delivered at once.
  const page: (ViewFile | TreeEntry)[] = [];
  let last: "end" | "page" = "page";
  while (page.length < TREE_PAGE) {
    const files = await storedInRange(ctx, view, meta, { from, below, limit: TREE_PAGE });
    if (!files.length) {
      last = "end";
      break;
    }
    for (const file of files) {
      const rest = file.path.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (!input.recursive && slash >= 0) {
        // A subfolder: shown once, then everything under it skipped in one step.
        const sub = prefix + rest.slice(0, slash);
        page.push(folderEntry(view, sub, input.expand));
        from = `${sub}0`;
        break;
      }
      if (input.recursive)
        for (const sub of newFolders(prefix, previous, file.path)) page.push(folderEntry(view, sub, input.expand));
      page.push(file);
      from = justAfter(file.path);
      previous = file.path;
      if (page.length >= TREE_PAGE) break;
    }
  }
  const entries = await pageEntries(ctx, view, page, input.expand);
  const more = last === "page" && (await storedInRange(ctx, view, meta, { from, below, limit: 1 })).length > 0;
  return { entries, cursor: more ? encodeCursor(binding, [from, previous]) : null };
}

/** A page's entries, its files as the caller receives them (lib/views/files.ts's `delivered`). */
async function pageEntries(
  ctx: Ctx,
  view: VersionView,
  page: (ViewFile | TreeEntry)[],
  expand: boolean,
): Promise<TreeEntry[]> {
  const isFile = (item: ViewFile | TreeEntry): item is ViewFile => !("type" in item);
  const files = await delivered(ctx, view, page.filter(isFile));
  let next = 0;
  return page.map((item) => (isFile(item) ? fileEntry(view, files[next++]!, expand) : item));
}

/** The folders (below `prefix`) that hold `path` but not `previous`, outermost first. */
function newFolders(prefix: string, previous: string, path: string): string[] {
  const parts = path.slice(prefix.length).split("/").slice(0, -1);
  const folders: string[] = [];
  let folder = prefix.slice(0, -1);
  for (const part of parts) {
    folder = folder ? `${folder}/${part}` : part;
    if (!previous.startsWith(`${folder}/`)) folders.push(folder);
  }
  return folders;
}

/** The entries of the named paths that are in the view (a file, or a folder holding files), in the order asked; others are left out. */
export async function pathsInfo(
  ctx: Ctx,
  view: VersionView,
  input: { paths: string[]; expand: boolean },
): Promise<TreeEntry[]> {
  if (input.paths.length > MAX_PATHS_INFO)
    throw hubError(
      "invalid_parameter",
      "EntryNotFound",
      `At most ${MAX_PATHS_INFO} paths per request; ${input.paths.length} were given.`,
    );
  const paths = [...new Set(input.paths.map(checkedPath))];
  const meta = paths.some(isMetaPath) ? await viewMeta(ctx, view) : null;
  const page: (ViewFile | TreeEntry)[] = [];
  for (const path of paths) {
    const [file] = await storedInRange(ctx, view, meta, { from: path, below: justAfter(path), limit: 1 });
    if (file) page.push(file);
    else if ((await storedInRange(ctx, view, meta, { from: `${path}/`, below: `${path}0`, limit: 1 })).length)
      page.push(folderEntry(view, path, input.expand));
  }
  return pageEntries(ctx, view, page, input.expand);
}

/** The view's meta/ when a listing of this folder can reach it (rendered only then). */
function metaFor(ctx: Ctx, view: VersionView, folder: string): Promise<ViewMeta> {
  return folder === "" || isMetaPath(`${folder}/`) ? viewMeta(ctx, view) : Promise.resolve(null);
}

/**
 * Every file of the view (the repository's siblings) as stored, or null when there are more than
 * `limit`: its paths; `delivered` gives what the caller receives of them.
 */
export async function allFiles(ctx: Ctx, view: VersionView, limit: number): Promise<ViewFile[] | null> {
  const meta = await viewMeta(ctx, view);
  const files: ViewFile[] = [];
  let from = "";
  for (;;) {
    const batch = await storedInRange(ctx, view, meta, { from, below: null, limit: 5000 });
    files.push(...batch);
    if (files.length > limit) return null;
    if (batch.length < 5000) return files;
    from = justAfter(batch.at(-1)!.path);
  }
}
