// npm run bench:scaling [-- --part all|pooler|replica|archive] [--entries N] [--archive-entries N]
//   [--append-rate N] [--samples N] [--seconds N] [--reuse] [--workers N] [--catalog-episodes N]
//
// What one PostgreSQL is not enough for (docs/scaling.md), measured on the embedded PostgreSQL
// (its data under .data/bench-scaling) and Debian's PgBouncer:
//   pooler:  the log's append rate through PgBouncer in transaction mode against directly
//            (target: within 10%), concurrent downloads' appends through the group commit;
//   replica: the reviewer's queries at --entries (default 10M, partitioned) on a streaming replica
//            while the primary takes --append-rate appends a second (targets p50 < 300 ms, p99 < 1 s);
//   archive: one month of --archive-entries (default 1M) closed, archived to the local store and
//            checked, then restored: each step's time, and the full walk before, between and after
//            (restored, it must be the same).
// Prints a table per part and one JSON line with every figure.
import { generateKeyPairSync } from "node:crypto";
import { parseArgs } from "node:util";
import path from "node:path";
import os from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import postgres from "postgres";
import { migrateDatabase } from "@/lib/db/migrate";
import { startEmbeddedDefault } from "@/lib/dev/embedded-default";
import { randomStoreCredentials, startLocalStore } from "@/lib/dev/local-store";
import { archiveMonth, restoreMonth } from "@/lib/disclosures/archive";
import { closeEndedMonths, monthName } from "@/lib/disclosures/months";
import { verifyChainDetailed } from "@/lib/disclosures/verify";
import { parallelRangeChecker } from "@/lib/disclosures/verify-parallel";
import { appendToLog } from "@/lib/disclosures/append";
import { s3Client } from "@/lib/storage/client";
import { hasPgBouncer, startPgBouncer } from "@/lib/testing/pgbouncer";
import { startStreamingReplica } from "@/lib/testing/streaming-replica";
import { withPort } from "@/lib/testing/postgres-cluster";
import { BENCH_SHAPE, generateDisclosureLog } from "./bench/disclosure-log";
import { measureTogether, round, table } from "./bench/common";
import {
  createDb,
  downloadAppend,
  measureQueries,
  operatorOf,
  progress,
  recipients,
  reviewerQueries,
  sqlOf,
  steadyAppends,
  watchLag,
} from "./bench/scaling-parts";

const { values } = parseArgs({
  options: {
    part: { type: "string", default: "all" },
    entries: { type: "string", default: "10000000" },
    "archive-entries": { type: "string", default: "1000000" },
    "append-rate": { type: "string", default: "50" },
    samples: { type: "string", default: "40" },
    seconds: { type: "string", default: "10" },
    reuse: { type: "boolean", default: false },
    workers: { type: "string", default: String(os.cpus().length) },
    // The catalog the log draws from: the benchmark's million episodes by default; fewer for a quick run.
    "catalog-episodes": { type: "string", default: String(BENCH_SHAPE.episodes) },
  },
});
const parts = values.part === "all" ? ["pooler", "replica", "archive"] : [values.part!];
const number = (name: keyof typeof values) => Number(values[name]);
process.env.DAS_DATA_DIR ??= ".data/bench-scaling";
const runtime = await startEmbeddedDefault({ sharedBuffers: `${Math.floor(os.totalmem() / 4 / 2 ** 20)}MB` });
const ownerUrl = runtime.env.DATABASE_OWNER_URL ?? runtime.env.DATABASE_URL!;
const figures: Record<string, unknown> = {};

/** A database of the benchmark's own holding a generated log of `entries` (reused when --reuse finds it complete). */
async function logDatabase(
  name: string,
  entries: number,
  window?: { startSeconds: number; spanSeconds: number },
  reuse = values.reuse,
) {
  const admin = postgres(ownerUrl, { max: 1, onnotice: () => {} });
  const [found] = await admin<{ complete: boolean }[]>`
    select coalesce(shobj_description(oid, 'pg_database') = 'complete', false) as complete from pg_database where datname = ${name}`;
  const url = new URL(ownerUrl);
  url.pathname = `/${name}`;
  if (!(found?.complete && reuse)) {
    if (found) await admin.unsafe(`drop database ${name} with (force)`);
    await admin.unsafe(`create database ${name}`);
    await migrateDatabase(url.toString());
    const db = createDb(url.toString(), { max: 6 });
    const episodes = number("catalog-episodes");
    const shape = {
      ...BENCH_SHAPE,
      entries,
      episodes,
      versions: Math.min(BENCH_SHAPE.versions, Math.max(2, Math.floor(episodes / 5000))),
    };
    await generateDisclosureLog(sqlOf(db), shape, progress, number("workers"), window);
    await db.$client.end();
    await admin.unsafe(`comment on database ${name} is 'complete'`);
  } else progress(`reusing ${name}`);
  await admin.end();
  return url.toString();
}

