// npm run bench:pull [-- --episodes 150 --file-mb 1 --concurrency 8 --runs 3 --profile]
// In one run (own embedded PostgreSQL and local store under .data/bench-pull): a LeRobot v2.1
// dataset of real (random) bytes, by default 150 episodes of a 1 MB data file and a 1 MB video
// (about 302 MB with its meta/), imported with --upload into the local store; then, in turns,
// `das pull` of the whole version as a user runs it (the installed bin, a process of its own,
// through the production build's API) and aria2c (Debian's package) fetching the same files from
// signed URLs of one download of the same scope, with the same parallelism, into an empty
// directory each time. The ratio of their MB/s is the pull's figure: the store, the disk and the
// machine are the same for both. In the same turns, aria2c again with each file's SHA-256 to check
// (as das pull checks every file): what a client that verifies can reach. The store runs in this
// process, so each turn's first request to it and its last response are seen here: the time before
// and after them is each client's own, outside the transfer. Then the command-line tools' start:
// `das --help` and `das-admin --help` next to `node -e 0`. With --profile one more `das pull` runs
// under `node --cpu-prof`, summarised (where its CPU time goes). Prints a table, then one JSON line.
import { spawn } from "node:child_process";
import diagnostics from "node:diagnostics_channel";
import type { IncomingMessage, Server } from "node:http";
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
const { httpPost, percentile, progress, round, startProductionServer, table } = await import("./bench/common");
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

/**
 * A turn's clock, split at the store: `lead` from the start to the first request the store received,
 * `transfer` from then until it finished its last response, `tail` from then to the client's exit.
 */
type Turn = { seconds: number; bytes: number; lead: number; transfer: number; tail: number; requests: number };
/** The scope's files (the whole version, meta/ included), as its download lists them. */
let scope: { path: string; size_bytes: number; sha256: string }[] = [];
const pulls: Turn[] = [];
const arias: Turn[] = [];
const verifiedArias: Turn[] = [];
/** The plan and download requests as the benchmark makes them, each time an aria2c turn is readied. */
const planSeconds: number[] = [];
const downloadSeconds: number[] = [];
let lastDownload: ((typeof scope)[number] & { url: string })[] = [];
let profileSummary: ReturnType<typeof summariseProfile> | null = null;

// The store (s3rver) serves from this process: Node's HTTP server reports on these channels when a
// request arrives and when its response is handed to the socket, for whichever client is timed.
const storePort = Number(new URL(runtime.env.S3_ENDPOINT!).port);
let storeSeen: { first: bigint | null; last: bigint | null; requests: number } = {
  first: null,
  last: null,
  requests: 0,
};
type ServerMessage = { request: IncomingMessage; server: Server };
const ofStore = ({ request, server }: ServerMessage) =>
  request.method === "GET" && (server.address() as { port?: number } | null)?.port === storePort;
diagnostics.subscribe("http.server.request.start", (message) => {
  if (!ofStore(message as ServerMessage)) return;
  storeSeen.first ??= process.hrtime.bigint();
  storeSeen.requests++;
});
diagnostics.subscribe("http.server.response.finish", (message) => {
  if (ofStore(message as ServerMessage)) storeSeen.last = process.hrtime.bigint();
});

/** Runs a client under the clock, and splits its time at the store's first request and last response. */
async function timedAtStore(command: string, args: string[], dir: string, files: typeof scope): Promise<Turn> {
  storeSeen = { first: null, last: null, requests: 0 };
  const started = process.hrtime.bigint();
  await run(command, args);
  const ended = process.hrtime.bigint();
  const { first, last, requests } = storeSeen;
  if (first === null || last === null) throw new Error(`${path.basename(command)} made no request to the store`);
  const s = (from: bigint, to: bigint) => Number(to - from) / 1e9;
  return {
    seconds: s(started, ended),
    bytes: bytesOf(dir, files),
    lead: s(started, first),
    transfer: s(first, last),
    tail: s(last, ended),
    requests,
  };
}

