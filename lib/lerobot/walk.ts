/**
 * A LeRobot dataset directory as the reader sees it: where each file really is, every symbolic
 * link on the way followed only where it may lead (local-path.ts), and the walk that lists the
 * files no metadata names. The directory may come from someone else; nothing here reads outside it.
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { hasUnsafeCharacter, showUnsafe, UNSAFE_CHARACTERS_DESCRIPTION } from "../characters";
import { type Located, locate, OUTSIDE } from "../local-path";
import { FilePath } from "../safe-path";
import type { Findings } from "./findings";

export class DatasetDirectory {
  constructor(
    readonly dir: string,
    /** The real paths links may lead into (linkRoots), the directory's own first. */
    private readonly linkRoots: string[],
    private readonly findings: Findings,
  ) {}

  /** `relative` under the directory, each step checked to lie where links may lead (local-path.ts). */
  locate(relative: string): Promise<Located | null> {
    return locate(this.linkRoots[0]!, relative, this.linkRoots);
  }

  /**
   * A regular file of the directory: its real path and size, every symbolic link on the way
   * followed only where it may lead (local-path.ts); why it is refused; or null when there is no
   * such file. Only a regular file counts: a FIFO or a device would block or never end when hashed.
   */
  async fileAt(relative: string): Promise<{ real: string; size: number } | { refused: string } | null> {
    const found = await this.locate(relative);
    if (!found || "refused" in found) return found;
    if (found.stats.isFile()) return { real: found.real, size: found.stats.size };
    if (!found.linked) return null;
    return {
      refused: found.stats.isDirectory()
        ? "a symbolic link to a directory (links are followed to files only)"
        : "a symbolic link to something that is not a regular file",
    };
  }

  /** Where a file the metadata names is read from; reported and undefined when refused or missing. */
  async realFile(relative: string): Promise<string | undefined> {
    const found = await this.fileAt(relative);
    if (found && "refused" in found)
      this.findings.report({ file: relative, line: 0, message: `not imported: ${found.refused}` });
    else if (!found) this.findings.report({ file: relative, line: 0, message: "file is missing" });
    else return found.real;
    return undefined;
  }

  /** Where an imported file's bytes are read from: the real path its checks were made on. */
  async realPathOf(relative: string): Promise<string> {
    const found = await this.fileAt(relative);
    if (!found || "refused" in found)
      throw new Error(`${relative}: ${found ? found.refused : "the file is gone since it was listed"}`);
    return found.real;
  }

  async sizeOf(relative: string): Promise<number | null> {
    const found = await this.fileAt(relative);
    if (found && "refused" in found) {
      this.findings.report({ file: relative, line: 0, message: `not imported: ${found.refused}` });
      return null;
    }
    return found?.size ?? null;
  }

  /**
   * Regular files under the directory in name order, and symbolic links to regular files where
   * they may point (linkTargetRoots); anything else is reported and skipped. Left out with a
   * notice, not a problem: hidden files and directories (a name starting with '.': `.git/` with
   * its LFS objects, `.cache/huggingface/` that `snapshot_download(local_dir=...)` leaves,
   * `.gitattributes`, `.DS_Store`), which are no part of a dataset, and a top-level `images/`,
   * where LeRobot keeps frames while it records and which its `push_to_hub` never uploads.
   */
  async *walk(relativeDir: string, named: Set<string>): AsyncGenerator<string> {
    const entries = (await listDir(path.join(this.dir, relativeDir))).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const entry of entries) {
      this.findings.signal?.throwIfAborted();
      const relative = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      if (named.has(relative)) continue;
      const problem = unsafePath(relative);
      if (problem) {
        this.findings.report({ file: showUnsafe(relative), line: 0, message: `not imported: ${problem}` });
        continue;
      }
      // A link is judged before the rules below: one that leads outside is refused whatever its
      // name, never left out quietly as hidden (`.keys -> ~/.ssh`) or as images/ (`images -> /etc`).
      if (entry.isSymbolicLink()) {
        const found = await this.fileAt(relative);
        if (found && "refused" in found && found.refused === OUTSIDE) {
          this.findings.report({ file: relative, line: 0, message: `not imported: ${found.refused}` });
          continue;
        }
      }
      const left = leftOut(relative, entry);
      if (left) {
        this.findings.notice(left, entry.isDirectory() ? `${relative}/` : relative);
        continue;
      }
      if (entry.isDirectory()) yield* this.walk(relative, named);
      else if (entry.isFile()) yield relative;
      else if (entry.isSymbolicLink()) {
        // Followed only to a regular file, so a link to a directory can never make a loop.
        const found = await this.fileAt(relative);
        if (found && "size" in found) yield relative;
        else
          this.findings.report({
            file: relative,
            line: 0,
            message: `not imported: ${found?.refused ?? "a symbolic link whose target does not exist"}`,
          });
      } else this.findings.report({ file: relative, line: 0, message: "not imported: not a regular file" });
    }
  }
}

/** Why a relative path from the metadata or the directory is refused, or null. */
export function unsafePath(relative: string): string | null {
  if (hasUnsafeCharacter(relative)) return `it contains ${UNSAFE_CHARACTERS_DESCRIPTION}`;
  const checked = FilePath.safeParse(relative);
  return checked.success ? null : checked.error.issues[0]!.message;
}

/** A directory's entries; none when it cannot be read. */
export async function listDir(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** Why the walk leaves an entry out with a notice (not a problem), or null. */
function leftOut(relative: string, entry: Dirent): string | null {
  if (entry.name.startsWith("."))
    return "left out: hidden files and directories (names starting with '.'), which are no part of a dataset";
  if (relative === "images" && entry.isDirectory())
    return "left out: images/, LeRobot's frames of a recording in progress (its push_to_hub never uploads them)";
  return null;
}
