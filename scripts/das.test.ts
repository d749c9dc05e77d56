import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import {
  das,
  disclosuresOf,
  filesUnder,
  sha256Of,
  spawnDas,
  storedVersion,
  type StoredVersion,
} from "@/lib/testing/pull-fixtures";
import type { PullSummary } from "@/lib/client/pull";

// `das` as a user runs it: the binary, over HTTP, against `next start` on the build and the run's
// local object store. (These use only endpoints that the build already has.)

let server: AppServer;
let small: StoredVersion;
const dirs: string[] = [];

const newDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "das-pull-"));
  dirs.push(dir);
  return dir;
};
const envOf = (v: StoredVersion, url = server.url) => ({ DAS_API_URL: url, DAS_API_KEY: v.key });
const summaryOf = (stdout: string) => JSON.parse(stdout) as PullSummary;

/** Every file of `expected` is in `dir` with the fixture's bytes, and nothing else is. */
function expectExactly(dir: string, v: StoredVersion, expected: StoredVersion["files"]) {
  expect(filesUnder(dir)).toEqual(expected.map((f) => f.path).sort());
  for (const f of expected) expect(sha256Of(path.join(dir, f.path)), f.path).toBe(f.sha256);
}

beforeAll(async () => {
  [server, small] = await Promise.all([
    startAppServer(),
    storedVersion({ episodes: 6, seed: 11, fileBytes: [1, 40_000] }),
  ]);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("das pull", () => {
  it("fetches every file of a small version and verifies it, in one download", async () => {
    const dir = newDir();
    const before = (await disclosuresOf(small.keyId)).length;
    const run = await das(["pull", `${small.datasetId}@1.0.0`, "--dir", dir, "--json"], envOf(small));
    expect(run.code, run.stderr).toBe(0);
    const summary = summaryOf(run.stdout);
    expect(summary).toMatchObject({
      files: small.files.length,
      downloaded: small.files.length,
      already_verified: 0,
      failed: [],
      interrupted: false,
    });
    expect(summary.bytes_received).toBe(small.files.reduce((sum, f) => sum + f.size_bytes, 0));
    expectExactly(dir, small, small.files);
    // One request for the whole version, one disclosure-log entry naming it; the files of no
    // episode come by the plan's own URLs, under the plan's one entry.
    const entries = (await disclosuresOf(small.keyId)).slice(before);
    const downloads = entries.filter((e) => e.id.startsWith("dl_"));
    expect(downloads.map((e) => e.id)).toEqual(summary.downloads);
    expect(downloads).toHaveLength(1);
    expect(downloads[0]!.requested_scope).toEqual({});
    expect(entries.filter((e) => !e.id.startsWith("dl_")).map((e) => e.id.slice(0, 3))).toEqual(
      small.files.some((f) => f.episode_id === null) ? ["pl_"] : [],
    );
    expect(run.stderr).toMatch(/Done: .*: \d+ files/);
    expect(run.stderr).toMatch(/\d+\/\d+ files .* ETA/);
  });

  it("fetches exactly a filtered subset (outcome and streams), as a filter download", async () => {
    const dir = newDir();
    const outcome = small.episodes[0]!.outcome;
    const matching = new Set(small.episodes.filter((e) => e.outcome === outcome).map((e) => e.episode_id));
    const expected = small.files.filter((f) => f.episode_id && matching.has(f.episode_id) && f.stream === "cam");
    const before = (await disclosuresOf(small.keyId)).length;
    const run = await das(
      ["pull", `${small.datasetId}@1.0.0`, "--dir", dir, "--outcome", outcome, "--streams", "cam", "--json"],
      envOf(small),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run.stdout).downloaded).toBe(expected.length);
    expectExactly(dir, small, expected);
    const [entry] = (await disclosuresOf(small.keyId)).slice(before);
    expect(entry!.requested_scope).toEqual({ filter: { outcome }, streams: ["cam"] });
    expect(entry!.file_count).toBe(expected.length);
  });

  it("fetches exactly the episodes the contributor, recovery and duration filters match, as one filter download", async () => {
    const dir = newDir();
    const { contributor, has_recovery: recovery } = small.episodes[0]!;
    const min = Math.min(...small.episodes.filter((e) => e.contributor === contributor).map((e) => e.duration_s));
    const matching = new Set(
      small.episodes
        .filter((e) => e.contributor === contributor && e.has_recovery === recovery && e.duration_s >= min)
        .map((e) => e.episode_id),
    );
    expect(matching.size).toBeGreaterThan(0);
    const expected = small.files.filter((f) => f.episode_id && matching.has(f.episode_id));
    const before = (await disclosuresOf(small.keyId)).length;
    const run = await das(
      [
        "pull",
        `${small.datasetId}@1.0.0`,
        "--dir",
        dir,
        "--contributor",
        contributor,
        "--has-recovery",
        String(recovery),
        "--min-duration-s",
        String(min),
        "--json",
      ],
      envOf(small),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run.stdout).downloaded).toBe(expected.length);
    expectExactly(dir, small, expected);
    const entries = (await disclosuresOf(small.keyId)).slice(before);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.requested_scope).toEqual({
      filter: { contributor, has_recovery: recovery, min_duration_s: min },
    });
    expect(entries[0]!.file_count).toBe(expected.length);
  });

  it("fetches chosen episodes only", async () => {
    const dir = newDir();
    const chosen = [small.episodes[1]!.episode_id, small.episodes[4]!.episode_id];
    const run = await das(
      ["pull", `${small.datasetId}@1.0.0`, "--dir", dir, "--episodes", chosen.join(","), "--json"],
      envOf(small),
    );
    expect(run.code, run.stderr).toBe(0);
    expectExactly(
      dir,
      small,
      small.files.filter((f) => f.episode_id !== null && chosen.includes(f.episode_id)),
    );
  });

  it("detects corrupted and truncated files on disk and fetches only those again", async () => {
    const dir = newDir();
    expect((await das(["pull", `${small.datasetId}@1.0.0`, "--dir", dir], envOf(small))).code).toBe(0);
    const [garbled, truncated] = small.files.filter((f) => f.size_bytes > 10);
    const garbledPath = path.join(dir, garbled!.path);
    const bytes = readFileSync(garbledPath);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff; // same size, different content
    writeFileSync(garbledPath, bytes);
    truncateSync(path.join(dir, truncated!.path), 3);
    const untouched = small.files
      .filter((f) => f !== garbled && f !== truncated)
      .map((f) => statSync(path.join(dir, f.path)).mtimeMs);

    const run = await das(["pull", `${small.datasetId}@1.0.0`, "--dir", dir, "--json"], envOf(small));
    expect(run.code, run.stderr).toBe(0);
    const summary = summaryOf(run.stdout);
    expect(summary).toMatchObject({ already_verified: small.files.length - 2, downloaded: 2, refetched_corrupt: 2 });
    expect(summary.bytes_received).toBe(garbled!.size_bytes + truncated!.size_bytes);
    expectExactly(dir, small, small.files);
    expect(
      small.files.filter((f) => f !== garbled && f !== truncated).map((f) => statSync(path.join(dir, f.path)).mtimeMs),
    ).toEqual(untouched);
  });

  it("continues a partial file with a Range request, and fetches a bad partial file whole", async () => {
    const dir = newDir();
    expect((await das(["pull", `${small.datasetId}@1.0.0`, "--dir", dir], envOf(small))).code).toBe(0);
    const [good, bad] = small.files.filter((f) => f.size_bytes >= 1000);
    const half = Math.floor(good!.size_bytes / 2);
    unlinkSync(path.join(dir, good!.path));
    writeFileSync(path.join(dir, `${good!.path}.das-partial`), small.content.get(good!.path)!.subarray(0, half));
    unlinkSync(path.join(dir, bad!.path));
    writeFileSync(path.join(dir, `${bad!.path}.das-partial`), Buffer.alloc(100, 7)); // not the file's first bytes

    const run = await das(["pull", `${small.datasetId}@1.0.0`, "--dir", dir, "--json"], envOf(small));
    expect(run.code, run.stderr).toBe(0);
    const summary = summaryOf(run.stdout);
    expect(summary).toMatchObject({ downloaded: 2, already_verified: small.files.length - 2, range_ignored: 0 });
    // The good half was kept: only the rest of it crossed the network. The bad prefix cost one extra whole fetch.
    expect(summary.bytes_received).toBe(good!.size_bytes - half + (bad!.size_bytes - 100) + bad!.size_bytes);
    expectExactly(dir, small, small.files);
  });

  it("resumes after being killed half way, without fetching verified files again", async () => {
    const big = await storedVersion({ episodes: 4, seed: 12, fileBytes: [150_000, 200_000] });
    const dir = newDir();
    const total = big.files.length;
    // Slowed down so that it is surely mid-way when killed.
    const { child, done } = spawnDas(
      ["pull", `${big.datasetId}@1.0.0`, "--dir", dir, "--concurrency", "2", "--limit-rate", "400k"],
      envOf(big),
    );
    const finished = () => big.files.filter((f) => existsSync(path.join(dir, f.path)));
    const inProgress = () => big.files.some((f) => existsSync(path.join(dir, `${f.path}.das-partial`)));
    const deadline = Date.now() + 30_000;
    // Killed mid-file: after three files, while another is being written (on a loaded machine the
    // gap between one file's end and the next one's start can outlast a poll).
    while (!(finished().length >= 3 && inProgress()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    child.kill("SIGKILL");
    const killed = await done;
    expect(killed.signal).toBe("SIGKILL");

    const verified = finished();
    expect(verified.length).toBeGreaterThanOrEqual(3);
    expect(verified.length).toBeLessThan(total);
    const mtimes = verified.map((f) => statSync(path.join(dir, f.path)).mtimeMs);
    const partials = big.files
      .map((f) => ({ f, p: path.join(dir, `${f.path}.das-partial`) }))
      .filter(({ p }) => existsSync(p))
      .map(({ f, p }) => ({ f, size: statSync(p).size }));
    expect(partials.length).toBeGreaterThan(0);
    const partialBytes = partials.reduce((sum, p) => sum + p.size, 0);

    const run = await das(["pull", `${big.datasetId}@1.0.0`, "--dir", dir, "--json"], envOf(big));
    expect(run.code, run.stderr).toBe(0);
    const summary = summaryOf(run.stdout);
    expect(summary.already_verified).toBe(verified.length);
    expect(summary.downloaded).toBe(total - verified.length);
    // A partial file cut short is continued with Range; one killed between its last byte and its
    // rename is complete already, so it is only verified and renamed.
    expect(summary.resumed).toBe(partials.filter((p) => p.size > 0 && p.size < p.f.size_bytes).length);
    const remaining = big.files.filter((f) => !verified.includes(f)).reduce((sum, f) => sum + f.size_bytes, 0);
    expect(summary.bytes_received).toBe(remaining - partialBytes);
    expect(verified.map((f) => statSync(path.join(dir, f.path)).mtimeMs)).toEqual(mtimes);
    expectExactly(dir, big, big.files);
  }, 90_000);

  it("exits non-zero with a clear message when a file cannot be verified", async () => {
    // The manifest says one thing, the store holds another: the file can never verify.
    const v = await storedVersion({ episodes: 1, seed: 13, fileBytes: [50, 60] });
    const { s3Client, putObject } = await import("@/lib/storage/client");
    const { objectKey, storeLocation } = await import("@/lib/storage/config");
    const victim = v.files[1]!;
    const client = s3Client(storeLocation());
    await putObject(
      client,
      storeLocation().bucket,
      objectKey(v.datasetId, "1.0.0", victim.path),
      Buffer.alloc(victim.size_bytes, 1),
    );
    client.destroy();
    const dir = newDir();
    const run = await das(["pull", `${v.datasetId}@1.0.0`, "--dir", dir, "--json"], envOf(v));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `1 file(s) could not be fetched or verified:\n  ${victim.path}: verification failed: sha256`,
    );
    expect(summaryOf(run.stdout).failed.map((f) => f.path)).toEqual([victim.path]);
    expect(existsSync(path.join(dir, victim.path))).toBe(false);
    expect(existsSync(path.join(dir, `${victim.path}.das-partial`))).toBe(false);
    expect(filesUnder(dir)).toHaveLength(v.files.length - 1);
  });
});

