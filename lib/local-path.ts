import type { Stats } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";

/**
 * Where a path under a directory an operator hands to the importer really is, decided without
 * ever looking outside the places it may lead. The directory may come from someone else, and a
 * symbolic link anywhere on the path (`.keys -> ~/.ssh`, `images/k -> /etc`, `meta -> /`) would
 * otherwise take the importer to the operator's own files, which would be hashed, uploaded and
 * served to licensees.
 *
 * The path is walked one component at a time from the directory's real path. A symbolic link is
 * read (readlink) and its target walked in its place, so every step is a real path; a step that
 * lies outside `roots` is refused before anything is asked about it, so whether the import is
 * refused, and what it says, never depends on what exists outside.
 */

export type Located =
  /** `real`: the path with every link resolved, inside a root; `stats` of what is there; `linked`: a link was followed on the way. */
  { real: string; stats: Stats; linked: boolean } | { refused: string };

/** Links followed on one path before it is taken for a loop, as the kernel's ELOOP does. */
const MAX_LINKS = 40;

export const OUTSIDE =
  "a symbolic link on its path leads outside the dataset directory (links are followed only into it, or into a Hugging Face cache's blobs/)";

export const isInside = (real: string, roots: readonly string[]) =>
  roots.some((root) => real === root || real.startsWith(root + path.sep));

/**
 * `relative` ('/'-separated) under the real directory `root`, each step checked to lie under one
 * of `roots` (real paths, `root` among them); null when nothing is there (inside).
 */
export async function locate(root: string, relative: string, roots: readonly string[]): Promise<Located | null> {
  let current = root;
  let stats: Stats | undefined;
  let linked = false;
  let links = 0;
  const pending = relative.split("/").filter((part) => part !== "" && part !== ".");
  while (pending.length) {
    const part = pending.shift()!;
    if (part === "..") {
      current = path.dirname(current);
      stats = undefined;
      continue;
    }
    const next = path.join(current, part);
    if (!isInside(next, roots)) return { refused: OUTSIDE };
    try {
      stats = await lstat(next);
    } catch {
      return null;
    }
    if (stats.isSymbolicLink()) {
      if (++links > MAX_LINKS) return { refused: "a symbolic link that loops" };
      const target = await readlink(next);
      if (path.isAbsolute(target)) current = path.parse(target).root;
      pending.unshift(...target.split(path.sep).filter((p) => p !== "" && p !== "."));
      stats = undefined;
      linked = true;
      continue;
    }
    // Only a directory has anything under it.
    if (pending.length && !stats.isDirectory()) return null;
    current = next;
  }
  if (!isInside(current, roots)) return { refused: OUTSIDE };
  if (!stats) {
    try {
      stats = await lstat(current);
    } catch {
      return null;
    }
  }
  return { real: current, stats, linked };
}

/**
 * The real paths a directory's links may lead into: the directory itself, and for a Hugging Face
 * cache snapshot (`<repo>/snapshots/<revision>/...`, what `snapshot_download` returns and the hub
 * cache holds) the `<repo>/blobs/` directory beside it, where every file of a snapshot really is.
 */
export async function linkRoots(dir: string): Promise<string[]> {
  const real = await realpath(dir).catch(() => path.resolve(dir));
  const roots = [real];
  const parts = real.split(path.sep);
  const at = parts.lastIndexOf("snapshots");
  if (at > 0 && at < parts.length - 1) {
    const blobs = [...parts.slice(0, at), "blobs"].join(path.sep);
    roots.push(await realpath(blobs).catch(() => blobs));
  }
  return roots;
}
