// npm run bench:review -- --entries 10000000 [--reuse] [--database-url URL] [--samples 40] [--export-rows 1000000] [--workers N]
// A disclosure log of N entries (scripts/bench/disclosure-log.ts: a valid chain, a realistic mix),
// then, over HTTP against the production build with a signed-in reviewer: p50/p99 of every
// reviewer query with parameters drawn from the data (popular and rare values), the contributor
// report, the export rate of a large search and the server's peak memory during it, next to
// PostgreSQL's own COPY (select ...) TO STDOUT of the same rows; a full walk next to raw SHA-256 of
// the same bytes on as many threads; then the chain's incremental verification after 1,000 new
// entries. Prints tables, then one JSON line (the last line of stdout).
import http from "node:http";
import { readFileSync, statfsSync } from "node:fs";
import { cpus, totalmem, userInfo } from "node:os";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { dataDirectory, startEmbeddedDefault } from "@/lib/dev/embedded-default";
import { migrateDatabase } from "@/lib/db/migrate";
import { createDb, sqlOf, type Sql } from "@/lib/db/client";
import { withTx } from "@/lib/db/tx";
import type { Ctx } from "@/lib/context";
import { hashPassword } from "@/lib/auth/passwords";
import { appendDisclosure } from "@/lib/disclosures/append";
import { withdrawnMeanwhile } from "@/lib/catalog/withdrawn";
import { episodesDigest, sha256Hex, type ChainedEntry } from "@/lib/disclosures/chain";
import { verifyChain } from "@/lib/disclosures/verify";
import { parallelRangeChecker } from "@/lib/disclosures/verify-parallel";
import { signInOverHttp } from "@/lib/testing/portal-session";
import { BENCH_SHAPE, generateDisclosureLog, type GeneratedLog } from "./bench/disclosure-log";
import { httpGet, percentile, progress, round, startProductionServer, table } from "./bench/common";
import { copyRows, copyWalkRows, rawSha256Seconds } from "./bench/review-limits";
import { ratioRows } from "./bench/ratios";

const { values } = parseArgs({
  options: {
    entries: { type: "string", default: "10000000" },
    reuse: { type: "boolean", default: false },
    "database-url": { type: "string" },
    samples: { type: "string", default: "40" },
    "export-rows": { type: "string", default: "1000000" },
    // Threads drawing entries; the main thread only chains them (one SHA-256 each) and feeds COPY, which leaves it mostly idle.
    workers: { type: "string", default: String((await import("node:os")).cpus().length) },
  },
});
const entries = Number(values.entries);
const samples = Number(values.samples);
const exportRowsLimit = Number(values["export-rows"]);
if (!Number.isInteger(entries) || entries < 1000) throw new Error("--entries must be a whole number of at least 1000");
const PASSWORD = "bench-review-password";
// Measured on the generated log at 10M entries (6.9 kB per entry, docs/benchmarks.md), plus the
// episode summary of migration 0014 (about 1.3 kB per entry, less the two indexes it replaced:
// docs/scaling.md), plus the temporary files of the largest index build (the episodes' primary
// key sorts about 7 disclosed episodes of some 64 bytes per entry, beyond maintenance_work_mem):
// what a run needs free.
const BYTES_PER_ENTRY_ESTIMATE = 8_300;

// Its own data directory, so the benchmark's millions of rows never land in the demo database.
process.env.DAS_DATA_DIR ??= ".data/bench-review";
if (values["database-url"]) process.env.DATABASE_URL = values["database-url"];
// A quarter of the memory for PostgreSQL's own cache, as its tuning guide suggests for a server of
// its own (the embedded default keeps 256 MB): the log's indexes are read from it, not through the
// kernel's page cache one 8 KiB read at a time.
const runtime = await startEmbeddedDefault({ sharedBuffers: `${Math.floor(totalmem() / 4 / 2 ** 20)}MB` });
// The benchmark makes databases and, for its bulk load, drops and rebuilds keys: the owner's work.
const ownerUrl = runtime.env.DATABASE_OWNER_URL ?? runtime.env.DATABASE_URL!;
const databaseUrl = await benchDatabase();
const db = createDb(databaseUrl, { max: 6 });
const sql = sqlOf(db);
const ctx: Ctx = {
  db,
  requestId: "bench-review",
  principal: { kind: "operator", name: userInfo().username, organizationId: null },
};

