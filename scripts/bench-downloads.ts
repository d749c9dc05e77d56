// npm run bench:downloads [-- --requests 40 --seconds 10 --profile]
// In one run: a 10,000-file download over HTTP end to end against the time of 10,000 raw
// HMAC-SHA256 SigV4 signatures (the machine's limit for its URLs), the signing rate on one core
// next to the raw HMAC loop, and disclosure appends/s under 16 concurrent clients next to the
// machine's PostgreSQL committing as many bare single-row INSERTs from 16 connections (no chain)
// and the same INSERTs taking turns under one advisory lock (what a chain's lock leaves of that),
// in alternating slices; then a full walk of the chain, which must be intact (the run
// fails otherwise). Each figure is reported as a ratio to its limit as well as absolutely: the
// machine's speed changes from day to day, the ratio much less.
// Prints a table, then one JSON line (the last line of stdout). With --profile the server runs the
// downloads under `node --cpu-prof` (slower: take the figures from a run without it), summarised.
import { createHash, createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startEmbeddedDefault } from "@/lib/dev/embedded-default";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "40" },
    seconds: { type: "string", default: "10" },
    profile: { type: "boolean", default: false },
  },
});
const requests = Number(values.requests);
const seconds = Number(values.seconds);
const FILES = 10_000;
const STREAMS = ["cam_left", "cam_right", "joints", "force"];

process.env.DAS_DATA_DIR ??= ".data/bench";
const runtime = await startEmbeddedDefault();
// Before the lib modules read their configuration.
Object.assign(process.env, runtime.env, { RATE_LIMIT_PER_MINUTE: "100000000" });
const { createDb } = await import("@/lib/db/client");
const { importVersion } = await import("@/lib/catalog/import/import-version");
const { createOrganization, organizationBySlug } = await import("@/lib/admin/organizations");
const { grantLicence } = await import("@/lib/admin/licences");
const { issueKey } = await import("@/lib/admin/keys");
const { authenticateApiKey } = await import("@/lib/auth/api-keys");
const { createDownload } = await import("@/lib/downloads/create-download");
const { readCache } = await import("@/lib/cache/read-cache");
const { presigner } = await import("@/lib/storage/config");
const { httpPost, percentile, progress, round, startProductionServer, table } = await import("./bench/common");
const { ratioRows } = await import("./bench/ratios");
const { summariseProfile } = await import("./bench/cpu-profile");

const db = createDb(runtime.env.DATABASE_URL!, { max: 20 });
const operator = {
  db,
  requestId: "bench",
  principal: { kind: "operator" as const, name: userInfo().username, organizationId: null },
};
const datasetId = "bench-downloads";
const version = "1.0.0";

// A version of 2,500 episodes x 4 streams = exactly 10,000 files (the most one download may hold).
const [existing] =
  await db.$client`select 1 from dataset_versions where dataset_id = ${datasetId} and version = ${version}`;
if (!existing) {
  const dir = mkdtempSync(path.join(tmpdir(), "das-bench-dl-"));
  const episodes: string[] = [];
  const files: string[] = [];
  for (let i = 1; i <= FILES / STREAMS.length; i++) {
    const id = `bdl-${String(i).padStart(6, "0")}`;
    episodes.push(
      JSON.stringify({
        episode_id: id,
        task: "pick",
        environment: i % 2 ? "lab" : "kitchen",
        duration_s: 30,
        outcome: i % 5 ? "success" : "failure",
        has_recovery: false,
        contributor: `c${i % 7}`,
        streams: STREAMS,
      }),
    );
    for (const stream of STREAMS) {
      const sha = createHash("sha256").update(`${id}/${stream}`).digest("hex");
      files.push(
        JSON.stringify({
          path: `episodes/${id}/${stream}.mp4`,
          episode_id: id,
          stream,
          size_bytes: 1_000_000 + i,
          sha256: sha,
        }),
      );
    }
  }
  writeFileSync(
    path.join(dir, "dataset.json"),
    JSON.stringify({ id: datasetId, title: "Downloads benchmark", description: "" }),
  );
  writeFileSync(
    path.join(dir, "version.json"),
    JSON.stringify({ version, released_at: "2026-01-01T00:00:00Z", changelog: [] }),
  );
  writeFileSync(path.join(dir, "episodes.jsonl"), episodes.join("\n"));
  writeFileSync(path.join(dir, "files.jsonl"), files.join("\n"));
  await importVersion(db.$client, dir);
  rmSync(dir, { recursive: true, force: true });
}
const org = await organizationBySlug(operator, "bench").catch(() => createOrganization(operator, { slug: "bench" }));
await grantLicence(operator, { organizationId: org.id, datasetId, version });
const key = (await issueKey(operator, { organizationId: org.id, name: `bench ${new Date().toISOString()}` })).secret;