async function poolerPart() {
  if (!hasPgBouncer()) throw new Error("the pooler part needs PgBouncer: apt-get install pgbouncer");
  const url = await logDatabase("bench_scaling_pooler", 10_000);
  const u = new URL(url);
  const bouncer = await startPgBouncer(url, {
    users: [{ name: decodeURIComponent(u.username), password: decodeURIComponent(u.password) }],
    poolSize: 10,
    connectQuery:
      "SET statement_timeout = '20s'; SET lock_timeout = '20s'; SET idle_in_transaction_session_timeout = '20s'",
  });
  const direct = createDb(url, { max: 10 });
  // What a transaction-mode pooler makes of the client (nothing prepared), without the pooler: the
  // two apart say how much is the pooler's own hop and how much is planning every statement anew.
  const unprepared = createDb(url, { max: 10, transactionPooler: true });
  const pooled = createDb(bouncer.urlFor(url), { max: 10, transactionPooler: true });
  try {
    const rs = await recipients(sqlOf(direct));
    let n = 0;
    const measured = await measureTogether(
      {
        direct: async () => void (await appendToLog({ db: direct }, downloadAppend(rs[n++ % rs.length]!, n))),
        "direct, nothing prepared": async () =>
          void (await appendToLog({ db: unprepared }, downloadAppend(rs[n++ % rs.length]!, n))),
        "through PgBouncer": async () =>
          void (await appendToLog({ db: pooled }, downloadAppend(rs[n++ % rs.length]!, n))),
      },
      { warmup: 50, samples: 300, concurrency: 16, seconds: number("seconds") },
    );
    const rows = Object.entries(measured).map(([path, m]) => ({
      path,
      "appends/s": Math.round(m.perSecond),
      "p50 ms": m.p50,
      "p99 ms": m.p99,
    }));
    const ratio = measured["through PgBouncer"].perSecond / measured.direct.perSecond;
    const hop = measured["through PgBouncer"].perSecond / measured["direct, nothing prepared"].perSecond;
    console.log(
      `\n## Appends, 16 at a time through the group commit (${await onlineMonths(direct)} months online)\n\n${table(rows)}\n\nthrough PgBouncer / direct: ${(ratio * 100).toFixed(1)} % (target: at least 90 %); through PgBouncer / direct with nothing prepared: ${(hop * 100).toFixed(1)} %`,
    );
    figures.pooler = {
      direct_per_s: Math.round(measured.direct.perSecond),
      unprepared_per_s: Math.round(measured["direct, nothing prepared"].perSecond),
      pgbouncer_per_s: Math.round(measured["through PgBouncer"].perSecond),
      pgbouncer_over_direct: round(ratio),
      pgbouncer_over_unprepared: round(hop),
    };
    // The target as a ratio bench:all records (scripts/bench/ratios.ts).
    figures.pgbouncer_to_direct_ratio = round(ratio);
  } finally {
    await Promise.all([direct.$client.end(), unprepared.$client.end(), pooled.$client.end()]);
    await bouncer.remove();
  }
}

const onlineMonths = async (db: ReturnType<typeof createDb>) =>
  (
    await db.$client<
      { n: number }[]
    >`select count(*)::int as n from pg_inherits where inhparent = 'disclosures'::regclass`
  )[0]!.n;

async function replicaPart() {
  const entries = number("entries");
  const url = await logDatabase(`bench_scaling_review_${entries}`, entries);
  progress("starting a streaming replica of the benchmark's server");
  const replica = await startStreamingReplica(url);
  const primary = createDb(url, { max: 8 });
  const onReplica = createDb(withPort(url, replica.server.port), { max: 4 });
  try {
    await replica.caughtUp(600_000);
    const ctx = operatorOf(primary, onReplica);
    const queries = await reviewerQueries(sqlOf(primary), ctx);
    const appends = steadyAppends(primary, await recipients(sqlOf(primary)), number("append-rate"));
    const lag = watchLag(onReplica);
    const started = Date.now();
    const rows = await measureQueries(queries, number("samples"));
    const appended = await appends.stop();
    const worstLagMs = await lag.stop();
    const rate = appended / ((Date.now() - started) / 1000);
    console.log(
      `\n## Reviewer queries on the replica at ${entries} entries, the primary appending ${rate.toFixed(1)}/s (replica at most ${worstLagMs} ms behind)\n\n${table(rows)}`,
    );
    figures.replica = {
      entries,
      appends_per_s: rate,
      worst_lag_ms: worstLagMs,
      queries: Object.fromEntries(rows.map((r) => [r.query, { p50_ms: r.p50_ms, p99_ms: r.p99_ms }])),
    };
  } finally {
    await Promise.all([primary.$client.end(), onReplica.$client.end()]);
    await replica.remove();
  }
}