describe("das episodes, datasets, versions, manifest, annotations", () => {
  async function apiEpisodes(v: StoredVersion, query: Record<string, string>) {
    const episodes: unknown[] = [];
    let cursor: string | undefined;
    do {
      const search = new URLSearchParams({ ...query, limit: "2", ...(cursor ? { cursor } : {}) });
      const res = await fetch(`${server.url}/api/v1/datasets/${v.datasetId}/versions/1.0.0/episodes?${search}`, {
        headers: { authorization: `Bearer ${v.key}` },
      });
      expect(res.status).toBe(200);
      const page = await res.json();
      episodes.push(...page.episodes);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return episodes;
  }

  it("--format jsonl returns exactly the episodes the API returns for the same filter", async () => {
    for (const [flag, value] of [
      ["--outcome", small.episodes[2]!.outcome],
      ["--environment", small.episodes[3]!.environment],
    ] as const) {
      const run = await das(["episodes", `${small.datasetId}@1.0.0`, flag, value, "--format", "jsonl"], envOf(small));
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line));
      const expected = await apiEpisodes(small, { [flag.slice(2)]: value });
      expect(lines).toEqual(expected);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.length).toBeLessThan(small.episodes.length + 1);
    }
    const all = await das(["episodes", `${small.datasetId}@1.0.0`, "--format", "jsonl"], envOf(small));
    expect(
      all.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual(await apiEpisodes(small, {}));
  });

  it("--task, --contributor, --has-recovery and a duration range list exactly the matching episodes", async () => {
    const durations = small.episodes.map((e) => e.duration_s).sort((a, b) => a - b);
    const [min, max] = [durations[1]!, durations[4]!];
    const { contributor, has_recovery: recovery } = small.episodes[1]!;
    const cases: {
      args: string[];
      query: Record<string, string>;
      matches: (e: (typeof small.episodes)[number]) => boolean;
    }[] = [
      { args: ["--task", "pick"], query: { task: "pick" }, matches: (e) => e.task === "pick" },
      { args: ["--contributor", contributor], query: { contributor }, matches: (e) => e.contributor === contributor },
      {
        args: ["--has-recovery", String(recovery)],
        query: { has_recovery: String(recovery) },
        matches: (e) => e.has_recovery === recovery,
      },
      {
        args: ["--min-duration-s", String(min), "--max-duration-s", String(max)],
        query: { min_duration_s: String(min), max_duration_s: String(max) },
        matches: (e) => e.duration_s >= min && e.duration_s <= max,
      },
    ];
    for (const { args, query, matches } of cases) {
      const run = await das(["episodes", `${small.datasetId}@1.0.0`, ...args, "--format", "jsonl"], envOf(small));
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stdout
        .trimEnd()
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { episode_id: string });
      expect(lines, args.join(" ")).toEqual(await apiEpisodes(small, query));
      expect(lines.map((e) => e.episode_id).sort(), args.join(" ")).toEqual(
        small.episodes
          .filter(matches)
          .map((e) => e.episode_id)
          .sort(),
      );
      expect(lines.length, args.join(" ")).toBeGreaterThan(0);
    }
    // The range's own episodes: both bounds included, the episodes outside it left out.
    const ranged = await das(
      ["episodes", `${small.datasetId}@1.0.0`, "--min-duration-s", String(min), "--max-duration-s", String(max)],
      envOf(small),
    );
    expect(ranged.stderr).toContain(`${durations.filter((d) => d >= min && d <= max).length} episode(s).`);
  });

  it("refuses a malformed filter with a usage error naming the option, and explains a filter that matched nothing", async () => {
    const refused: [string[], string][] = [
      [["--has-recovery", "yes"], "--has-recovery takes true or false, not 'yes'."],
      [
        ["--min-duration-s", "-1"],
        "--min-duration-s takes a non-negative number of seconds, such as 12 or 12.5, not '-1'.",
      ],
      [
        ["--max-duration-s", "soon"],
        "--max-duration-s takes a non-negative number of seconds, such as 12 or 12.5, not 'soon'.",
      ],
      [["--task", ""], "--task takes a value, not an empty string."],
      [
        ["--min-duration-s", "10", "--max-duration-s", "5"],
        "--min-duration-s (10) must not exceed --max-duration-s (5).",
      ],
    ];
    for (const [args, message] of refused)
      for (const command of [["episodes"], ["pull", "--dir", newDir()]]) {
        const [name, ...rest] = command;
        const run = await das([name!, `${small.datasetId}@1.0.0`, ...rest, ...args], envOf(small));
        expect(run.code, `${name} ${args.join(" ")}`).toBe(2);
        expect(run.stderr, `${name} ${args.join(" ")}`).toContain(message);
      }
    const none = await das(["episodes", `${small.datasetId}@1.0.0`, "--task", "place"], envOf(small));
    expect(none.code).toBe(0);
    expect(none.stderr).toContain("0 episode(s).");
    expect(none.stderr).toContain(
      `${small.datasetId}@1.0.0's tasks: pick (--task place matches none of them exactly).`,
    );
    const tooLong = await das(["episodes", `${small.datasetId}@1.0.0`, "--min-duration-s", "100000"], envOf(small));
    const durations = small.episodes.map((e) => e.duration_s);
    expect(tooLong.stderr).toContain(
      `${small.datasetId}@1.0.0's episodes last from ${Math.min(...durations)} s to ${Math.max(...durations)} s.`,
    );
    // A bound of nine decimal places goes out as written, not as 5e-7 (which the API's pattern refuses).
    const tiny = await das(["episodes", `${small.datasetId}@1.0.0`, "--max-duration-s", "0.0000005"], envOf(small));
    expect(tiny.code, tiny.stderr).toBe(0);
    expect(tiny.stderr).toMatch(/^0 episode\(s\)\./);
  });

  it("--format csv and table list the same episodes", async () => {
    const csv = await das(["episodes", `${small.datasetId}@1.0.0`, "--format", "csv"], envOf(small));
    const rows = csv.stdout.trimEnd().split("\r\n");
    expect(rows[0]).toBe("episode_id,task,environment,duration_s,outcome,has_recovery,contributor,streams");
    expect(rows.slice(1).map((r) => r.split(",")[0])).toEqual(
      small.episodes.map((e) => e.episode_id).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    );
    const shown = await das(["episodes", `${small.datasetId}@1.0.0`], envOf(small));
    expect(shown.stdout.split("\n")[0]).toMatch(/^EPISODE_ID\s+TASK\s+ENVIRONMENT/);
    expect(shown.stderr).toContain(`${small.episodes.length} episode(s).`);
  });

  it("datasets, versions and manifest as tables and as JSON", async () => {
    const datasets = await das(["datasets", "--json"], envOf(small));
    expect(JSON.parse(datasets.stdout).map((d: { dataset_id: string }) => d.dataset_id)).toEqual([small.datasetId]);
    expect((await das(["datasets"], envOf(small))).stdout).toMatch(new RegExp(`^DATASET .*\\n${small.datasetId}\\s`));
    const versions = await das(["versions", small.datasetId, "--json"], envOf(small));
    expect(JSON.parse(versions.stdout)).toMatchObject([{ version: "1.0.0", licensed: true }]);
    const manifest = await das(["manifest", `${small.datasetId}@1.0.0`, "--json"], envOf(small));
    expect(
      JSON.parse(manifest.stdout)
        .files.map((f: { sha256: string }) => f.sha256)
        .sort(),
    ).toEqual(small.files.map((f) => f.sha256).sort());
    const table = await das(["manifest", `${small.datasetId}@1.0.0`], envOf(small));
    expect(table.stdout.split("\n").filter((l) => l.startsWith("episodes/"))).toHaveLength(small.files.length - 1);
  });

  it("annotations of an episode", async () => {
    const run = await das(["annotations", small.episodes[0]!.episode_id, "--json"], envOf(small));
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      episode_id: small.episodes[0]!.episode_id,
      dataset_id: small.datasetId,
      version: "1.0.0",
      annotations: [],
    });
  });

  it("shows API errors as `code: message (request_id)` and exits 1; usage errors exit 2", async () => {
    const missing = await das(["versions", "no-such-dataset"], envOf(small));
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toMatch(/^not_found: No such dataset is available to you\. \(req_[0-9A-Za-z]+\)$/);
    // A key of the right shape that the service never issued (a malformed one is refused before it is sent).
    const badKey = await das(["datasets"], { DAS_API_URL: server.url, DAS_API_KEY: `das_${"x".repeat(43)}` });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr.trim()).toMatch(/^unauthorized: .+ \(req_[0-9A-Za-z]+\)$/);
    const usage = await das(["pull", `${small.datasetId}@1.0.0`], envOf(small));
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("pull needs --dir DIR");
    const noUrl = await das(["datasets"], { DAS_API_URL: "", DAS_API_KEY: small.key });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain("Set DAS_API_URL");
    const stream = await das(
      ["pull", `${small.datasetId}@1.0.0`, "--dir", newDir(), "--streams", "sonar"],
      envOf(small),
    );
    expect(stream.code).toBe(1);
    expect(stream.stderr).toContain("Unknown streams for");
  });

  it("takes --url and --key instead of the environment", async () => {
    const run = await das(["datasets", "--json", "--url", `${server.url}/api/v1/`, "--key", small.key], {
      DAS_API_URL: "",
      DAS_API_KEY: "",
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toHaveLength(1);
  });
});