// --- the log -------------------------------------------------------------------------------
let generated: GeneratedLog | null = null;
const [{ count: existing }] = (await sql<
  { count: number }[]
>`select coalesce(max(seq), 0)::float8 as count from disclosures`) as unknown as [{ count: number }];
if (existing > 0 && values.reuse) {
  progress(`reusing the log of ${existing} entries`);
} else {
  const free = diskFree();
  const needed = entries * BYTES_PER_ENTRY_ESTIMATE;
  progress(`about ${gib(needed)} GiB needed, ${gib(free)} GiB free`);
  if (needed > free * 0.9) {
    // The server was started for this run (a running one would have been reused and stays up).
    await runtime.stop();
    throw new Error(`not enough disk for ${entries} entries: about ${gib(needed)} GiB needed, ${gib(free)} GiB free`);
  }
  generated = await generateDisclosureLog(sql, { ...BENCH_SHAPE, entries }, progress, Number(values.workers));
  await markComplete();
}
const [sizes] = await sql<
  {
    entries: number;
    episode_rows: number;
    disclosures_bytes: number;
    episodes_bytes: number;
    whole: number;
    database_bytes: number;
  }[]
>`
  select (select max(seq) from disclosures)::float8 as entries,
         (select sum(greatest(c.reltuples, 0)) from pg_partition_tree('disclosure_episodes') t
          join pg_class c on c.oid = t.relid where t.isleaf)::float8 as episode_rows,
         (select sum(pg_total_relation_size(relid)) from pg_partition_tree('disclosures'))::float8 as disclosures_bytes,
         (select sum(pg_total_relation_size(relid)) from pg_partition_tree('disclosure_episodes'))::float8 as episodes_bytes,
         (select count(*) from disclosures where requested_scope ? 'include_version_files')::float8 as whole,
         pg_database_size(current_database())::float8 as database_bytes`;
const logEntries = sizes!.entries;

// --- parameters drawn from the data: the most frequent values and rare ones -----------------
const samplePercent = Math.min(100, Math.max(0.5, 2_000_000 / logEntries));
const frequent = async (column: string, join = "") =>
  [
    ...(await sql.unsafe<{ value: string; n: number }[]>(`
      select ${column} as value, count(*)::int as n from disclosures d tablesample system (${samplePercent}) ${join}
      where ${column} is not null group by 1 order by 2 desc, 1`)),
  ].map((r) => r.value);
const popularAndRare = (values: string[]) => [...values.slice(0, 3), ...values.slice(-3)];
const orgs = popularAndRare(await frequent("o.slug", "join organizations o on o.id = d.organization_id"));
const keys = popularAndRare(await frequent("k.prefix", "join api_keys k on k.id = d.api_key_id"));
const users = popularAndRare(await frequent("u.email", "join users u on u.id = d.user_id and u.role = 'licensee'"));
const datasets = popularAndRare(await frequent("d.dataset_id"));
const versions = popularAndRare(await frequent("d.dataset_id || '@' || d.version")).map(
  (v) => v.split("@") as [string, string],
);
const episodeRows = [
  ...(await sql<{ value: string; n: number }[]>`
    select episode_id as value, count(*)::int as n from disclosure_episodes tablesample system (${samplePercent}) group by 1 order by 2 desc, 1`),
].map((r) => r.value);
const episodes = popularAndRare(episodeRows);
const contributorRows = [
  ...(await sql<{ value: string }[]>`
    select contributor as value from episodes tablesample system (5) group by 1 order by count(*) desc, 1`),
].map((r) => r.value);
const contributors = popularAndRare(contributorRows);
const entryIds = [
  ...(await sql<{ id: string }[]>`select id from disclosures tablesample system (${samplePercent}) limit 200`),
].map((r) => r.id);
const wholeIds = [
  ...(await sql<{ id: string }[]>`select id from disclosures where requested_scope ? 'include_version_files' limit 20`),
].map((r) => r.id);
const [span] = await sql<{ first: Date; last: Date }[]>`
  select (select occurred_at from disclosures where seq = 1) as first, (select occurred_at from disclosures order by seq desc limit 1) as last`;