// The machine's yardstick for a download's URLs: a bare node:crypto loop that computes one SigV4
// signature per URL with the signing key cached (canonical request, its SHA-256, string to sign,
// HMAC), nothing else. It is kept exactly as first written (createHash for the canonical request's
// digest), so that its rate compares from one record to the next: the presigner's one-shot `hash`
// now does that digest in three quarters of its time, so signing may beat it.
const keys = Array.from(
  { length: 100_000 },
  (_, i) => `${datasetId}/${version}/episodes/bdl-${String(i).padStart(6, "0")}/cam_left.mp4`,
);
const signingKey = createHmac("sha256", "k").update("cached").digest();
const host = new URL(runtime.env.S3_ENDPOINT ?? "http://127.0.0.1").host;
function rawHmacs(count: number) {
  for (let i = 0; i < count; i++) {
    const canonical = `GET\n/das/${keys[i]}\nX-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=S3RVER%2F20261121%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261121T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host\nhost:${host}\n\nhost\nUNSIGNED-PAYLOAD`;
    const toSign = `AWS4-HMAC-SHA256\n20261121T000000Z\n20261121/us-east-1/s3/aws4_request\n${createHash("sha256").update(canonical).digest("hex")}`;
    createHmac("sha256", signingKey).update(toSign).digest("hex");
  }
}
const msOf = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;

// 1. A 10,000-file download over HTTP, end to end (scope, disclosure, commit, 10,000 URLs, JSON),
// each followed by 10,000 raw HMACs: the two meet the same load, and their p50s make the ratio.
const profileDir = path.resolve(
  process.env.DAS_DATA_DIR,
  "profiles",
  `downloads-${new Date().toISOString().replace(/[:.]/g, "-")}`,
);
if (values.profile) mkdirSync(profileDir, { recursive: true });
const server = await startProductionServer(
  process.env as Record<string, string>,
  values.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
);
const latencies: number[] = [];
const hmacLatencies: number[] = [];
try {
  const body = JSON.stringify({ dataset_id: datasetId, version });
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" };
  for (let i = 0; i < requests + 3; i++) {
    const started = process.hrtime.bigint();
    const res = await httpPost(`${server.url}/api/v1/downloads`, headers, body);
    const ms = msOf(started);
    if (res.status !== 201) throw new Error(`download answered ${res.status}: ${res.body.slice(0, 300)}`);
    if (i === 0 && JSON.parse(res.body).file_count !== FILES)
      throw new Error("the download does not hold 10,000 files");
    const hmacStarted = process.hrtime.bigint();
    rawHmacs(FILES);
    // The first requests warm the server (and the loop) up.
    if (i >= 3) {
      latencies.push(ms);
      hmacLatencies.push(msOf(hmacStarted));
    }
  }
} finally {
  await server.stop();
}
latencies.sort((a, b) => a - b);
hmacLatencies.sort((a, b) => a - b);
const downloadP50 = percentile(latencies, 50);
const hmacP50 = percentile(hmacLatencies, 50);
progress(
  `10,000-file download: p50 ${downloadP50.toFixed(0)} ms; 10,000 raw HMACs ${hmacP50.toFixed(1)} ms (${(downloadP50 / hmacP50).toFixed(2)}x)`,
);
if (values.profile) {
  for (const file of readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile"))) {
    const summary = summariseProfile(path.join(profileDir, file), process.cwd());
    console.log(
      `profile ${path.join(profileDir, file)}: ${summary.busyMs} ms busy over ${latencies.length + 3} downloads`,
    );
    console.log(table(summary.parts.map((p) => ({ part: p.part, ms: p.ms, "% of busy": p.percent }))));
    console.log(
      table(
        summary.top.map((f) => ({ function: f.fn.slice(0, 70), source: f.where.slice(0, 60), "% of busy": f.percent })),
      ),
    );
  }
}

