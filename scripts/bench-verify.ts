// npm run bench:verify -- --entries 1000000
// The disclosure log's verification at scale: builds a log of N entries with a valid chain (bulk
// COPY, hashes computed here) in a database of its own on the embedded server, then measures a full
// walk (entries/s, peak RSS), an incremental verification after 1,000 new entries, and one with
// nothing new (what the reviewer banner costs). Prints a table, then one JSON line (the last line).
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startEmbeddedDefault } from "@/lib/dev/embedded-default";

const { values } = parseArgs({ options: { entries: { type: "string", default: "200000" }, keep: { type: "boolean", default: false } } });
const ENTRIES = Number(values.entries);
const NEW_ENTRIES = 1000;

process.env.DAS_DATA_DIR ??= ".data/bench";
const runtime = await startEmbeddedDefault();
Object.assign(process.env, runtime.env);
const { migrateDatabase } = await import("@/lib/db/migrate");
const { createDb } = await import("@/lib/db/client");
const { entryHash, episodesDigest, GENESIS_HASH, sha256Hex } = await import("@/lib/disclosures/chain");
const { verifyChainDetailed } = await import("@/lib/disclosures/verify");
const { createOrganization } = await import("@/lib/admin/organizations");
const { issueKey } = await import("@/lib/admin/keys");
const { grantLicence } = await import("@/lib/admin/licences");
const { progress } = await import("./bench/common");

