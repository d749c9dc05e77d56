import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCsv } from "@/lib/testing/disclosure-fixtures";
import type { Download } from "./download";
import { renderDownload } from "./formats";

/*
 * The file lists of a download are written from values the service did not write itself: paths
 * and ids from the catalog, URLs from the signer. Even a path the importer would refuse must not
 * turn download.sh into someone else's script or add options to the aria2c list. Each hostile
 * path below tries one way in; the injected commands touch a PWNED_* file in the directory the
 * script runs in.
 */
const HOSTILE_PATHS = [
  // The review's finding: the path closes the sha256sum here-document and runs a command.
  "a.bin\nSHA256SUMS\ntouch PWNED_heredoc\n: <<'SHA256SUMS'",
  "quote'; touch PWNED_quote; echo '.bin",
  'double"quote".bin',
  "sub/$(touch PWNED_dollar).bin",
  "back`touch PWNED_backtick`.bin",
  "semi;touch PWNED_semi;.bin",
  "pipe|touch PWNED_pipe&.bin",
  // Read as options, or as standard input and output, if written bare.
  "-o PWNED_dash",
  "-",
  "--/-rf",
  "dir with spaces/file name .bin",
  "${HOME}$IFS*.bin",
  "~/tilde.bin",
  "#not-a-comment.bin",
  "%s%n%x.bin",
  "back\\slash\\n.bin",
  "données/日本語 ファイル 🤖.bin",
  "carriage\rreturn.bin",
  "tab\there.bin",
  "line\u2028separator and \u202Eright-to-left.bin",
  '=HYPERLINK("evil","x").bin',
];

// What aria2c's input format cannot carry: it has no quoting, splits lines at LF, strips spaces,
// tabs and CRs from both ends of a value, and joins `out` to its directory as given. Nor does it get
// anything else the importer refuses (a backslash separates directories on Windows).
const NOT_FOR_ARIA2C = new Set([
  HOSTILE_PATHS[0]!,
  "back\\slash\\n.bin",
  "carriage\rreturn.bin",
  "tab\there.bin",
  "line\u2028separator and \u202Eright-to-left.bin",
]);

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");
const contentOf = (n: number) => Buffer.from(`file ${n}: ${"x".repeat(n)}\n`);

let server: Server;
let base: string;
/** Bytes to serve in place of a file's own, to see a mismatch reported. */
const corrupted = new Set<number>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const n = Number(/^\/bucket\/(\d+)\?/.exec(request.url ?? "")?.[1] ?? NaN);
    if (!Number.isInteger(n)) return void response.writeHead(404).end();
    response
      .writeHead(200, { "Content-Type": "application/octet-stream" })
      .end(corrupted.has(n) ? Buffer.from("tampered") : contentOf(n));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

// A signed URL's query carries '&', and a sub-delimiter such as "'", "$" or "(" is legal in a URL:
// the script must quote URLs as much as paths.
const urlOf = (n: number) =>
  `${base}/bucket/${n}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=${sha256(String(n))}&q='$(touch%20PWNED_url)'`;

function downloadOf(paths: readonly string[], fields: Partial<Download> = {}): Download {
  const files = paths.map((p, n) => ({
    path: p,
    episode_id: `ep-${n}`,
    episode_ids: [`ep-${n}`],
    stream: "cam",
    size_bytes: contentOf(n).length,
    sha256: sha256(contentOf(n)),
    url: urlOf(n),
  }));
  return {
    download_id: "dl_0123456789abcdef",
    dataset_id: "kitchen-pick-place",
    version: "1.2.0",
    expires_at: "2026-03-01T10:15:00.000Z",
    file_count: files.length,
    total_bytes: files.reduce((sum, f) => sum + f.size_bytes, 0),
    files,
    co_delivered_episode_ids: [],
    ...fields,
  };
}

const made: string[] = [];

/** Every file below `dir`, as '/'-separated paths relative to it. */
function filesBelow(dir: string, prefix = ""): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    return entry.isDirectory() ? filesBelow(dir, relative) : [relative];
  });
}

