// npm run bench:pull [-- --episodes 150 --file-mb 1 --concurrency 8 --runs 3 --profile]
// In one run (own embedded PostgreSQL and local store under .data/bench-pull): a LeRobot v2.1
// dataset of real (random) bytes, by default 150 episodes of a 1 MB data file and a 1 MB video
// (about 302 MB with its meta/), imported with --upload into the local store; then, in turns,
// `das pull` of the whole version as a user runs it (the installed bin, a process of its own,
// through the production build's API) and aria2c (Debian's package) fetching the same files from
// signed URLs of one download of the same scope, with the same parallelism, into an empty
// directory each time. The ratio of their MB/s is the pull's figure: the store, the disk and the
// machine are the same for both. Then the command-line tools' start: `das --help` and
// `das-admin --help` next to `node -e 0`. With --profile one more `das pull` runs under
// `node --cpu-prof`, summarised (where its CPU time goes). Prints a table, then one JSON line.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT, startEmbeddedDefault } from "@/lib/dev/embedded-default";

const { values } = parseArgs({
  options: {
    episodes: { type: "string", default: "150" },
    "file-mb": { type: "string", default: "1" },
    concurrency: { type: "string", default: "8" },
    runs: { type: "string", default: "3" },
    starts: { type: "string", default: "15" },
    profile: { type: "boolean", default: false },
  },
});
const EPISODES = Number(values.episodes);
const FILE_BYTES = Math.round(Number(values["file-mb"]) * 1e6);
const CONCURRENCY = Number(values.concurrency);
const RUNS = Number(values.runs);
const STARTS = Number(values.starts);
const mb = (bytes: number) => bytes / 1e6;

if (!existsSync("/usr/bin/aria2c")) {
  process.stderr.write("bench:pull compares das pull with aria2c: apt-get install -y aria2\n");
  process.exit(1);
}

process.env.DAS_DATA_DIR ??= ".data/bench-pull";
const runtime = await startEmbeddedDefault();
Object.assign(process.env, runtime.env, { RATE_LIMIT_PER_MINUTE: "100000000" });
const { createDb } = await import("@/lib/db/client");
const { importLeRobotVersion } = await import("@/lib/catalog/import/lerobot/source");
const { s3Client } = await import("@/lib/storage/client");
const { objectKey, storeLocation } = await import("@/lib/storage/config");
const { createOrganization, organizationBySlug } = await import("@/lib/admin/organizations");
const { grantLicence } = await import("@/lib/admin/licences");
const { issueKey } = await import("@/lib/admin/keys");
const { httpPost, percentile, progress, startProductionServer, table } = await import("./bench/common");
const { summariseProfile } = await import("./bench/cpu-profile");
const { ratioRows } = await import("./bench/ratios");

const db = createDb(runtime.env.DATABASE_URL!, { max: 4 });
const ctx = {
  db,
  requestId: "bench-pull",
  principal: { kind: "operator" as const, name: userInfo().username, organizationId: null },
};
const datasetId = `bench-pull-${EPISODES}x${FILE_BYTES}`;
const version = "1.0.0";
const scratch = mkdtempSync(path.join(tmpdir(), "das-bench-pull-"));

// The dataset, imported once per size (a later run reuses it).
const [existing] =
  await db.$client`select 1 from dataset_versions where dataset_id = ${datasetId} and version = ${version}`;
if (!existing) {
  const source = path.join(scratch, "source");
  progress(`generating a LeRobot v2.1 dataset of ${EPISODES} episodes, two files of ${mb(FILE_BYTES)} MB each`);
  await run(process.execPath, [
    "--import",
    "tsx",
    "scripts/bench/generate-lerobot.ts",
    source,
    "v2.1",
    String(EPISODES),
    String(FILE_BYTES),
  ]);
  const location = storeLocation();
  const client = s3Client(location);
  progress(`importing ${datasetId} with --upload`);
  const imported = await importLeRobotVersion(db.$client, {
    dir: source,
    datasetId,
    version,
    concurrency: 8,
    upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, version, p) },
  });
  client.destroy();
  if (imported.status !== "imported") throw new Error(`import: ${JSON.stringify(imported).slice(0, 300)}`);
  rmSync(source, { recursive: true, force: true });
}
const org = await organizationBySlug(ctx, "bench").catch(() => createOrganization(ctx, { slug: "bench" }));
await grantLicence(ctx, { organizationId: org.id, datasetId, version });
const key = (await issueKey(ctx, { organizationId: org.id, name: `bench pull ${new Date().toISOString()}` })).secret;