// A database of the run's own, dropped afterwards (unless --keep).
const name = `das_bench_verify_${Date.now()}_${randomBytes(3).toString("hex")}`;
const admin = postgres(runtime.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const url = new URL(runtime.env.DATABASE_URL!);
url.pathname = `/${name}`;
await migrateDatabase(url.toString());
const db = createDb(url.toString(), { max: 4 });
const sql = db.$client;
const operator = { db, requestId: "bench", principal: { kind: "operator" as const, name: userInfo().username, organizationId: null } };

try {
  // One dataset version (the entries' episodes need not exist in it: verification reads only the log).
  const datasetId = "bench-verify";
  await sql`insert into datasets (id, title, description) values (${datasetId}, 'Verify benchmark', '')`;
  const [version] = await sql<{ id: number }[]>`
    insert into dataset_versions (dataset_id, version, major, minor, patch, released_at, episode_count, file_count, total_bytes, streams, facet_counts, content_sha256)
    values (${datasetId}, '1.0.0', 1, 0, 0, now(), 0, 0, 0, '{}', '{}'::jsonb, ${"0".repeat(64)}) returning id`;
  const org = await createOrganization(operator, { slug: "bench-verify" });
  const licence = await grantLicence(operator, { organizationId: org.id, datasetId, version: "1.0.0" });
  await issueKey(operator, { organizationId: org.id, name: "bench" });
  const [keyRow] = await sql<{ id: string }[]>`select id from api_keys where organization_id = ${org.id} limit 1`;

  let prevHash = GENESIS_HASH;
  let episodeRows = 0;
  const start = Date.parse("2025-01-01T00:00:00Z");
  /** Entries seq from..to: most 1–50 episodes, one in fifty a whole version of 500. */
  async function append(from: number, to: number) {
    const entries: string[] = [];
    const episodes: string[] = [];
    const flush = async () => {
      await pipeline(Readable.from(entries.splice(0)), await sql.unsafe(`copy disclosures (id, seq, occurred_at, organization_id, api_key_id, user_id, reviewer_role, channel, dataset_id, version, version_id, licence_id, requested_scope, episode_count, file_count, total_bytes, episodes_sha256, expires_at, request_id, idempotency_scope, idempotency_key, request_sha256, prev_hash, hash) from stdin`).writable());
      await pipeline(Readable.from(episodes.splice(0)), await sql.unsafe(`copy disclosure_episodes (disclosure_id, version_id, episode_id) from stdin`).writable());
    };
    for (let seq = from; seq <= to; seq++) {
      const whole = seq % 50 === 0;
      const count = whole ? 500 : 1 + ((seq * 7919) % 50);
      const first = (seq * 104729) % 100_000;
      const ids = Array.from({ length: count }, (_, i) => `ep-${String((first + i) % 100_000).padStart(6, "0")}`);
      const occurredAt = new Date(start + seq * 1000);
      const entry = {
        id: `dl_bench${seq}`,
        seq,
        occurredAt,
        organizationId: org.id,
        apiKeyId: keyRow!.id,
        userId: null,
        reviewerRole: null,
        channel: "api" as const,
        datasetId,
        version: "1.0.0",
        licenceId: licence.id,
        requestedScope: whole ? {} : { episode_ids: ids },
        episodeCount: count,
        fileCount: count * 2,
        totalBytes: count * 2_000_000,
        episodesSha256: episodesDigest(ids),
        expiresAt: new Date(occurredAt.getTime() + 900_000),
        requestId: `req_${seq}`,
        prevHash,
      };
      const hash = entryHash(entry);
      entries.push(
        [entry.id, seq, occurredAt.toISOString(), org.id, keyRow!.id, "\\N", "\\N", "api", datasetId, "1.0.0", version!.id, licence.id, JSON.stringify(entry.requestedScope), count, count * 2, count * 2_000_000, entry.episodesSha256, entry.expiresAt.toISOString(), entry.requestId, "\\N", "\\N", sha256Hex(entry.id), prevHash, hash].join("\t") + "\n",
      );
      for (const id of ids) episodes.push(`${entry.id}\t${version!.id}\t${id}\n`);
      episodeRows += count;
      prevHash = hash;
      if (entries.length >= 20_000) await flush();
      if (seq % 100_000 === 0) progress(`built ${seq.toLocaleString("en")} entries`);
    }
    await flush();
  }

  const built = performance.now();
  await append(1, ENTRIES);
  await sql`vacuum analyze disclosures`;
  await sql`vacuum analyze disclosure_episodes`;
  const [{ bytes }] = (await sql<{ bytes: string }[]>`select pg_database_size(current_database()) as bytes`) as unknown as [{ bytes: string }];
  progress(`built ${ENTRIES.toLocaleString("en")} entries, ${episodeRows.toLocaleString("en")} episode rows in ${((performance.now() - built) / 1000).toFixed(0)} s; database ${(Number(bytes) / 2 ** 30).toFixed(2)} GiB`);

  // A full walk from the genesis, with its peak RSS.
  let peakRss = process.memoryUsage().rss;
  const watch = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  const rssBefore = process.memoryUsage().rss;
  const fullStarted = performance.now();
  const cpuBefore = process.cpuUsage();
  const full = await verifyChainDetailed(operator, {
    mode: "full",
    onProgress: (p) => {
      if (p.entriesDone % 500_000 < 5000) progress(`full walk: ${p.entriesDone.toLocaleString("en")} entries, ${p.entriesPerSecond.toLocaleString("en")} entries/s`);
    },
  });
  const fullMs = performance.now() - fullStarted;
  const cpu = process.cpuUsage(cpuBefore);
  // How busy this process was (parsing rows, hashing): near 1 means the walk waits on itself, well below on the database.
  const nodeBusy = (cpu.user + cpu.system) / 1000 / fullMs;
  clearInterval(watch);
  if (!full.report.intact) throw new Error(`the generated chain does not verify: ${full.report.reason} at ${full.report.firstBadSeq}`);
  const fullRate = ENTRIES / (fullMs / 1000);

  // 1,000 new entries, then the incremental verification that checks only them; then one with nothing new.
  await append(ENTRIES + 1, ENTRIES + NEW_ENTRIES);
  const incStarted = performance.now();
  const incremental = await verifyChainDetailed(operator, { mode: "incremental" });
  const incrementalMs = performance.now() - incStarted;
  if (!incremental.report.intact || incremental.entriesChecked !== NEW_ENTRIES) throw new Error("the incremental verification did not check exactly the new entries");
  const idleStarted = performance.now();
  await verifyChainDetailed(operator, { mode: "incremental" });
  const idleMs = performance.now() - idleStarted;

  const rows: [string, string][] = [
    ["entries", ENTRIES.toLocaleString("en")],
    ["disclosed episode rows", episodeRows.toLocaleString("en")],
    ["full verify", `${Math.round(fullRate).toLocaleString("en")} entries/s (${(fullMs / 1000).toFixed(1)} s)`],
    ["full verify: this process busy", `${(nodeBusy * 100).toFixed(0)} % of the walk (the rest waiting on PostgreSQL)`],
    ["full verify peak RSS", `${((peakRss - 0) / 2 ** 20).toFixed(0)} MiB (${(rssBefore / 2 ** 20).toFixed(0)} MiB before)`],
    [`incremental verify, ${NEW_ENTRIES} new`, `${incrementalMs.toFixed(0)} ms`],
    ["incremental verify, nothing new", `${idleMs.toFixed(0)} ms`],
  ];
  for (const [label, value] of rows) process.stdout.write(`${label.padEnd(36)} ${value}\n`);
  process.stdout.write(
    `${JSON.stringify({
      entries: ENTRIES,
      episode_rows: episodeRows,
      full_verify_entries_per_s: Math.round(fullRate),
      full_verify_peak_rss_mib: Math.round(peakRss / 2 ** 20),
      full_verify_node_busy: Number(nodeBusy.toFixed(2)),
      incremental_verify_ms: Math.round(incrementalMs),
      incremental_verify_nothing_new_ms: Math.round(idleMs),
    })}\n`,
  );
} finally {
  await db.$client.end({ timeout: 5 });
  if (!values.keep) await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
  await runtime.stop();
}