/** Runs download.sh with sh in a fresh directory: real sh, real curl, real sha256sum. */
async function runScript(
  download: Download,
): Promise<{ code: number; stdout: string; stderr: string; sandbox: string; work: string }> {
  const sandbox = mkdtempSync(path.join(tmpdir(), "das-download-sh-"));
  made.push(sandbox);
  const work = path.join(sandbox, "work");
  mkdirSync(work);
  writeFileSync(path.join(sandbox, "download.sh"), renderDownload(download, "curl"));
  return new Promise((resolve) => {
    execFile(
      "sh",
      ["../download.sh"],
      { cwd: work, env: { ...process.env, HOME: sandbox } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr, sandbox, work });
      },
    );
  });
}

const markers = (dir: string) => filesBelow(dir).filter((f) => path.basename(f).startsWith("PWNED"));

/** Runs download.sh for these paths and checks that it did exactly its job and nothing else. */
async function expectFetchedExactly(paths: readonly string[]) {
  const run = await runScript(downloadOf(paths));
  expect(markers(run.sandbox)).toEqual([]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  // Nothing but the files, each where its path says, with its bytes.
  expect(filesBelow(run.work).sort()).toEqual([...paths].sort());
  for (const [n, p] of paths.entries()) expect(readFileSync(path.join(run.work, p)), p).toEqual(contentOf(n));
  // One OK line per file, each name on one line.
  const lines = run.stdout.trimEnd().split("\n");
  expect(lines).toHaveLength(paths.length);
  expect(lines.every((l) => l.endsWith(": OK"))).toBe(true);
  return lines;
}

describe("download.sh (curl)", () => {
  it.each(HOSTILE_PATHS)("fetches %j to exactly that path and runs nothing injected", async (hostile) => {
    await expectFetchedExactly(["plain.bin", hostile]);
  });

  it("runs nothing of the review's exploit even when every check line is well-formed", async () => {
    // The hostile entry claims the bytes of a real a.bin, so that "<sha256>  a.bin", the line its
    // path started in the old here-document, checked out and the script went on to its commands.
    const download = downloadOf(["a.bin", HOSTILE_PATHS[0]!]);
    download.files[1] = {
      ...download.files[1]!,
      sha256: download.files[0]!.sha256,
      size_bytes: download.files[0]!.size_bytes,
      url: download.files[0]!.url,
    };
    const run = await runScript(download);
    expect(markers(run.sandbox)).toEqual([]);
    expect(run.code).toBe(0);
    expect(filesBelow(run.work).sort()).toEqual(["a.bin", HOSTILE_PATHS[0]!].sort());
    for (const p of ["a.bin", HOSTILE_PATHS[0]!]) expect(readFileSync(path.join(run.work, p))).toEqual(contentOf(0));
  });

  it("fetches every hostile path of one download, and names each file on one line of its own", async () => {
    const lines = await expectFetchedExactly(HOSTILE_PATHS);
    expect(lines).toContain("quote'; touch PWNED_quote; echo '.bin: OK");
    expect(lines).toContain("a.bin\\u{a}SHA256SUMS\\u{a}touch PWNED_heredoc\\u{a}: <<'SHA256SUMS': OK");
  });

  it("reports a file whose bytes do not match and exits 1", async () => {
    corrupted.add(2);
    try {
      const run = await runScript(downloadOf(HOSTILE_PATHS.slice(0, 4)));
      expect(run.code).toBe(1);
      expect(run.stdout.split("\n")).toContain(`${HOSTILE_PATHS[2]}: FAILED`);
      expect(run.stdout.split("\n").filter((l) => l.endsWith(": OK"))).toHaveLength(3);
      expect(run.stderr).toContain("did not match");
      expect(markers(run.sandbox)).toEqual([]);
    } finally {
      corrupted.delete(2);
    }
  });

  it("keeps the download's own fields in its comments, whatever they hold", async () => {
    const run = await runScript(
      downloadOf(["plain.bin"], {
        dataset_id: "ds\ntouch PWNED_dataset",
        version: "1.0.0\r\ntouch PWNED_version",
        download_id: "dl_x\u2028touch PWNED_id",
        expires_at: "soon\ntouch PWNED_expiry",
      }),
    );
    expect(markers(run.sandbox)).toEqual([]);
    expect(run.code).toBe(0);
    expect(filesBelow(run.work)).toEqual(["plain.bin"]);
  });

  it("refuses to write a path that would leave the directory", () => {
    for (const p of ["../escape.bin", "a/../../escape.bin", ".."]) {
      expect(() => renderDownload(downloadOf(["ok.bin", p]), "curl"), p).toThrow(/refusing to write the path/);
    }
  });
});

/** aria2c's input file as aria2c reads it (UriListParser, OptionParser): URI lines, then indented name=value lines. */
function parseAria2cInput(text: string): { uris: string[]; options: [string, string][] }[] {
  const strip = (s: string) => s.replace(/^[\r\n\t ]+|[\r\n\t ]+$/g, "");
  const entries: { uris: string[]; options: [string, string][] }[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith(" ") || line.startsWith("\t")) {
      const at = line.indexOf("=");
      const name = strip(at === -1 ? line : line.slice(0, at));
      if (!name) continue;
      if (!entries.length) throw new Error("an option line before any URI");
      entries.at(-1)!.options.push([name, at === -1 ? "" : strip(line.slice(at + 1))]);
    } else {
      entries.push({ uris: line.split("\t").map(strip).filter(Boolean), options: [] });
    }
  }
  return entries;
}

