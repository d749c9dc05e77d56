import { createHash } from "node:crypto";
import { safePathProblem } from "../safe-path";
import type { VersionView } from "../views/view";
import type { ViewFile } from "../views/files";
import { hubError } from "./errors";

/**
 * How a view's files and folders appear in the Hub's listings (tree, paths-info, siblings). Every
 * file is shown as a Git LFS object, as the Hub shows large files: `lfs.oid` is its SHA-256 (what
 * the clients use as its ETag) and `oid` the Git blob id of its LFS pointer, as the Hub's own. A
 * folder's `oid` is a digest of the view and its path (the Hub's is a Git tree id; no client reads
 * it for more than identity). No `xetHash`: the clients then stay on plain HTTP.
 */

export type FileEntry = {
  type: "file";
  oid: string;
  size: number;
  path: string;
  lfs: { oid: string; size: number; pointerSize: number };
  lastCommit?: LastCommit;
};
export type FolderEntry = { type: "directory"; oid: string; size: 0; path: string; lastCommit?: LastCommit };
export type TreeEntry = FileEntry | FolderEntry;
type LastCommit = { id: string; title: string; date: string };

export function fileEntry(
  view: VersionView,
  file: Pick<ViewFile, "path" | "size_bytes" | "sha256">,
  expand: boolean,
): FileEntry {
  const pointer = lfsPointer(file.sha256, file.size_bytes);
  return {
    type: "file",
    oid: gitBlobId(pointer),
    size: file.size_bytes,
    path: file.path,
    lfs: { oid: file.sha256, size: file.size_bytes, pointerSize: Buffer.byteLength(pointer) },
    ...(expand ? { lastCommit: lastCommit(view) } : {}),
  };
}

export function folderEntry(view: VersionView, path: string, expand: boolean): FolderEntry {
  return {
    type: "directory",
    oid: createHash("sha1").update(`${view.sha}\0${path}`).digest("hex"),
    size: 0,
    path,
    ...(expand ? { lastCommit: lastCommit(view) } : {}),
  };
}

/** The version's release stands for the one commit of each revision. */
const lastCommit = (view: VersionView): LastCommit => ({
  id: view.sha,
  title: `${view.datasetId} ${view.version.version}`,
  date: view.version.releasedAt.toISOString(),
});

export const lfsPointer = (sha256: string, size: number) =>
  `version https://git-lfs.github.com/spec/v1\noid sha256:${sha256}\nsize ${size}\n`;

export const gitBlobId = (content: string) =>
  createHash("sha1")
    .update(`blob ${Buffer.byteLength(content)}\0${content}`)
    .digest("hex");

/** Longer than any path a file of a version can have (the importer admits 1,024 characters). */
export const MAX_PATH_CHARACTERS = 1024;

/**
 * A path of a repository as the clients send it (percent-decoded): relative, '/' separators, no
 * empty, '.' or '..' segment, no control or other unsafe character, at most 1,024 characters. Any
 * other is refused with 400 and EntryNotFound (the clients' own error for a path that is not there):
 * nothing is looked up or disclosed for it.
 */
export function checkedPath(path: string): string {
  const problem =
    path.length > MAX_PATH_CHARACTERS ? `it is longer than ${MAX_PATH_CHARACTERS} characters` : safePathProblem(path);
  if (problem) throw hubError("invalid_parameter", "EntryNotFound", `Not a path of a repository: ${problem}.`);
  return path;
}