// 2. Signing on one core: the service's presigner over 100,000 keys and the raw loop over them,
// taking turns (after a warm-up of each), so that both meet the same load; the fastest of each.
const signAll = () => presigner().presignKeys(keys, { signingDate: new Date(), expiresIn: 900 });
const best = { sign: 0, hmac: 0 };
for (let turn = 0; turn < 4; turn++) {
  let started = process.hrtime.bigint();
  await signAll();
  if (turn > 0) best.sign = Math.max(best.sign, keys.length / (msOf(started) / 1000));
  started = process.hrtime.bigint();
  rawHmacs(keys.length);
  if (turn > 0) best.hmac = Math.max(best.hmac, keys.length / (msOf(started) / 1000));
}
const signPerSecond = best.sign;
const hmacPerSecond = best.hmac;
progress(`signing: ${Math.round(signPerSecond)} URLs/s; raw HMAC limit ${Math.round(hmacPerSecond)}/s`);

// 3. Disclosure appends under 16 concurrent clients: whole download requests (one episode each),
// through the verb the API calls, with the instance's cache as the API's requests have it, each
// resolving its scope and appending its entry (the process's group commit batches them). Taking turns with them,
// slice by slice, the limit: as many single-row INSERTs, each its own transaction committed with
// synchronous_commit on (one WAL flush each, as an append's), from 16 connections of their own,
// into a table as wide as the log's entries but with no chain, no lock and nothing else to do.
const principal = await authenticateApiKey(db, key);
// The instance's read cache, as the API's route hands every request (keys, licences, the catalog).
const cache = readCache();
// As the owner: the service's role may create no table (lib/db/roles.ts); which role commits
// makes no difference to a commit's cost.
const raw = createDb(runtime.env.DATABASE_OWNER_URL ?? runtime.env.DATABASE_URL!, { max: 16 });
await raw.$client`create table if not exists bench_raw_commits (id bigserial primary key, at timestamptz not null default now(), body text not null)`;
await raw.$client`truncate bench_raw_commits`;
const [{ synchronous_commit: synchronousCommit }] = (await raw.$client`show synchronous_commit`) as unknown as [
  { synchronous_commit: string },
];
if (synchronousCommit !== "on")
  throw new Error(`synchronous_commit is ${synchronousCommit}: the raw loop would not flush`);