describe("aria2c-input.txt", () => {
  it("gives each file exactly its URL and the two options we wrote", () => {
    const paths = HOSTILE_PATHS.filter((p) => !NOT_FOR_ARIA2C.has(p));
    const download = downloadOf(paths);
    expect(parseAria2cInput(renderDownload(download, "aria2c"))).toEqual(
      download.files.map((f) => ({
        uris: [f.url],
        options: [
          ["out", f.path],
          ["checksum", `sha-256=${f.sha256}`],
        ],
      })),
    );
  });

  it.each([
    ...NOT_FOR_ARIA2C,
    "a.bin\n  dir=/tmp\n  out=../../.bashrc",
    " leading-space.bin",
    "trailing-space.bin ",
    "../escape.bin",
    "a/../escape.bin",
    "/etc/cron.d/job",
    "nul\u0000.bin",
    "del\u007f.bin",
    "next-line\u0085.bin",
  ])("refuses a path it cannot carry: %j", (p) => {
    expect(() => renderDownload(downloadOf(["ok.bin", p]), "aria2c")).toThrow(/refusing to write the path/);
  });

  it("refuses a URL that would split into mirrors or lines", () => {
    const download = downloadOf(["ok.bin"]);
    for (const url of [
      `${download.files[0]!.url}\thttp://evil/`,
      `${download.files[0]!.url}\n  dir=/tmp`,
      "http://host/a b",
    ]) {
      expect(() => renderDownload({ ...download, files: [{ ...download.files[0]!, url }] }, "aria2c"), url).toThrow(
        /refusing to write the URL/,
      );
    }
  });
});

describe("manifest.json and manifest.csv", () => {
  it("JSON carries every value exactly", () => {
    const download = downloadOf(HOSTILE_PATHS);
    expect(JSON.parse(renderDownload(download, "json"))).toEqual(download);
  });

  it("CSV carries every path in one field, a formula-like one behind a quote", () => {
    const download = downloadOf(HOSTILE_PATHS);
    const records = parseCsv(renderDownload(download, "csv"));
    expect(records[0]).toEqual(["path", "episode_id", "episode_ids", "stream", "size_bytes", "sha256", "url"]);
    expect(records.slice(1)).toEqual(
      download.files.map((f) => [
        /^[-=+@]/.test(f.path) ? `'${f.path}` : f.path,
        f.episode_id,
        f.episode_ids.join(" "),
        f.stream,
        String(f.size_bytes),
        f.sha256,
        f.url,
      ]),
    );
    expect(renderDownload(downloadOf(['=HYPERLINK("http://evil","x")']), "csv")).toContain(
      `\r\n"'=HYPERLINK(""http://evil"",""x"")",`,
    );
  });
});