const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
const randomDay = () =>
  span!.first.getTime() + Math.random() * (span!.last.getTime() - span!.first.getTime() - 7 * 86_400_000);
const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)]!;
progress(
  `parameters: ${orgs.length} orgs, ${keys.length} keys, ${users.length} users, ${datasets.length} datasets, ${episodes.length} episodes, ${contributors.length} contributors`,
);

// A reviewer who can sign in (the generated reviewers have no password).
await sql`update users set password_hash = ${await hashPassword(PASSWORD)} where email = 'reviewer-0@bench.example'`;

const week = () => {
  const from = randomDay();
  return { from: dayOf(from), to: dayOf(from + 6 * 86_400_000) };
};
const search = (params: Record<string, string>) => `/review/disclosures?${new URLSearchParams(params)}`;
type Query = { name: string; path: () => string; contributor?: true; optional?: true };
const queries: Query[] = [
  { name: "log, first page", path: () => "/review/disclosures" },
  { name: "older page (before=)", path: () => search({ before: String(1 + Math.floor(Math.random() * logEntries)) }) },
  { name: "org", path: () => search({ org: pick(orgs) }) },
  { name: "key", path: () => search({ key: pick(keys) }) },
  { name: "user", path: () => search({ user: pick(users) }) },
  { name: "dataset", path: () => search({ dataset: pick(datasets) }) },
  { name: "version", path: () => search({ version: pick(versions)[1] }) },
  { name: "from/to (a week)", path: () => search(week()) },
  { name: "episode", path: () => search({ episode: pick(episodes) }) },
  { name: "contributor", path: () => search({ contributor: pick(contributors) }) },
  { name: "channel", path: () => search({ channel: pick(["api", "portal", "preview"]) }) },
  { name: "channel+org", path: () => search({ channel: pick(["portal", "preview"]), org: pick(orgs) }) },
  { name: "org+dataset", path: () => search({ org: pick(orgs), dataset: pick(datasets) }) },
  {
    name: "dataset+version (any two, often none)",
    path: () =>
      search(
        Object.fromEntries([
          ["dataset", pick(versions)[0]],
          ["version", pick(versions)[1]],
        ]),
      ),
  },
  {
    name: "dataset+version (same)",
    path: () => {
      const [dataset, version] = pick(versions);
      return search({ dataset, version });
    },
  },
  { name: "org+from/to", path: () => search({ org: pick(orgs), ...week() }) },
  { name: "key+from/to", path: () => search({ key: pick(keys), ...week() }) },
  { name: "contributor+org", path: () => search({ contributor: pick(contributors), org: pick(orgs) }) },
  {
    name: "contributor+channel",
    path: () => search({ contributor: pick(contributors), channel: pick(["portal", "preview"]) }),
  },
  { name: "contributor+from/to", path: () => search({ contributor: pick(contributors), ...week() }) },
  { name: "episode+from/to", path: () => search({ episode: pick(episodes), ...week() }) },
  { name: "episode+org", path: () => search({ episode: pick(episodes), org: pick(orgs) }) },
  {
    name: "org, older page",
    path: () => search({ org: pick(orgs), before: String(1 + Math.floor(Math.random() * logEntries)) }),
  },
  { name: "entry page", path: () => `/review/disclosures/${pick(entryIds)}` },
  ...(wholeIds.length
    ? [{ name: "entry page, whole version", path: () => `/review/disclosures/${pick(wholeIds)}` }]
    : []),
  {
    name: "contributor report",
    path: () => `/review/contributors/${encodeURIComponent(pick(contributors))}`,
    contributor: true as const,
  },
  { name: "episode page", path: () => `/review/episodes/${encodeURIComponent(pick(episodes))}` },
  { name: "overview", path: () => "/review/overview", optional: true as const },
];

