// npm run bench:api -- --episodes 1000000 [--profile]
// One version with N episodes, the production build over HTTP, and the same page query as a raw
// postgres.js loop in the same run; then how long a revocation takes to reach two instances.
// Prints tables, then one JSON line (the last line of stdout). With --profile the server runs
// under `node --cpu-prof` (which slows it: take the figures from a run without it) and the
// profile is summarised: where the server's time goes, framework or ours.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { and, eq } from "drizzle-orm";
import { startEmbeddedDefault } from "@/lib/dev/embedded-default";
import { createDb } from "@/lib/db/client";
import { datasetVersions } from "@/lib/db/schema";
import type { Ctx } from "@/lib/context";
import { importVersion } from "@/lib/catalog/import/import-version";
import { writeBulkVersion } from "@/lib/dev/demo/generate";
import { createOrganization, organizationBySlug } from "@/lib/admin/organizations";
import { grantLicence } from "@/lib/admin/licences";
import { issueKey, revokeKey } from "@/lib/admin/keys";
import { encodeCursor } from "@/lib/cursor";
import { episodeConditions, type EpisodeFilter } from "@/lib/catalog/episode-filter";
import { episodeCursorBinding } from "@/lib/catalog/list-episodes";
import type { NextServer } from "@/lib/dev/next-server";
import {
  httpGet,
  measureTogether,
  percentile,
  progress,
  round,
  startProductionServer,
  table,
  type Measurement,
} from "./bench/common";
import { summariseProfile } from "./bench/cpu-profile";

const { values } = parseArgs({
  options: {
    episodes: { type: "string", default: "1000000" },
    seconds: { type: "string", default: "5" },
    revocations: { type: "string", default: "100" },
    profile: { type: "boolean", default: false },
  },
});
const episodes = Number(values.episodes);
const seconds = Number(values.seconds);
const revocations = Number(values.revocations);
const PAGE = 100;
const CONCURRENCY = 4;
const WARM_UP_S = 10;

// Its own data directory, so the benchmark's million rows never land in the demo database.
process.env.DAS_DATA_DIR ??= ".data/bench";
const runtime = await startEmbeddedDefault();
process.env.APP_SECRET = runtime.env.APP_SECRET;
const db = createDb(runtime.env.DATABASE_URL!, { max: CONCURRENCY + 2 });
const ctx: Ctx = {
  db,
  requestId: "bench",
  principal: { kind: "operator", name: userInfo().username, organizationId: null },
};
const datasetId = `bench-${episodes}`;
const version = "1.0.0";

let importSeconds: number | null = null;
let importPeakRssMb: number | null = null;
let [row] = await db
  .select({ id: datasetVersions.id, facets: datasetVersions.facetCounts })
  .from(datasetVersions)
  .where(and(eq(datasetVersions.datasetId, datasetId), eq(datasetVersions.version, version)));