const server = await startProductionServer({ ...(process.env as Record<string, string>) });
const dasBin = path.join(PROJECT_ROOT, "scripts/bin/das.mjs");
const pullArgs = (dir: string) => [
  "pull",
  `${datasetId}@${version}`,
  "--dir",
  dir,
  "--concurrency",
  String(CONCURRENCY),
  "--url",
  server.url,
  "--key",
  key,
];

type Turn = { seconds: number; bytes: number };
/** The scope's files (the whole version, meta/ included), as its download lists them. */
let scope: { path: string; size_bytes: number }[] = [];
const pulls: Turn[] = [];
const arias: Turn[] = [];
let profileSummary: ReturnType<typeof summariseProfile> | null = null;
try {
  // The bundle made before anything is timed (a checkout being worked on may need it made again).
  await run(process.execPath, [dasBin, "--help"]);
  for (let turn = 0; turn < RUNS; turn++) {
    // Each goes first in every other turn, so that neither always meets a warmer page cache.
    // aria2c's download first in the first turn: it lists the scope's files, which a pull is checked by.
    const order = turn % 2 === 0 ? [ariaTurn, pullTurn] : [pullTurn, ariaTurn];
    for (const take of order) await take();
  }
  if (values.profile) profileSummary = await profiledPull();
} catch (error) {
  process.stderr.write(`the server's output:\n${server.output().slice(-5000)}\n`);
  throw error;
} finally {
  await server.stop();
}

/** `das pull` of the whole version into an empty directory, as a user runs it. */
async function pullTurn() {
  const dir = path.join(scratch, "pull");
  rmSync(dir, { recursive: true, force: true });
  const started = process.hrtime.bigint();
  await run(process.execPath, [dasBin, ...pullArgs(dir)]);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  pulls.push({ seconds, bytes: bytesOf(dir, scope) });
  progress(`das pull: ${seconds.toFixed(2)} s`);
}

/**
 * aria2c fetching the files of one download of the same scope (the whole version with its meta/,
 * as das pull asks for it) from their signed URLs, with as many at once, into an empty directory.
 * The download is requested before the clock starts: aria2c is given its URLs, das pull asks for
 * its own.
 */