// --- the full walk ---------------------------------------------------------------------------
// First, as a deployment runs `das-admin disclosures verify --full` once after upgrading: the walk
// is measured on a quiet machine, and it leaves the checkpoint the server's banner starts from.
// Over one thread per core, as das-admin runs it.
progress("full verification");
const ranges = parallelRangeChecker(databaseUrl);
let started = Date.now();
const full = await verifyChain(ctx, { mode: "full", ranges }).finally(() => ranges.close());
const fullSeconds = (Date.now() - started) / 1000;
if (!full.intact) throw new Error(`the generated chain does not verify: ${JSON.stringify(full)}`);
progress(`full verification: ${full.count} entries in ${fullSeconds.toFixed(1)} s`);
const walkThreads = cpus().length;
const sha256Seconds = await rawSha256Seconds(sql, full.count, walkThreads);
progress(`raw SHA-256 of the same bytes on ${walkThreads} threads: ${sha256Seconds.toFixed(2)} s`);
// What bounds the walk instead: reading the entries out of PostgreSQL at all.
const readSeconds = await copyWalkRows(databaseUrl);
progress(`COPY of every entry's columns as the walk reads them: ${readSeconds.toFixed(2)} s`);

// --- HTTP ---------------------------------------------------------------------------------
const serverEnv = {
  ...runtime.env,
  DATABASE_URL: databaseUrl,
  RATE_LIMIT_PER_MINUTE: "100000000",
  AUTH_FAILURES_PER_MINUTE: "100000000",
};
const server = await startProductionServer(serverEnv);
type Result = { name: string; p50: number; p99: number; max: number; count: number; status: string };
const results: Result[] = [];
let exportRows = 0;
let exportSeconds = 0;
let exportPeakRssMib = 0;
let exportBaselineRssMib = 0;
/** Rows/s of a COPY of the export's rows, before and after it. */
const copyRates: number[] = [];
let bannerFirstResultSeconds = 0;
try {
  const cookie = await signInOverHttp(server.url, "reviewer-0@bench.example", PASSWORD);
  const headers = { cookie };
  // The log page's chain banner: until the server's first verification has a result, each page
  // waits for it up to 3 s (lib/disclosures/chain-status.ts). Measured once here, then the queries
  // are measured in the steady state that follows.
  const bannerStarted = Date.now();
  while ((await httpGet(`${server.url}/review/disclosures`, headers)).body.includes("Verifying the hash chain")) {
    if (Date.now() - bannerStarted > 30 * 60_000)
      throw new Error("the log page's chain banner had no result after 30 minutes");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  bannerFirstResultSeconds = (Date.now() - bannerStarted) / 1000;
  progress(`the chain banner's first result after ${bannerFirstResultSeconds.toFixed(1)} s`);
  for (const query of queries) {
    const probe = await httpGet(`${server.url}${query.path()}`, headers);
    if (probe.status !== 200) {
      if (!query.optional) progress(`${query.name}: HTTP ${probe.status}, not measured`);
      results.push({ name: query.name, p50: NaN, p99: NaN, max: NaN, count: 0, status: `HTTP ${probe.status}` });
      continue;
    }
    for (let i = 0; i < 2; i++) await httpGet(`${server.url}${query.path()}`, headers);
    const times: number[] = [];
    const statuses = new Set<number>();
    for (let i = 0; i < samples; i++) {
      const url = `${server.url}${query.path()}`;
      const started = process.hrtime.bigint();
      const res = await httpGet(url, headers);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      statuses.add(res.status);
    }
    times.sort((a, b) => a - b);
    const result = {
      name: query.name,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      max: times.at(-1)!,
      count: samples,
      status: [...statuses].join(","),
    };
    progress(`${query.name}: p50 ${result.p50.toFixed(0)} ms, p99 ${result.p99.toFixed(0)} ms`);
    results.push(result);
  }

  // The export of a large search (the whole log, oldest first) as CSV, read as a client would,
  // stopped after --export-rows lines; the server's resident memory sampled meanwhile.
  progress(`export: up to ${exportRowsLimit} rows as CSV, between two COPYs of the same rows`);
  copyRates.push(exportRowsLimit / (await copyRows(databaseUrl, exportRowsLimit)));
  const rssOf = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))![1]) / 1024;
  exportBaselineRssMib = rssOf();
  exportPeakRssMib = exportBaselineRssMib;
  const sampler = setInterval(() => (exportPeakRssMib = Math.max(exportPeakRssMib, rssOf())), 50);
  const started = process.hrtime.bigint();
  exportRows = await new Promise<number>((resolve, reject) => {
    let lines = -1; // the header
    const req = http.get(`${server.url}/review/disclosures/export?format=csv`, { headers }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`export: HTTP ${res.statusCode}`));
      res.on("data", (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        if (lines >= exportRowsLimit) {
          req.destroy();
          resolve(lines);
        }
      });
      res.on("end", () => resolve(lines));
      res.on("error", () => resolve(lines));
    });
    req.on("error", (error) => (lines >= exportRowsLimit ? resolve(lines) : reject(error)));
  });
  exportSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  copyRates.push(exportRows / (await copyRows(databaseUrl, exportRows)));
  progress(
    `export: ${exportRows} rows in ${exportSeconds.toFixed(1)} s, server peak RSS ${exportPeakRssMib.toFixed(0)} MiB`,
  );
} catch (error) {
  process.stderr.write(`the server's output:\n${server.output().slice(-5000)}\n`);
  throw error;
} finally {
  await server.stop();
}