try {
  // The bundle made before anything is timed (a checkout being worked on may need it made again).
  await run(process.execPath, [dasBin, "--help"]);
  for (let turn = 0; turn < RUNS; turn++) {
    // Each goes first in turn, so that none always meets a warmer page cache. aria2c's download
    // first in the first turn: it lists the scope's files, which the others are checked by.
    const takes = [() => ariaTurn(false), () => ariaTurn(true), pullTurn];
    for (let i = 0; i < takes.length; i++) await takes[(turn + i) % takes.length]!();
  }
  await checkAriaVerifies();
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
  const turn = await timedAtStore(process.execPath, [dasBin, ...pullArgs(dir)], dir, scope);
  pulls.push(turn);
  progress(`das pull: ${describeTurn(turn)}`);
}

function describeTurn(t: Turn): string {
  return `${t.seconds.toFixed(2)} s (${t.lead.toFixed(2)} s to the store's first request, ${t.transfer.toFixed(2)} s to its last response of ${t.requests}, ${t.tail.toFixed(2)} s to exit)`;
}

/**
 * aria2c fetching the files of one download of the same scope (the whole version with its meta/,
 * as das pull asks for it) from their signed URLs, with as many at once, into an empty directory.
 * The download is requested before the clock starts: aria2c is given its URLs, das pull asks for
 * its own. `verified`: each file with its SHA-256 (`checksum=sha-256=`), which aria2c checks once
 * the file is whole and fails the run (exit 32) if it differs.
 */
async function ariaTurn(verified: boolean) {
  // The two requests das pull makes before its first transfer, made here off the clock and timed
  // apart: part of what das pull's lead is made of.
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" };
  const planAsked = process.hrtime.bigint();
  const plan = await httpPost(`${server.url}/api/v1/datasets/${datasetId}/versions/${version}/plan`, headers, "{}");
  if (plan.status !== 200) throw new Error(`plan answered ${plan.status}: ${plan.body.slice(0, 300)}`);
  const downloadAsked = process.hrtime.bigint();
  const res = await httpPost(
    `${server.url}/api/v1/downloads`,
    headers,
    JSON.stringify({ dataset_id: datasetId, version, include_version_files: true }),
  );
  if (res.status !== 201) throw new Error(`download answered ${res.status}: ${res.body.slice(0, 300)}`);
  planSeconds.push(Number(downloadAsked - planAsked) / 1e9);
  downloadSeconds.push(Number(process.hrtime.bigint() - downloadAsked) / 1e9);
  const files = (JSON.parse(res.body) as { files: ((typeof scope)[number] & { url: string })[] }).files;
  scope = files;
  lastDownload = files;
  const dir = path.join(scratch, "aria2c");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const list = path.join(scratch, "aria2c.txt");
  writeFileSync(
    list,
    files.map((f) => `${f.url}\n  out=${f.path}\n${verified ? `  checksum=sha-256=${f.sha256}\n` : ""}`).join(""),
  );
  const turn = await timedAtStore("/usr/bin/aria2c", ariaArgs(list, dir), dir, files);
  (verified ? verifiedArias : arias).push(turn);
  progress(`aria2c${verified ? ", verifying" : ""}: ${describeTurn(turn)}`);
}

function ariaArgs(list: string, dir: string): string[] {
  return [
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
  ];
}

/**
 * The verifying turns are worth something only if aria2c does check: given one file of the last
 * download with a digest that is not its own, it must fail with exit 32 ("checksum error").
 */
