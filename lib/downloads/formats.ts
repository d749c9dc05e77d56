import { csvLine } from "../csv";
import { safePathProblem } from "../safe-path";
import { UNSAFE_CHARACTERS } from "../characters";
import type { Download, DownloadFile } from "./download";

/** The forms a download's file list can be taken away in: for scripts, spreadsheets, aria2c and curl. */
export const DOWNLOAD_FORMATS = {
  json: { file: "manifest.json", type: "application/json; charset=utf-8" },
  csv: { file: "manifest.csv", type: "text/csv; charset=utf-8" },
  aria2c: { file: "aria2c-input.txt", type: "text/plain; charset=utf-8" },
  curl: { file: "download.sh", type: "text/x-shellscript; charset=utf-8" },
} as const;

export type DownloadFormat = keyof typeof DOWNLOAD_FORMATS;

/*
 * Every value below comes from the catalog or the signer, never from this file, so each one is
 * quoted or encoded for where it goes, whatever the importer admitted: JSON and CSV encode
 * anything; sh single-quotes anything; aria2c's input format has no quoting at all, so a value it
 * would read differently is refused rather than written.
 */

// Single-quoted for sh: inside single quotes nothing is special, not even a line break; only the
// quote itself needs care.
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

// Paths are relative, so "./" in front names the same file, and no path can then be read as an
// option ("-o"), as standard input or output ("-") or as an absolute path ("/etc/..." becomes
// ".//etc/...", below the current directory).
const shellPath = (path: string) => shellQuote(`./${path}`);

const UNSAFE_EVERYWHERE = new RegExp(UNSAFE_CHARACTERS.source, "g");

/** A value as a person may read it in a terminal or a comment: unsafe characters spelled out as \u{...}. */
const visible = (text: string) => text.replace(UNSAFE_EVERYWHERE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);

class UnsafeValueError extends Error {
  constructor(format: DownloadFormat, what: string, value: string) {
    super(
      `refusing to write ${what} "${visible(value)}" into the ${format} list of a download: it cannot be written there safely`,
    );
    this.name = "UnsafeValueError";
  }
}

// Quoting cannot keep a ".." segment below the current directory, so such a path is refused.
function assertStaysBelow(format: DownloadFormat, file: DownloadFile): void {
  if (file.path.split("/").includes("..")) throw new UnsafeValueError(format, "the path", file.path);
}

// Signed URLs are ours and percent-encoded: nothing in them is a space or a control character.
function assertPlainUrl(format: DownloadFormat, file: DownloadFile): void {
  if (!/^https?:\/\/[\x21-\x7e]+$/.test(file.url)) throw new UnsafeValueError(format, "the URL", file.url);
}

function assertSha256(format: DownloadFormat, file: DownloadFile): void {
  if (!/^[0-9a-f]{64}$/.test(file.sha256)) throw new UnsafeValueError(format, "the checksum", file.sha256);
}

/**
 * `aria2c -i aria2c-input.txt`: each URL on a line of its own (a tab would separate mirrors of the
 * same file), then its options on indented `name=value` lines. aria2c has no quoting: a line break
 * in a value would start an option of its own (`dir=`, `out=` of another file), it strips spaces
 * from both ends of a value, and it joins `out` to its directory as given, so a ".." segment would
 * leave it. Only paths the importer admits are written.
 */
function aria2cEntry(file: DownloadFile): string {
  assertPlainUrl("aria2c", file);
  assertSha256("aria2c", file);
  // The safe-path rule the importer admits paths by and `das pull` judges them by.
  if (safePathProblem(file.path) !== null) throw new UnsafeValueError("aria2c", "the path", file.path);
  return `${file.url}\n  out=${file.path}\n  checksum=sha-256=${file.sha256}\n`;
}

/**
 * A POSIX sh script that fetches every file with curl and then compares each file's SHA-256 with
 * the expected one. Every path and URL is one single-quoted argument, and each file is hashed from
 * standard input, so no part of a path is ever read as shell syntax, an option or a checksum line.
 */
function curlScript(download: Download): string {
  const lines = [
    "#!/bin/sh",
    `# ${visible(download.dataset_id)} ${visible(download.version)}: ${download.file_count} files, download ${visible(download.download_id)}.`,
    `# The links expire at ${visible(download.expires_at)}; after that, request the download again.`,
    "set -eu",
    "failed=0",
    "# check SHA256 FILE NAME: hashes FILE (read on standard input, so its name is never parsed) and compares.",
    "check() {",
    '  sum=$(sha256sum < "$2")',
    '  if [ "${sum%% *}" = "$1" ]; then printf \'%s: OK\\n\' "$3"; else printf \'%s: FAILED\\n\' "$3"; failed=1; fi',
    "}",
  ];
  for (const file of download.files) {
    assertStaysBelow("curl", file);
    assertPlainUrl("curl", file);
    const dir = file.path.includes("/") ? file.path.slice(0, file.path.lastIndexOf("/")) : "";
    // --globoff: curl would otherwise read [] and {} in a URL as ranges to expand.
    lines.push(
      `${dir ? `mkdir -p -- ${shellPath(dir)} && ` : ""}curl -fsS --globoff -o ${shellPath(file.path)} ${shellQuote(file.url)}`,
    );
  }
  for (const file of download.files) {
    assertSha256("curl", file);
    lines.push(`check ${file.sha256} ${shellPath(file.path)} ${shellQuote(visible(file.path))}`);
  }
  lines.push(
    'if [ "$failed" -ne 0 ]; then echo "Some files did not match their SHA-256: download them again." >&2; exit 1; fi',
  );
  return `${lines.join("\n")}\n`;
}

export function renderDownload(download: Download, format: DownloadFormat): string {
  switch (format) {
    case "json":
      return `${JSON.stringify(download, null, 2)}\n`;
    case "csv":
      // episode_ids space-separated: an episode id holds no space.
      return (
        csvLine(["path", "episode_id", "episode_ids", "stream", "size_bytes", "sha256", "url"]) +
        download.files
          .map((f) => csvLine([f.path, f.episode_id, f.episode_ids.join(" "), f.stream, f.size_bytes, f.sha256, f.url]))
          .join("")
      );
    case "aria2c":
      return download.files.map(aria2cEntry).join("");
    case "curl":
      return curlScript(download);
  }
}