// --- verification ----------------------------------------------------------------------------
progress("appending 1,000 entries through appendDisclosure");
await verifyChain(ctx, { mode: "incremental" }); // a checkpoint at the head, if the full walk did not leave one
const appendStarted = Date.now();
await appendEntries(sql, 1_000);
const appendSeconds = (Date.now() - appendStarted) / 1000;
started = Date.now();
const incrementalReport = await verifyChain(ctx, { mode: "incremental" });
const incrementalMs = Date.now() - started;
if (!incrementalReport.intact)
  throw new Error(`the incremental verification failed: ${JSON.stringify(incrementalReport)}`);
progress(`incremental verification after 1,000 entries: ${incrementalMs} ms`);

// --- report ----------------------------------------------------------------------------------
const measured = results.filter((r) => r.count > 0);
const reviewerQueries = measured.filter((r) => r.name !== "contributor report");
const contributorReport = measured.find((r) => r.name === "contributor report");
const slowestP50 = reviewerQueries.reduce((a, b) => (b.p50 > a.p50 ? b : a));
const slowestP99 = reviewerQueries.reduce((a, b) => (b.p99 > a.p99 ? b : a));
const perMillion = (bytes: number, count: number) => (bytes / count) * 1e6;
console.log(
  `entries=${logEntries} disclosed_episodes=${sizes!.episode_rows} whole_version_entries=${sizes!.whole} samples=${samples} cores=${(await import("node:os")).cpus().length}`,
);
if (generated) {
  console.log(
    `generated: catalog ${generated.catalogSeconds.toFixed(1)} s, log ${generated.logSeconds.toFixed(1)} s (${Math.round(generated.entries / generated.logSeconds)} entries/s), ` +
      `keys and indexes ${generated.indexSeconds.toFixed(1)} s; channels ${JSON.stringify(generated.byChannel)}`,
  );
}
console.log(
  `size: disclosures ${gib(sizes!.disclosures_bytes)} GiB (${Math.round(sizes!.disclosures_bytes / logEntries)} B/entry), ` +
    `disclosure_episodes ${gib(sizes!.episodes_bytes)} GiB (${Math.round(sizes!.episodes_bytes / sizes!.episode_rows)} B/disclosed episode); ` +
    `${gib(perMillion(sizes!.disclosures_bytes + sizes!.episodes_bytes, logEntries))} GiB per million entries with their episodes`,
);
console.log(
  table(
    results.map((r) => ({
      query: r.name,
      "p50 ms": r.p50,
      "p99 ms": r.p99,
      "max ms": r.max,
      n: r.count,
      status: r.status,
    })),
  ),
);
console.log(
  `export: ${exportRows} rows in ${exportSeconds.toFixed(1)} s = ${Math.round(exportRows / exportSeconds)} rows/s, server RSS ${exportBaselineRssMib.toFixed(0)} MiB before, peak ${exportPeakRssMib.toFixed(0)} MiB during; ` +
    `chain banner's first result after ${bannerFirstResultSeconds.toFixed(1)} s; ` +
    `full verify ${Math.round(full.count / fullSeconds)} entries/s; 1,000 appends in ${appendSeconds.toFixed(1)} s; incremental verify ${incrementalMs} ms`,
);
const exportPerSecond = exportRows / exportSeconds;
const copyPerSecond = copyRates.reduce((a, b) => a + b, 0) / copyRates.length;
const verifyPerSecond = full.count / fullSeconds;
const sha256PerSecond = full.count / sha256Seconds;
const readPerSecond = full.count / readSeconds;
const ratios = {
  export_to_copy_ratio: round(exportPerSecond / copyPerSecond),
  verify_to_sha256_ratio: round(verifyPerSecond / sha256PerSecond),
};
console.log(
  table([
    ...ratioRows("bench:review", ratios),
    { measure: "CSV export over HTTP", value: `${Math.round(exportPerSecond)} rows/s`, target: "" },
    {
      measure: "COPY (select ...) TO STDOUT of the same rows",
      value: `${Math.round(copyPerSecond)} rows/s`,
      target: "",
    },
    {
      measure: `full verification, ${walkThreads} threads`,
      value: `${Math.round(verifyPerSecond)} entries/s`,
      target: "",
    },
    {
      measure: `raw SHA-256 of the same bytes, ${walkThreads} threads`,
      value: `${Math.round(sha256PerSecond)} entries/s`,
      target: "",
    },
    {
      measure: "COPY of the entries' columns the walk reads, one connection",
      value: `${Math.round(readPerSecond)} entries/s (walk ÷ it: ${round(verifyPerSecond / readPerSecond)})`,
      target: "",
    },
  ]),
);
console.log(
  JSON.stringify({
    ...ratios,
    entries: logEntries,
    disclosed_episodes: sizes!.episode_rows,
    query_p50_ms_max: round(slowestP50.p50),
    query_p50_slowest: slowestP50.name,
    query_p99_ms_max: round(slowestP99.p99),
    query_p99_slowest: slowestP99.name,
    contributor_p50_ms: contributorReport ? round(contributorReport.p50) : null,
    contributor_p99_ms: contributorReport ? round(contributorReport.p99) : null,
    incremental_verify_ms: incrementalMs,
    export_rows_per_s: Math.round(exportPerSecond),
    copy_rows_per_s: Math.round(copyPerSecond),
    export_peak_rss_mib: Math.round(exportPeakRssMib),
    export_baseline_rss_mib: Math.round(exportBaselineRssMib),
    banner_first_result_s: round(bannerFirstResultSeconds),
    full_verify_entries_per_s: Math.round(verifyPerSecond),
    sha256_entries_per_s: Math.round(sha256PerSecond),
    read_entries_per_s: Math.round(readPerSecond),
    not_measured: results.filter((r) => r.count === 0).map((r) => `${r.name} (${r.status})`),
    bytes_per_entry: Math.round(sizes!.disclosures_bytes / logEntries),
    database_bytes: sizes!.database_bytes,
    bytes_per_disclosed_episode: Math.round(sizes!.episodes_bytes / sizes!.episode_rows),
    generation_entries_per_s: generated ? Math.round(generated.entries / generated.logSeconds) : null,
    reused: generated === null,
  }),
);
await db.$client.end();
await runtime.stop();

