import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { hasUnsafeCharacter, showUnsafe, UNSAFE_CHARACTERS_DESCRIPTION } from "./characters";

/**
 * Paths that come from outside (a manifest, a LeRobot `meta/info.json` template, a provenance
 * file) and name a file below a directory we write into. Two checks, both needed:
 *
 * - the shape (`safePathProblem`): relative, '/' separators, no empty, '.' or '..' segment, no
 *   unsafe character and no space at either end, the rule the importer admits file paths by, so
 *   that joined to a directory the path stays below it;
 * - the place (`pathInside`): the directory's symbolic links resolved, the file still lies under
 *   it. The shape alone lets a link inside the directory lead the write elsewhere.
 */

/** Why `relative` is not a safe relative file path, or null when it is. */
export function safePathProblem(relative: string): string | null {
  if (relative === "") return "it is empty";
  if (hasUnsafeCharacter(relative)) return `it contains ${UNSAFE_CHARACTERS_DESCRIPTION}`;
  if (relative !== relative.trim()) return "it starts or ends with a space";
  if (relative.startsWith("/")) return "it is absolute";
  if (relative.includes("\\")) return "it contains '\\'";
  if (relative.split("/").some((s) => s === "" || s === "." || s === ".."))
    return "it has an empty, '.' or '..' segment";
  return null;
}

/**
 * Whether a file path is relative with '/' separators and no empty, '.' or '..' segment: the
 * shape of every object key under its version, so that it names a file below a directory
 * wherever it is written.
 */
export function isRelativePath(relative: string): boolean {
  return (
    !relative.startsWith("/") &&
    !relative.includes("\\") &&
    !relative.split("/").some((s) => s === "" || s === "." || s === "..")
  );
}

/**
 * A file path as the importer admits it, each refusal worded for the operator: the `path` of a
 * line of files.jsonl, and every file a LeRobot dataset names or holds.
 */
export const FilePath = z
  .string("path must be a string")
  .min(1, "path must not be empty")
  .max(1024, "path must be at most 1024 characters")
  .refine(isRelativePath, "path must be relative, with '/' separators and no empty, '.' or '..' segments")
  .refine((p) => !hasUnsafeCharacter(p), `path must not contain ${UNSAFE_CHARACTERS_DESCRIPTION}`)
  .refine((p) => p === p.trim(), "path must not start or end with a space");

/** A path refused by `safePathProblem` or `pathInside`; its message shows the path escaped. */
export class UnsafePathError extends Error {
  override name = "UnsafePathError";
  constructor(
    readonly relative: string,
    readonly problem: string,
  ) {
    super(`unsafe path ${showUnsafe(JSON.stringify(relative))}: ${problem}`);
  }
}

/** `relative` joined to `root`, refused (UnsafePathError) unless its shape is safe. */
export function joinSafely(root: string, relative: string): string {
  const problem = safePathProblem(relative);
  if (problem) throw new UnsafePathError(relative, problem);
  return path.join(path.resolve(root), ...relative.split("/"));
}

/**
 * Where `relative` lies under `root` once every symbolic link on the way is resolved: refused
 * (UnsafePathError) when its shape is unsafe, when a link leads out of `root`, or when a link is
 * dangling (writing through it would create its target, wherever that is). The parts that do not
 * exist yet are created below the last one that does, so they stay inside.
 */
export async function pathInside(root: string, relative: string): Promise<string> {
  joinSafely(root, relative);
  const top = await realpath(root).catch(() => null);
  // No directory yet: nothing under it exists, so nothing under it is a link.
  if (top === null) return path.join(path.resolve(root), ...relative.split("/"));
  const segments = relative.split("/");
  let current = top;
  for (const [i, segment] of segments.entries()) {
    const next = path.join(current, segment);
    const info = await lstat(next).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return null;
      throw error;
    });
    if (info === null) return path.join(next, ...segments.slice(i + 1));
    if (!info.isSymbolicLink()) {
      current = next;
      continue;
    }
    const target = await realpath(next).catch(() => null);
    if (target === null) throw new UnsafePathError(relative, "a symbolic link on its way leads nowhere");
    if (target !== top && !target.startsWith(`${top}${path.sep}`))
      throw new UnsafePathError(relative, "a symbolic link on its way leads out of the directory");
    current = target;
  }
  return current;
}
