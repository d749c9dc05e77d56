// npm run bench:api -- --episodes 1000000
// One version with N episodes, the production build over HTTP, and the same page query as a raw
// postgres.js loop in the same run. Prints a table, then one JSON line (the last line of stdout).
import { mkdtempSync, rmSync } from "node:fs";
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
import { issueKey } from "@/lib/admin/keys";
import { encodeCursor, queryBinding } from "@/lib/cursor";
import { httpGet, measure, progress, startProductionServer, table, type Measurement } from "./bench/common";

const { values } = parseArgs({ options: { episodes: { type: "string", default: "1000000" }, seconds: { type: "string", default: "5" } } });
const episodes = Number(values.episodes);
const seconds = Number(values.seconds);
const PAGE = 100;
const CONCURRENCY = 4;

// Its own data directory, so the benchmark's million rows never land in the demo database.
process.env.DAS_DATA_DIR ??= ".data/bench";
const runtime = await startEmbeddedDefault();
process.env.APP_SECRET = runtime.env.APP_SECRET;
const db = createDb(runtime.env.DATABASE_URL!, { max: CONCURRENCY + 2 });
const ctx: Ctx = { db, requestId: "bench", principal: { kind: "operator", name: userInfo().username, organizationId: null } };
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

const shapes = [
  { name: "unfiltered", query: {} as Record<string, string>, after: undefined as string | undefined },
  { name: "outcome", query: { outcome }, after: undefined },
  { name: "outcome+environment", query: { outcome, environment }, after: undefined },
  { name: "deep cursor (90%)", query: {}, after: deep!.episode_id },
];

const server = await startProductionServer({ ...runtime.env, RATE_LIMIT_PER_MINUTE: "100000000" });
const headers = { authorization: `Bearer ${key}`, accept: "application/json" };
const results: { name: string; http: Measurement; sql: Measurement }[] = [];
let floor: Measurement | undefined;
try {
  for (const shape of shapes) {
    const search = new URLSearchParams({ ...shape.query, limit: String(PAGE) });
    if (shape.after) {
      // The same cursor a client would hold after walking 90% of the version.
      search.set("cursor", encodeCursor(queryBinding(["episodes", datasetId, version, shape.query.outcome, shape.query.environment]), [shape.after]));
    }
    const url = `${server.url}/api/v1/datasets/${datasetId}/versions/${version}/episodes?${search}`;
    const check = await httpGet(url, headers);
    const body = JSON.parse(check.body);
    if (check.status !== 200 || body.episodes.length !== PAGE || typeof body.total !== "number") {
      throw new Error(`unexpected response for ${shape.name}: ${check.status} ${check.body.slice(0, 200)}`);
    }
    progress(`${shape.name}: total ${body.total}`);
    const http = await measure(
      async () => {
        const res = await httpGet(url, headers);
        if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 200)}`);
      },
      { seconds, concurrency: CONCURRENCY },
    );
    const sql = db.$client;
    const { outcome: o = null, environment: e = null } = shape.query;
    const after = shape.after ?? null;
    const raw = await measure(
      async () => {
        await sql`
          select episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams from episodes
          where version_id = ${versionId}
            and (${o}::text is null or outcome = ${o}) and (${e}::text is null or environment = ${e})
            and (${after}::text is null or episode_id > ${after})
          order by episode_id limit ${PAGE + 1}`;
      },
      { seconds, concurrency: CONCURRENCY },
    );
    results.push({ name: shape.name, http, sql: raw });
  }
  // The framework's own floor: the JSON 404 of the catch-all route, which touches no database.
  floor = await measure(
    async () => {
      await httpGet(`${server.url}/api/v1/no-such-endpoint`, headers);
    },
    { seconds, concurrency: CONCURRENCY },
  );
} finally {
  await server.stop();
}

const rows = results.map((r) => ({
  shape: r.name,
  "http p50 ms": r.http.p50,
  "http p99 ms": r.http.p99,
  "http req/s": Math.round(r.http.perSecond),
  "sql p50 ms": r.sql.p50,
  "sql p99 ms": r.sql.p99,
  "sql q/s": Math.round(r.sql.perSecond),
  "http/sql": r.http.perSecond / r.sql.perSecond,
}));
console.log(`episodes=${episodes} page=${PAGE} concurrency=${CONCURRENCY} seconds=${seconds} cores=${(await import("node:os")).cpus().length}`);
console.log(table(rows));
console.log(`framework floor (JSON 404, no database): p50 ${floor!.p50.toFixed(2)} ms, ${Math.round(floor!.perSecond)} req/s`);
const httpRps = results.reduce((s, r) => s + r.http.perSecond, 0) / results.length;
const sqlRps = results.reduce((s, r) => s + r.sql.perSecond, 0) / results.length;
console.log(
  JSON.stringify({
    episodes,
    page_p50_ms: round(results[0]!.http.p50),
    page_p99_ms: round(results[0]!.http.p99),
    filtered_page_p50_ms: round(results[1]!.http.p50),
    both_filters_page_p50_ms: round(results[2]!.http.p50),
    deep_page_p50_ms: round(results[3]!.http.p50),
    max_p50_ms: round(Math.max(...results.map((r) => r.http.p50))),
    http_rps: Math.round(httpRps),
    sql_rps: Math.round(sqlRps),
    http_to_sql_ratio: round(httpRps / sqlRps),
    framework_floor_rps: Math.round(floor!.perSecond),
    framework_floor_to_sql_ratio: round(floor!.perSecond / sqlRps),
    import_s: importSeconds,
    import_peak_rss_mib: importPeakRssMb,
  }),
);
await db.$client.end();
await runtime.stop();

function round(n: number) {
  return Math.round(n * 100) / 100;
}