function gib(bytes: number) {
  return (bytes / 2 ** 30).toFixed(1);
}
function diskFree() {
  const stats = statfsSync(dataDirectory());
  return stats.bavail * stats.bsize;
}

/**
 * The database the log lives in. On the embedded default: `bench_review_<N>` on its server,
 * created and migrated here (dropped and made again unless --reuse finds a complete one). With
 * --database-url: that database, migrated.
 */
async function benchDatabase(): Promise<string> {
  if (values["database-url"]) {
    await migrateDatabase(values["database-url"]);
    return values["database-url"];
  }
  const name = `bench_review_${entries}`;
  const admin = postgres(ownerUrl, { max: 1, onnotice: () => {} });
  const [found] = await admin<{ complete: boolean }[]>`
    select coalesce(shobj_description(oid, 'pg_database') = 'complete', false) as complete from pg_database where datname = ${name}`;
  if (found && !(values.reuse && found.complete)) {
    progress(`dropping ${name}`);
    await admin.unsafe(`drop database ${name} with (force)`);
  }
  if (!found || !(values.reuse && found.complete)) await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(ownerUrl);
  url.pathname = `/${name}`;
  await migrateDatabase(url.toString());
  return url.toString();
}

/** Marks the generated database complete, so --reuse takes it and an interrupted one is made again. */
async function markComplete() {
  if (values["database-url"]) return;
  await sql.unsafe(`comment on database bench_review_${entries} is 'complete'`);
}