describe("rate limits", () => {
  let limited: AppServer;
  beforeAll(async () => {
    limited = await startAppServer({ RATE_LIMIT_PER_MINUTE: "2" });
  }, 120_000);
  afterAll(() => limited?.stop());

  it("waits out a 429 for Retry-After seconds and finishes", async () => {
    // A listing, the plan, then the download: the third request is over a budget of two per minute.
    const v = await storedVersion({ episodes: 3, seed: 14, fileBytes: [10, 100] });
    const dir = newDir();
    const started = Date.now();
    expect((await das(["datasets", "--json"], envOf(v, limited.url))).code).toBe(0);
    const run = await das(
      ["pull", `${v.datasetId}@1.0.0`, "--dir", dir, "--outcome", v.episodes[0]!.outcome, "--json"],
      envOf(v, limited.url),
    );
    expect(run.code, run.stderr).toBe(0);
    const wait = /POST \/api\/v1\/downloads: rate limited \(429\); waiting (\d+) s/.exec(run.stderr);
    expect(wait, run.stderr).not.toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(Number(wait![1]) * 1000);
    const matching = new Set(v.episodes.filter((e) => e.outcome === v.episodes[0]!.outcome).map((e) => e.episode_id));
    expectExactly(
      dir,
      v,
      v.files.filter((f) => f.episode_id !== null && matching.has(f.episode_id)),
    );
    expect(summaryOf(run.stdout).downloads).toHaveLength(1);
  }, 150_000);
});