async function ariaTurn() {
  const res = await httpPost(
    `${server.url}/api/v1/downloads`,
    { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
    JSON.stringify({ dataset_id: datasetId, version, include_version_files: true }),
  );
  if (res.status !== 201) throw new Error(`download answered ${res.status}: ${res.body.slice(0, 300)}`);
  const files = (JSON.parse(res.body) as { files: { path: string; url: string; size_bytes: number }[] }).files;
  scope = files;
  const dir = path.join(scratch, "aria2c");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const list = path.join(scratch, "aria2c.txt");
  writeFileSync(list, files.map((f) => `${f.url}\n  out=${f.path}\n`).join(""));
  const started = process.hrtime.bigint();
  await run("/usr/bin/aria2c", [
    `--input-file=${list}`,
    `--dir=${dir}`,
    `--max-concurrent-downloads=${CONCURRENCY}`,
    "--split=1",
    "--max-connection-per-server=16",
    "--file-allocation=none",
    "--allow-overwrite=true",
    "--auto-file-renaming=false",
    "--console-log-level=error",
    "--summary-interval=0",
    "--download-result=hide",
  ]);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  arias.push({ seconds, bytes: bytesOf(dir, files) });
  progress(`aria2c: ${seconds.toFixed(2)} s`);
}

/** One more `das pull` under `node --cpu-prof`, summarised by part and function (through the bundle's source maps). */
async function profiledPull() {
  const dir = path.join(scratch, "profiled");
  const profiles = path.resolve(process.env.DAS_DATA_DIR!, "profiles", new Date().toISOString().replace(/[:.]/g, "-"));
  mkdirSync(profiles, { recursive: true });
  await run(process.execPath, ["--cpu-prof", `--cpu-prof-dir=${profiles}`, dasBin, ...pullArgs(dir)]);
  const file = readdirSync(profiles).find((f) => f.endsWith(".cpuprofile"))!;
  progress(`profile: ${path.join(profiles, file)}`);
  return summariseProfile(path.join(profiles, file), PROJECT_ROOT, 20);
}

// The command-line tools' start, next to Node's own, in turns.
const starts: Record<"node" | "das" | "das-admin", number[]> = { node: [], das: [], "das-admin": [] };
for (let i = 0; i < STARTS; i++) {
  starts.node.push(await timed(process.execPath, ["-e", "0"]));
  starts.das.push(await timed(process.execPath, [dasBin, "--help"]));
  starts["das-admin"].push(
    await timed(process.execPath, [path.join(PROJECT_ROOT, "scripts/bin/das-admin.mjs"), "--help"]),
  );
}
const startP50 = (name: keyof typeof starts) =>
  percentile(
    [...starts[name]].sort((a, b) => a - b),
    50,
  );

const rate = (turns: Turn[]) => mb(turns.reduce((s, t) => s + t.bytes, 0)) / turns.reduce((s, t) => s + t.seconds, 0);
const pullRate = rate(pulls);
const ariaRate = rate(arias);
const figures = {
  pull_to_aria2c_ratio: round(pullRate / ariaRate),
  cli_start_to_node_ratio: round(Math.max(startP50("das"), startP50("das-admin")) / startP50("node")),
  pull_mb_per_s: round(pullRate),
  aria2c_mb_per_s: round(ariaRate),
  pull_s: round(
    percentile(
      pulls.map((t) => t.seconds).sort((a, b) => a - b),
      50,
    ),
  ),
  aria2c_s: round(
    percentile(
      arias.map((t) => t.seconds).sort((a, b) => a - b),
      50,
    ),
  ),
  dataset_mb: round(mb(pulls[0]?.bytes ?? 0)),
  concurrency: CONCURRENCY,
  das_help_ms: round(startP50("das")),
  das_admin_help_ms: round(startP50("das-admin")),
  node_start_ms: round(startP50("node")),
  profiled: values.profile,
};
if (profileSummary) {
  console.log(`profile of one das pull (under --cpu-prof): ${profileSummary.busyMs} ms busy`);
  console.log(table(profileSummary.parts.map((p) => ({ part: p.part, ms: p.ms, "% of busy": p.percent }))));
  console.log(
    table(
      profileSummary.top.map((f) => ({
        function: f.fn.slice(0, 60),
        source: f.where.slice(0, 50),
        ms: f.ms,
        "% of busy": f.percent,
      })),
    ),
  );
}
console.log(
  table([
    ...ratioRows("bench:pull", figures),
    {
      measure: `das pull, whole version (${figures.dataset_mb} MB, --concurrency ${CONCURRENCY}), ${RUNS} runs`,
      value: `${figures.pull_mb_per_s} MB/s (p50 ${figures.pull_s} s)`,
      target: "",
    },
    {
      measure: `aria2c, the same signed URLs, ${CONCURRENCY} at once`,
      value: `${figures.aria2c_mb_per_s} MB/s (p50 ${figures.aria2c_s} s)`,
      target: "",
    },
    { measure: "das --help, p50", value: `${figures.das_help_ms} ms`, target: "< 150 ms (quiet machine)" },
    { measure: "das-admin --help, p50", value: `${figures.das_admin_help_ms} ms`, target: "< 150 ms (quiet machine)" },
    { measure: "node -e 0, p50", value: `${figures.node_start_ms} ms`, target: "" },
  ]),
);
console.log(JSON.stringify(figures));
rmSync(scratch, { recursive: true, force: true });
await db.$client.end();
await runtime.stop();
process.exit(0);

function round(n: number) {
  return Math.round(n * 100) / 100;
}

/** The bytes of the scope's files under `dir` (each must be there, whole): what a turn fetched. */
function bytesOf(dir: string, files: { path: string; size_bytes: number }[]): number {
  for (const f of files) {
    const size = statSync(path.join(dir, f.path), { throwIfNoEntry: false })?.size;
    if (size !== f.size_bytes)
      throw new Error(`${f.path} under ${dir}: ${size ?? "missing"}, not ${f.size_bytes} bytes`);
  }
  return files.reduce((sum, f) => sum + f.size_bytes, 0);
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${path.basename(command)} ${args[0]} exited with ${code}: ${stderr.slice(-2000)}`)),
    );
  });
}

async function timed(command: string, args: string[]): Promise<number> {
  const started = process.hrtime.bigint();
  await run(command, args);
  return Number(process.hrtime.bigint() - started) / 1e6;
}