/** New entries at the head through the product's own append, each in its own transaction, as downloads make them. */
async function appendEntries(sql: Sql, count: number) {
  // withTx: the product's own transaction, as a download's.
  const recipients = await sql<
    {
      organization_id: string;
      licence_id: string;
      version_id: number;
      dataset_id: string;
      version: string;
      api_key_id: string;
    }[]
  >`
    select l.organization_id, l.id as licence_id, v.id as version_id, v.dataset_id, v.version,
           (select k.id from api_keys k where k.organization_id = l.organization_id limit 1) as api_key_id
    from licences l join dataset_versions v on v.id = l.version_id limit 50`;
  for (let i = 0; i < count; i++) {
    const r = recipients[i % recipients.length]!;
    const ids = [`${r.dataset_id}-${String(i % 7).padStart(7, "0")}`];
    const id = `dl_bench${Date.now().toString(36)}${i}`;
    await withTx(ctx, async (transaction) => {
      const tx = sqlOf(transaction.db);
      const entry: Omit<ChainedEntry, "seq" | "occurredAt" | "expiresAt" | "prevHash"> = {
        id,
        organizationId: r.organization_id,
        apiKeyId: r.api_key_id,
        userId: null,
        reviewerRole: null,
        channel: "api",
        datasetId: r.dataset_id,
        version: r.version,
        licenceId: r.licence_id,
        requestedScope: { episode_ids: ids },
        episodeCount: ids.length,
        fileCount: 2,
        totalBytes: 80_000_000,
        episodesSha256: episodesDigest(ids),
        requestId: `bench-review-${i}`,
      };
      await appendDisclosure(tx, {
        entry: {
          ...entry,
          // The benchmark's licences are granted without terms.
          termsSha256: null,
          versionId: r.version_id,
          idempotencyScope: null,
          idempotencyKey: null,
          requestSha256: sha256Hex(id),
        },
        episodeIds: ids,
        ttlSeconds: 3600,
        refusals: [withdrawnMeanwhile],
      });
    });
  }
}