// About an entry's width in the log (docs/benchmarks.md: about a kilobyte per entry with its indexes).
const rawBody = "x".repeat(900);
const SLICE_S = 2;
let appended = 0;
let appendSeconds = 0;
let rawCommits = 0;
let rawSeconds = 0;
let lockedCommits = 0;
let lockedSeconds = 0;
// Any key but the chain's: the bench's own appends must not wait for the locked loop.
const BENCH_LOCK = 7_203_199;
let counter = 0;
for (let slice = 0; slice < Math.max(1, Math.round(seconds / SLICE_S)); slice++) {
  const until = Date.now() + SLICE_S * 1000;
  let done = 0;
  let started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (Date.now() < until) {
        const episode = `bdl-${String((counter++ % (FILES / STREAMS.length)) + 1).padStart(6, "0")}`;
        await createDownload(
          { db, requestId: `bench_${counter}`, principal, cache },
          { body: { dataset_id: datasetId, version, episode_ids: [episode], streams: ["joints"] } },
        );
        done++;
      }
    }),
  );
  appended += done;
  appendSeconds += Number(process.hrtime.bigint() - started) / 1e9;
  let left = done;
  started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0) await raw.$client`insert into bench_raw_commits (body) values (${rawBody})`;
    }),
  );
  rawCommits += done;
  rawSeconds += Number(process.hrtime.bigint() - started) / 1e9;
  // The same commits taking turns under one advisory lock held to the commit, as a chain's entries
  // must (each links to the one before): what one lock leaves of the raw rate, before any batching.
  left = done;
  started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0)
        await raw.$client.begin(async (tx) => {
          await tx`select pg_advisory_xact_lock(${BENCH_LOCK})`;
          await tx`insert into bench_raw_commits (body) values (${rawBody})`;
        });
    }),
  );
  lockedCommits += done;
  lockedSeconds += Number(process.hrtime.bigint() - started) / 1e9;
}
await raw.$client`drop table bench_raw_commits`;
await raw.$client.end();
const disclosuresPerSecond = appended / appendSeconds;
const rawCommitsPerSecond = rawCommits / rawSeconds;
const lockedCommitsPerSecond = lockedCommits / lockedSeconds;
progress(
  `appends: ${Math.round(disclosuresPerSecond)}/s; raw commits ${Math.round(rawCommitsPerSecond)}/s, under one lock ${Math.round(lockedCommitsPerSecond)}/s`,
);
const { verifyChain } = await import("@/lib/disclosures/verify");
const report = await verifyChain({
  db,
  requestId: "bench",
  principal: { kind: "operator", name: "bench", organizationId: null },
});

const figures = {
  download_10k_p50_ms: Math.round(downloadP50),
  download_10k_p99_ms: Math.round(percentile(latencies, 99)),
  download_requests: latencies.length,
  hmac_10k_p50_ms: round(hmacP50),
  download_10k_to_hmac_ratio: round(downloadP50 / hmacP50),
  sign_per_s: Math.round(signPerSecond),
  hmac_limit_per_s: Math.round(hmacPerSecond),
  sign_to_hmac_ratio: round(signPerSecond / hmacPerSecond),
  disclosures_per_s: Math.round(disclosuresPerSecond),
  raw_commits_per_s: Math.round(rawCommitsPerSecond),
  appends_to_raw_commit_ratio: round(disclosuresPerSecond / rawCommitsPerSecond),
  locked_commits_per_s: Math.round(lockedCommitsPerSecond),
  appends_to_locked_commit_ratio: round(disclosuresPerSecond / lockedCommitsPerSecond),
  chain_intact: report.intact,
};
console.log(
  table([
    ...ratioRows("bench:downloads", figures),
    {
      measure: "10,000-file download over HTTP, p50 / p99",
      value: `${figures.download_10k_p50_ms} / ${figures.download_10k_p99_ms} ms`,
      target: "",
    },
    { measure: "10,000 raw HMAC-SHA256 SigV4 signatures, p50", value: `${hmacP50.toFixed(1)} ms`, target: "" },
    { measure: "signing, one core", value: `${figures.sign_per_s} URLs/s`, target: "" },
    { measure: "raw HMAC-SHA256 SigV4 limit, one core", value: `${figures.hmac_limit_per_s} /s`, target: "" },
    { measure: "disclosure appends, 16 clients", value: `${figures.disclosures_per_s} /s`, target: "" },
    { measure: "single-row INSERT + COMMIT, 16 connections", value: `${figures.raw_commits_per_s} /s`, target: "" },
    {
      measure: "the same under one advisory lock to the commit",
      value: `${figures.locked_commits_per_s} /s`,
      target: "",
    },
    {
      measure: "chain after the run",
      value: report.intact ? `intact (${report.count} entries)` : `BROKEN at ${report.firstBadSeq}`,
      target: "intact",
    },
  ]),
);
console.log(JSON.stringify(figures));
await db.$client.end();
await runtime.stop();
// Every append of the run must have left the chain intact: a fast append that breaks it is a failure.
process.exit(report.intact ? 0 : 1);