/** A month two months back, whole: its entries are generated into it alone. */
function archiveWindow() {
  const now = new Date();
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1));
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return {
    month: monthName(first),
    startSeconds: first.getTime() / 1000 + 3600,
    spanSeconds: (next.getTime() - first.getTime()) / 1000 - 7200,
  };
}

async function archivePart() {
  const entries = number("archive-entries");
  const window = archiveWindow();
  // Never reused: the part closes, archives and appends to its log, and its store is of this run.
  const url = await logDatabase(`bench_scaling_archive_${entries}`, entries, window, false);
  const db = createDb(url, { max: 6 });
  const dir = mkdtempSync(path.join(os.tmpdir(), "das-bench-archive-"));
  const store = await startLocalStore(dir, randomStoreCredentials());
  const keys = generateKeyPairSync("ed25519");
  const archive = {
    store: { client: s3Client(store.location), bucket: store.location.bucket, prefix: "bench-archives/" },
    publicKey: keys.publicKey,
  };
  const ctx = operatorOf(db);
  const walk = async () => {
    const threads = parallelRangeChecker(url);
    const started = Date.now();
    try {
      const report = (await verifyChainDetailed(ctx, { mode: "full", ranges: threads, writeCheckpoint: false })).report;
      return { report, seconds: (Date.now() - started) / 1000 };
    } finally {
      await threads.close();
    }
  };
  const began = Date.now();
  const step = (line: string) => progress(`${((Date.now() - began) / 1000).toFixed(1)} s: ${line}`);
  const timed = async <T>(step: string, work: () => Promise<T>) => {
    progress(step);
    const started = Date.now();
    const result = await work();
    return { result, seconds: (Date.now() - started) / 1000 };
  };
  try {
    // The head in this month, so that the archived one is not the newest.
    await appendToLog({ db }, downloadAppend((await recipients(sqlOf(db)))[0]!, 0));
    const closed = await timed("closing the month", () =>
      closeEndedMonths(ctx, { store: archive.store, signingKey: keys.privateKey }),
    );
    const before = await walk();
    const archived = await timed(`archiving ${window.month}`, () =>
      archiveMonth(ctx, window.month, { ...archive, onStep: step }),
    );
    const between = await walk();
    const restored = await timed(`restoring ${window.month}`, () =>
      restoreMonth(ctx, window.month, { ...archive, onStep: step }),
    );
    const after = await walk();
    const same = JSON.stringify(after.report) === JSON.stringify(before.report);
    const bytes = archived.result.tables.reduce((n, t) => n + t.bytes, 0);
    const rows = [
      {
        step: `close ${window.month} (walk to its end, checkpoint, digest)`,
        seconds: closed.seconds,
        detail: `${closed.result[0]?.entries ?? 0} entries`,
      },
      {
        step: "verify --full, month online",
        seconds: before.seconds,
        detail: JSON.stringify(before.report).slice(0, 60),
      },
      {
        step: "archive (export, put, read back and check, detach, drop)",
        seconds: archived.seconds,
        detail: `${(bytes / 2 ** 20).toFixed(0)} MiB gzipped`,
      },
      { step: "verify --full, month archived", seconds: between.seconds, detail: `count ${between.report.count}` },
      {
        step: "restore (read, check, attach)",
        seconds: restored.seconds,
        detail: `${restored.result.entries} entries`,
      },
      {
        step: "verify --full, month restored",
        seconds: after.seconds,
        detail: same ? "the same as before the archive" : "DIFFERENT",
      },
    ];
    console.log(`\n## One month of ${entries} entries archived and restored\n\n${table(rows)}`);
    figures.archive = {
      entries,
      bytes,
      close_s: closed.seconds,
      verify_online_s: before.seconds,
      archive_s: archived.seconds,
      verify_archived_s: between.seconds,
      restore_s: restored.seconds,
      verify_restored_s: after.seconds,
      same_walk_after_restore: same,
    };
  } finally {
    await db.$client.end();
    await store.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  for (const part of parts) {
    if (part === "pooler") await poolerPart();
    else if (part === "replica") await replicaPart();
    else if (part === "archive") await archivePart();
    else throw new Error(`--part must be all, pooler, replica or archive, not ${part}`);
  }
  console.log(JSON.stringify(figures));
} finally {
  await runtime.stop();
}
process.exit(0);