if (!row) {
  const scratch = mkdtempSync(path.join(tmpdir(), "das-bench-"));
  try {
    progress(`writing ${episodes} episodes`);
    const dir = await writeBulkVersion(scratch, datasetId, version, episodes);
    progress("importing");
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
    const started = Date.now();
    await importVersion(db.$client, dir);
    importSeconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    importPeakRssMb = Math.round(peak / 2 ** 20);
    progress(`imported in ${importSeconds.toFixed(1)} s, peak RSS ${importPeakRssMb} MiB`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  [row] = await db
    .select({ id: datasetVersions.id, facets: datasetVersions.facetCounts })
    .from(datasetVersions)
    .where(and(eq(datasetVersions.datasetId, datasetId), eq(datasetVersions.version, version)));
}
const versionId = row!.id;
const org = await organizationBySlug(ctx, "bench").catch(() => createOrganization(ctx, { slug: "bench" }));
await grantLicence(ctx, { organizationId: org.id, datasetId, version });
const key = (await issueKey(ctx, { organizationId: org.id, name: `bench ${new Date().toISOString()}` })).secret;

// The filters: the most common outcome, and its most common environment.
const [outcome] = Object.entries(row!.facets.outcome).sort((a, b) => b[1] - a[1])[0]!;
const environment = Object.entries(row!.facets.pairs)
  .map(([pair, n]) => [JSON.parse(pair) as [string, string], n] as const)
  .filter(([[o]]) => o === outcome)
  .sort((a, b) => b[1] - a[1])[0]![0][1];
const [deep] = await db.$client<{ episode_id: string }[]>`
  select episode_id from episodes where version_id = ${versionId} order by episode_id offset ${Math.floor(episodes * 0.9)} limit 1`;
// The filters beyond outcome and environment: the most common task and contributor (from the counts
// the import made), and the middle of the duration range.
const [common] = await db.$client<{ task: string; contributor: string }[]>`
  select (select task from episode_facets where version_id = ${versionId} group by task order by sum(episodes) desc limit 1) as task,
         (select contributor from episode_facets where version_id = ${versionId} group by contributor order by sum(episodes) desc limit 1) as contributor`;
const { task, contributor } = common!;

const shapes: { name: string; filter: EpisodeFilter; after?: string }[] = [
  { name: "unfiltered", filter: {} },
  { name: "outcome", filter: { outcome } },
  { name: "outcome+environment", filter: { outcome, environment } },
  { name: "deep cursor (90%)", filter: {}, after: deep!.episode_id },
  // Served by episodes_task_idx (version_id, task, episode_id): one index range.
  { name: "task", filter: { task } },
  // episodes_version_contributor_idx, has_recovery checked along it (about one row in three kept).
  { name: "contributor+has_recovery", filter: { contributor, has_recovery: true } },
  // The primary key's walk with the range checked along it, or episodes_duration_idx for a narrow range.
  { name: "duration 20-40 s", filter: { min_duration_s: 20, max_duration_s: 40 } },
  {
    name: "task+duration, deep cursor",
    filter: { task, min_duration_s: 20, max_duration_s: 40 },
    after: deep!.episode_id,
  },
];

// Every revocation round ends in 401s from this one address: the failed-authentication budget must not turn them into 429s.
const serverEnv = { ...runtime.env, RATE_LIMIT_PER_MINUTE: "100000000", AUTH_FAILURES_PER_MINUTE: "100000000" };
const profileDir = path.resolve(".data/bench/profiles", new Date().toISOString().replace(/[:.]/g, "-"));
if (values.profile) mkdirSync(profileDir, { recursive: true });
const server = await startProductionServer(
  serverEnv,
  values.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
);
const headers = { authorization: `Bearer ${key}`, accept: "application/json" };
/** Each shape's page as the server wrote it, for the bytes' own floor (`bytesFloor`). */
const pageBodies: string[] = [];
let floorBody = "";
const results: {
  name: string;
  http: Measurement;
  gzip: Measurement;
  floor: Measurement;
  sql: Measurement;
}[] = [];
const pageUrl = (shape: (typeof shapes)[number]) => {
  const query = Object.fromEntries(Object.entries(shape.filter).map(([k, v]) => [k, String(v)]));
  const search = new URLSearchParams({ ...query, limit: String(PAGE) });
  if (shape.after) {
    // The same cursor a client would hold after walking 90% of the version.
    search.set("cursor", encodeCursor(episodeCursorBinding(datasetId, version, shape.filter), [shape.after]));
  }
  return `${server.url}/api/v1/datasets/${datasetId}/versions/${version}/episodes?${search}`;
};
try {
  await untilListening(server, headers);
  // The server in its steady state before anything is measured: every shape's page (plain and
  // gzipped) and the floor, by as many workers as measure them, for WARM_UP_S. Measured from its
  // start, the first shape met a server still compiling its code and growing its heap (its p50 was
  // up to twice the others' in the same run).
  progress(`warming the server up for ${WARM_UP_S} s`);
  const warmUrls = [...shapes.map(pageUrl), `${server.url}/api/no-such-endpoint`];
  const warmUntil = Date.now() + WARM_UP_S * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = worker; Date.now() < warmUntil; i++) {
        const url = warmUrls[i % warmUrls.length]!;
        await httpGet(url, i % 2 ? headers : { ...headers, "accept-encoding": "gzip" });
      }
    }),
  );
  floorBody = (await httpGet(`${server.url}/api/no-such-endpoint`, headers)).body;
  for (const shape of shapes) {
    const url = pageUrl(shape);
    const check = await httpGet(url, headers);
    const body = JSON.parse(check.body);
    if (check.status !== 200 || body.episodes.length !== PAGE || typeof body.total !== "number") {
      throw new Error(`unexpected response for ${shape.name}: ${check.status} ${check.body.slice(0, 200)}`);
    }
    progress(`${shape.name}: total ${body.total}`);
    pageBodies.push(check.body);
    const sql = db.$client;
    const after = shape.after;
    // The page over HTTP; the framework's floor, a JSON 404 through Next (the API's catch-all route,
    // which touches no database for a path no operation has); and the page's query as a raw
    // postgres.js loop: measured in alternating slices.
    const measured = await measureTogether(
      {
        http: async () => {
          const res = await httpGet(url, headers);
          if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 200)}`);
        },
        // The same page for a client that takes gzip, as fetch, curl --compressed and `das` do.
        gzip: async () => {
          const res = await httpGet(url, { ...headers, "accept-encoding": "gzip" });
          if (res.status !== 200) throw new Error(`HTTP ${res.status} for a gzip client`);
        },
        floor: async () => {
          await httpGet(`${server.url}/api/no-such-endpoint`, headers);
        },
        // The product's own statement for the shape (lib/catalog/list-episodes.ts), so that each
        // shape is planned as the server plans it.
        sql: async () => {
          await sql`
            select episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams from episodes e
            where version_id = ${versionId} ${episodeConditions(sql, shape.filter)}
              ${after === undefined ? sql`` : sql`and episode_id > ${after}`}
            order by episode_id limit ${PAGE + 1}`;
        },
      },
      // The server's CPU time per request: on a shared machine the steadier measure of what a
      // page costs against the floor, since it does not depend on how much CPU the server was given.
      { seconds, concurrency: CONCURRENCY, watchPid: server.pid, slice: 0.25 },
    );
    results.push({ name: shape.name, ...measured });
  }
} catch (error) {
  process.stderr.write(`the server's output:\n${server.output().slice(-5000)}\n`);
  throw error;
} finally {
  await server.stop();
}

const bytes = await bytesFloor(pageBodies, floorBody);

// Revocation: a second instance, a fresh key per round read through both (so each has it cached),
// revoked here (a third process, as das-admin or the portal of another instance would), and both
// asked again and again until each answers 401. Timed from just before the revoking transaction.
progress(`revocation latency over ${revocations} revocations, two instances`);
const instances = await Promise.all([startProductionServer(serverEnv), startProductionServer(serverEnv)]);
const revocationMs: number[] = [];
const commitMs: number[] = [];
try {
  await Promise.all(instances.map((instance) => untilListening(instance, headers)));
  const pageUrl = (instance: NextServer) =>
    `${instance.url}/api/v1/datasets/${datasetId}/versions/${version}/episodes?limit=${PAGE}`;
  for (let i = 0; i < revocations; i++) {
    const issued = await issueKey(ctx, { organizationId: org.id, name: `bench revocation ${i}` });
    const keyHeaders = { authorization: `Bearer ${issued.secret}`, accept: "application/json" };
    for (const instance of instances) {
      for (let j = 0; j < 2; j++) {
        const res = await httpGet(pageUrl(instance), keyHeaders);
        if (res.status !== 200) throw new Error(`HTTP ${res.status} before revocation: ${res.body.slice(0, 200)}`);
      }
    }
    const started = process.hrtime.bigint();
    await revokeKey(ctx, { id: issued.id });
    commitMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    const pending = new Set(instances);
    while (pending.size) {
      for (const instance of [...pending]) {
        const res = await httpGet(pageUrl(instance), keyHeaders);
        if (res.status === 401) pending.delete(instance);
        else if (res.status !== 200) throw new Error(`HTTP ${res.status} after revocation: ${res.body.slice(0, 200)}`);
      }
      if (Number(process.hrtime.bigint() - started) > 10e9)
        throw new Error("a revoked key was still accepted after 10 s");
    }
    revocationMs.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
} finally {
  await Promise.all(instances.map((instance) => instance.stop()));
}
revocationMs.sort((a, b) => a - b);
commitMs.sort((a, b) => a - b);

const rows = results.map((r) => ({
  shape: r.name,
  "http p50 ms": r.http.p50,
  "http p99 ms": r.http.p99,
  "http req/s": Math.round(r.http.perSecond),
  "sql p50 ms": r.sql.p50,
  "sql p99 ms": r.sql.p99,
  "sql q/s": Math.round(r.sql.perSecond),
  "http/sql": r.http.perSecond / r.sql.perSecond,
  "floor req/s": Math.round(r.floor.perSecond),
  "http/floor": r.http.perSecond / r.floor.perSecond,
  "server cpu ms/page": r.http.cpuMsPerOp!,
  "ms/floor": r.floor.cpuMsPerOp!,
  "page in floors": r.http.cpuMsPerOp! / r.floor.cpuMsPerOp!,
  "gzip req/s": Math.round(r.gzip.perSecond),
  "cpu ms/gzip page": r.gzip.cpuMsPerOp!,
}));
console.log(
  `episodes=${episodes} page=${PAGE} concurrency=${CONCURRENCY} seconds=${seconds} cores=${(await import("node:os")).cpus().length}`,
);
console.log(table(rows));
/** A figure's mean over the page shapes. */
const mean = (figure: (r: (typeof results)[number]) => number) =>
  results.reduce((sum, r) => sum + figure(r), 0) / results.length;
const floorRps = mean((r) => r.floor.perSecond);
const floorP50 = mean((r) => r.floor.p50);
console.log(
  `framework floor (JSON 404 through Next, no database, measured with each shape): p50 ${floorP50.toFixed(2)} ms, ${Math.round(floorRps)} req/s on average`,
);
console.log(
  `a page's own bytes (${bytes.pageBytes} on average), written by plain node:http: ${bytes.cpuMsPerPageBytes.toFixed(3)} ms of CPU more than the floor's body, so no page can cost under ${(1 + bytes.cpuMsPerPageBytes / mean((r) => r.floor.cpuMsPerOp!)).toFixed(2)} floors`,
);
console.log(
  `revocation, two instances, ${revocations} revocations: p50 ${percentile(revocationMs, 50).toFixed(1)} ms, p99 ${percentile(revocationMs, 99).toFixed(1)} ms, max ${revocationMs.at(-1)!.toFixed(1)} ms ` +
    `(of which the revoking transaction itself: p50 ${percentile(commitMs, 50).toFixed(1)} ms, p99 ${percentile(commitMs, 99).toFixed(1)} ms)`,
);
if (values.profile) {
  for (const file of readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile"))) {
    const summary = summariseProfile(path.join(profileDir, file), process.cwd());
    console.log(
      `\nprofile ${path.join(profileDir, file)}: ${summary.busyMs} ms busy, ${summary.insideOursPercent}% of it inside our code (inclusive)`,
    );
    console.log(table(summary.parts.map((p) => ({ part: p.part, ms: p.ms, "% of busy": p.percent }))));
    console.log(
      table(
        summary.top.map((f) => ({
          function: f.fn.slice(0, 70),
          source: f.where.slice(0, 60),
          part: f.part.split(" (")[0]!,
          "% of busy": f.percent,
        })),
      ),
    );
  }
}
const httpRps = mean((r) => r.http.perSecond);
const sqlRps = mean((r) => r.sql.perSecond);
console.log(
  JSON.stringify({
    episodes,
    page_p50_ms: round(results[0]!.http.p50),
    page_p99_ms: round(results[0]!.http.p99),
    filtered_page_p50_ms: round(results[1]!.http.p50),
    both_filters_page_p50_ms: round(results[2]!.http.p50),
    deep_page_p50_ms: round(results[3]!.http.p50),
    task_page_p50_ms: round(results[4]!.http.p50),
    contributor_recovery_page_p50_ms: round(results[5]!.http.p50),
    duration_page_p50_ms: round(results[6]!.http.p50),
    task_duration_deep_page_p50_ms: round(results[7]!.http.p50),
    max_p50_ms: round(Math.max(...results.map((r) => r.http.p50))),
    http_rps: Math.round(httpRps),
    sql_rps: Math.round(sqlRps),
    http_to_sql_ratio: round(httpRps / sqlRps),
    http_to_floor_ratio: round(httpRps / floorRps),
    min_http_to_sql_ratio: round(Math.min(...results.map((r) => r.http.perSecond / r.sql.perSecond))),
    min_http_to_floor_ratio: round(Math.min(...results.map((r) => r.http.perSecond / r.floor.perSecond))),
    framework_floor_rps: Math.round(floorRps),
    framework_floor_to_sql_ratio: round(floorRps / sqlRps),
    gzip_page_rps: Math.round(mean((r) => r.gzip.perSecond)),
    server_cpu_ms_per_gzip_page: round(mean((r) => r.gzip.cpuMsPerOp!)),
    server_cpu_ms_per_page: round(mean((r) => r.http.cpuMsPerOp!)),
    server_cpu_ms_per_floor: round(mean((r) => r.floor.cpuMsPerOp!)),
    page_cost_in_floors: round(Math.max(...results.map((r) => r.http.cpuMsPerOp! / r.floor.cpuMsPerOp!))),
    page_bytes_in_floors: round(1 + bytes.cpuMsPerPageBytes / mean((r) => r.floor.cpuMsPerOp!)),
    page_bytes: bytes.pageBytes,
    raw_cpu_ms_per_page_bytes: round(bytes.cpuMsPerPageBytes * 1000) / 1000,
    revocation_p50_ms: round(percentile(revocationMs, 50)),
    revocation_p99_ms: round(percentile(revocationMs, 99)),
    revocation_commit_p50_ms: round(percentile(commitMs, 50)),
    profiled: values.profile,
    import_s: importSeconds,
    import_peak_rss_mib: importPeakRssMb,
  }),
);
await db.$client.end();
await runtime.stop();

/**
 * What writing a page's bytes costs, apart from anything that makes them: a plain node:http server
 * in a process of its own answers the floor's body and each shape's page body, as they were
 * written, and its CPU per answer is measured as the server's is. The difference is the CPU that a
 * body of a page's size takes to write on this machine, which no page can go under; added to the
 * floor, it is the lowest cost a page can have in floors (`page_bytes_in_floors`).
 */
async function bytesFloor(bodies: readonly string[], floorBody: string) {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-api-bytes-"));
  bodies.forEach((body, i) => writeFileSync(path.join(dir, `${i}.json`), body));
  writeFileSync(path.join(dir, "floor.json"), floorBody);
  const script = `
    const http = require("node:http"), fs = require("node:fs"), path = require("node:path");
    const dir = process.argv[1];
    const pages = fs.readdirSync(dir).filter((f) => /^[0-9]+[.]json$/.test(f)).map((f) => fs.readFileSync(path.join(dir, f)));
    const floor = fs.readFileSync(path.join(dir, "floor.json"));
    let next = 0;
    const server = http.createServer((req, res) => {
      const page = req.url === "/page" ? pages[next++ % pages.length] : null;
      const body = page ?? floor;
      res.writeHead(page ? 200 : 404, { "content-type": "application/json", "content-length": body.length });
      res.end(body);
    });
    server.keepAliveTimeout = 60000;
    server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ["-e", script, dir], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const [port] = (await once(child.stdout!, "data")) as [Buffer];
    const base = `http://127.0.0.1:${String(port).trim()}`;
    const measured = await measureTogether(
      {
        floor: async () => void (await httpGet(`${base}/floor`, {})),
        page: async () => void (await httpGet(`${base}/page`, {})),
      },
      { seconds, concurrency: CONCURRENCY, watchPid: child.pid!, slice: 0.25 },
    );
    const pageBytes = Math.round(bodies.reduce((sum, b) => sum + Buffer.byteLength(b), 0) / Math.max(1, bodies.length));
    const cpuMsPerPageBytes = Math.max(0, measured.page.cpuMsPerOp! - measured.floor.cpuMsPerOp!);
    progress(
      `a page's ${pageBytes} bytes, written by plain node:http: ${cpuMsPerPageBytes.toFixed(3)} ms of CPU more than the floor's body`,
    );
    return { pageBytes, cpuMsPerPageBytes };
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits until an instance's cache listens for invalidations (its first API request opens the channel), so that what is measured is the cached path. */
async function untilListening(instance: NextServer, requestHeaders: Record<string, string>) {
  await httpGet(`${instance.url}/api/v1/datasets`, requestHeaders);
  const deadline = Date.now() + 20_000;
  while (!instance.output().includes("api cache: listening for invalidations")) {
    if (Date.now() > deadline) throw new Error(`the instance's cache does not listen:\n${instance.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