async function checkAriaVerifies() {
  const file = lastDownload[0]!;
  const dir = path.join(scratch, "aria2c-wrong");
  const list = path.join(scratch, "aria2c-wrong.txt");
  const wrong = file.sha256.replace(/^./, (c) => (c === "0" ? "1" : "0"));
  writeFileSync(list, `${file.url}\n  out=${file.path}\n  checksum=sha-256=${wrong}\n`);
  const code = await exitCode("/usr/bin/aria2c", ariaArgs(list, dir));
  if (code !== 32) throw new Error(`aria2c given a wrong SHA-256 exited with ${code}, not 32: it did not verify`);
  rmSync(dir, { recursive: true, force: true });
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

/** MB/s over all turns, by their whole clock or by their transfer at the store alone. */
const rate = (turns: Turn[], by: "seconds" | "transfer" = "seconds") =>
  mb(turns.reduce((s, t) => s + t.bytes, 0)) / turns.reduce((s, t) => s + t[by], 0);
const p50 = (turns: Turn[], of: (t: Turn) => number) =>
  round(
    percentile(
      turns.map(of).sort((a, b) => a - b),
      50,
    ),
  );
const pullRate = rate(pulls);
const ariaRate = rate(arias);
const verifiedAriaRate = rate(verifiedArias);
const figures = {
  pull_to_aria2c_ratio: round(pullRate / ariaRate),
  pull_to_verified_aria2c_ratio: round(pullRate / verifiedAriaRate),
  // The same divisions over the transfer alone, without either client's own time before and after it.
  pull_transfer_to_aria2c_ratio: round(rate(pulls, "transfer") / rate(arias, "transfer")),
  pull_transfer_to_verified_aria2c_ratio: round(rate(pulls, "transfer") / rate(verifiedArias, "transfer")),
  cli_start_to_node_ratio: round(Math.max(startP50("das"), startP50("das-admin")) / startP50("node")),
  pull_mb_per_s: round(pullRate),
  aria2c_mb_per_s: round(ariaRate),
  aria2c_verified_mb_per_s: round(verifiedAriaRate),
  pull_s: p50(pulls, (t) => t.seconds),
  aria2c_s: p50(arias, (t) => t.seconds),
  aria2c_verified_s: p50(verifiedArias, (t) => t.seconds),
  // Each client's own time outside the transfer: before the store's first request, after its last response.
  pull_lead_s: p50(pulls, (t) => t.lead),
  pull_tail_s: p50(pulls, (t) => t.tail),
  aria2c_lead_s: p50(arias, (t) => t.lead),
  aria2c_tail_s: p50(arias, (t) => t.tail),
  aria2c_verified_lead_s: p50(verifiedArias, (t) => t.lead),
  aria2c_verified_tail_s: p50(verifiedArias, (t) => t.tail),
  // What das pull's lead is made of: Node's start with das loaded, the plan, the download.
  das_start_s: round(startP50("das") / 1000),
  plan_request_s: round(
    percentile(
      [...planSeconds].sort((a, b) => a - b),
      50,
    ),
  ),
  download_request_s: round(
    percentile(
      [...downloadSeconds].sort((a, b) => a - b),
      50,
    ),
  ),
  pull_transfer_mb_per_s: round(rate(pulls, "transfer")),
  aria2c_transfer_mb_per_s: round(rate(arias, "transfer")),
  aria2c_verified_transfer_mb_per_s: round(rate(verifiedArias, "transfer")),
  store_requests_per_pull: pulls[0]?.requests ?? 0,
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
    {
      measure: "aria2c, the same, checking each file's SHA-256",
      value: `${figures.aria2c_verified_mb_per_s} MB/s (p50 ${figures.aria2c_verified_s} s)`,
      target: "",
    },
    {
      measure: "das pull: before the store's first request / after its last response, p50",
      value: `${figures.pull_lead_s} s / ${figures.pull_tail_s} s`,
      target: "",
    },
    {
      measure: "what das pull's lead holds: das --help / the plan / the download request, p50",
      value: `${figures.das_start_s} s / ${figures.plan_request_s} s / ${figures.download_request_s} s`,
      target: "",
    },
    {
      measure: "aria2c, verifying: the same",
      value: `${figures.aria2c_verified_lead_s} s / ${figures.aria2c_verified_tail_s} s`,
      target: "",
    },
    {
      measure: "between the two (the transfer): das pull / aria2c verifying / aria2c",
      value: `${figures.pull_transfer_mb_per_s} / ${figures.aria2c_verified_transfer_mb_per_s} / ${figures.aria2c_transfer_mb_per_s} MB/s`,
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

/** The command's exit code, whatever it is. */
function exitCode(command: string, args: string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", resolve);
  });
}

async function timed(command: string, args: string[]): Promise<number> {
  const started = process.hrtime.bigint();
  await run(command, args);
  return Number(process.hrtime.bigint() - started) / 1e6;
}
