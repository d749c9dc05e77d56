// A disclosure log of any size for benchmarks: a catalog (datasets, versions, episodes with their
// contributors), organisations with licences, API keys and portal users, then N entries with a
// valid hash chain, all streamed into PostgreSQL with COPY. The hashes are the product's own
// (lib/disclosures/chain.ts), computed here, so `das-admin disclosures verify --full` passes on it.
import { randomBytes } from "node:crypto";
import type { Writable } from "node:stream";
import type { Sql } from "@/lib/db/client";
import { hashKey } from "@/lib/auth/api-keys";
import { base62, newLogId } from "@/lib/ids";
import { Worker } from "node:worker_threads";
import { canonicalEntry, episodesDigest, GENESIS_HASH, sha256Hex, type ChainedEntry } from "@/lib/disclosures/chain";
import {
  DISCLOSURE_CHANNELS,
  DISCLOSURE_LOG_TABLES,
  type DisclosureChannel,
  type RequestedScope,
} from "@/lib/db/schema";

export type LogShape = {
  entries: number;
  versions: number;
  /** Episode rows over all versions (a version shares the ids of the one before it and adds more). */
  episodes: number;
  contributors: number;
  organizations: number;
  keys: number;
  /** Licensee users per organisation (the portal's recipients). */
  usersPerOrganization: number;
  reviewers: number;
  /** Span of `occurred_at`, ending a day before now. */
  years: number;
  /** One entry in this many is a whole version (thousands of episodes); the rest are small downloads and previews. */
  wholeVersionEvery: number;
  seed: number;
};

/** The benchmark's shape: about 200 versions, 1M episodes, 10,000 contributors, 100 organisations, 1,000 keys. */
export const BENCH_SHAPE: Omit<LogShape, "entries"> = {
  versions: 200,
  episodes: 1_000_000,
  contributors: 10_000,
  organizations: 100,
  keys: 1_000,
  usersPerOrganization: 3,
  reviewers: 5,
  years: 3,
  wholeVersionEvery: 5_000,
  seed: 12,
};

export type GeneratedLog = {
  entries: number;
  disclosedEpisodes: number;
  byChannel: Record<DisclosureChannel, number>;
  reviewerPreviews: number;
  wholeVersionEntries: number;
  /** Entries of 1 to 50 episodes (downloads and previews that are not whole versions). */
  smallEntries: number;
  headHash: string;
  catalogSeconds: number;
  logSeconds: number;
  indexSeconds: number;
};

export type Progress = (line: string) => void;

const TASKS = ["pick", "place", "stack", "pour", "wipe", "open_drawer", "fold", "sort"];
const ENVIRONMENTS = ["kitchen", "lab", "warehouse", "office", "sim"];
const OUTCOMES = ["success", "success", "success", "failure", "partial"];
const STREAMS = ["front", "wrist"];
const URL_TTL_SECONDS = 3600;

/**
 * sfc32: 128 bits of state, so ten million random ids do not collide the way a 32-bit generator's
 * would (its 2^32 sequences meet after about 65,000 draws of whole ids).
 */
function random(seed: number) {
  let a = 0x9e3779b9,
    b = 0x243f6a88,
    c = 0xb7e15162,
    d = seed >>> 0;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 20; i++) next();
  return next;
}

/** A stable number in [0, 1) for an integer: an episode keeps its contributor and facts in every version. */
function unit(n: number): number {
  let h = Math.imul(n ^ 0x5bd1e995, 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
function randomId(prefix: string, next: () => number): string {
  let id = `${prefix}_`;
  for (let i = 0; i < 22; i++) id += BASE62[Math.floor(next() * 62)];
  return id;
}
/** The log's ids as the service makes them (newLogId), from the batch's own random sequence. */
function logId(prefix: "dl" | "pv", madeAt: Date, next: () => number): string {
  return newLogId(
    prefix,
    madeAt.getTime(),
    Uint8Array.from({ length: 10 }, () => Math.floor(next() * 256)),
  );
}
function randomHex(next: () => number, length: number): string {
  let out = "";
  while (out.length < length)
    out += Math.floor(next() * 4294967296)
      .toString(16)
      .padStart(8, "0");
  return out.slice(0, length);
}

/** A field in COPY's text format. */
function field(value: string | number | null): string {
  if (value === null) return "\\N";
  const text = String(value);
  return /[\\\t\n\r]/.test(text)
    ? text.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r")
    : text;
}
const line = (values: (string | number | null)[]) => `${values.map(field).join("\t")}\n`;

/** A COPY … FROM STDIN stream, written in chunks with back-pressure. */
async function copyStream(sql: Sql, table: string, columns: string[]) {
  const writable: Writable = await sql.unsafe(`copy ${table} (${columns.join(", ")}) from stdin`).writable();
  let failure: Error | null = null;
  writable.on("error", (error) => (failure = error));
  const finished = new Promise<void>((resolve, reject) => {
    writable.on("finish", resolve);
    writable.on("close", resolve);
    writable.on("error", reject);
  });
  return {
    async write(chunk: string) {
      if (failure) throw failure;
      if (!writable.write(chunk)) await new Promise<void>((resolve) => writable.once("drain", resolve));
    },
    /** Ends the COPY with an error (CopyFail): nothing of it is kept, and its connection is free again. */
    async abort(error: Error) {
      writable.destroy(error);
      await finished.catch(() => undefined);
    },
    async end() {
      writable.end();
      await finished;
      if (failure) throw failure;
    },
  };
}

export type Version = { id: number; datasetId: string; version: string; episodeCount: number; datasetIndex: number };
export type Organization = {
  id: string;
  licences: { id: string; version: Version }[];
  keys: string[];
  users: string[];
};

const episodeId = (v: Version, index: number) => `${v.datasetId}-${String(index).padStart(7, "0")}`;
const episodeKey = (v: Version, index: number) => v.datasetIndex * 10_000_000 + index;
const contributorOf = (v: Version, index: number, contributors: number) =>
  // Mildly skewed: the busiest contributors recorded a few thousand episodes, most a few dozen.
  `contributor-${String(Math.floor(contributors * unit(episodeKey(v, index)) ** 1.5)).padStart(5, "0")}`;

/**
 * The catalog and the recipients: versions (inserted one by one: their ids are an identity),
 * episodes by COPY, organisations, licences, keys and users by COPY. Returns what the log draws from.
 */
async function generateCatalog(sql: Sql, shape: LogShape, next: () => number, log: Progress) {
  const datasetsCount = Math.max(1, Math.round(shape.versions / 5));
  const weights = Array.from({ length: datasetsCount }, () => 0.2 + next());
  const versionsPer = Array.from(
    { length: datasetsCount },
    (_, d) => Math.floor(shape.versions / datasetsCount) + (d < shape.versions % datasetsCount ? 1 : 0),
  );
  // Version k of a dataset holds (k+1)/n of its largest version: episode rows add up to about `episodes`.
  const share = weights.map((w, d) => w * ((versionsPer[d]! + 1) / 2));
  const total = share.reduce((s, x) => s + x, 0);
  const versions: Version[] = [];
  const released = Date.now() - (shape.years + 1) * 365 * 86_400_000;
  for (let d = 0; d < datasetsCount; d++) {
    const datasetId = `bench-ds-${String(d).padStart(3, "0")}`;
    await sql`insert into datasets (id, title, description) values (${datasetId}, ${`Benchmark dataset ${d}`}, 'Generated for bench:review.') on conflict do nothing`;
    const largest = Math.max(1, Math.round((shape.episodes * weights[d]!) / total));
    for (let k = 0; k < versionsPer[d]!; k++) {
      const episodeCount = Math.max(1, Math.round((largest * (k + 1)) / versionsPer[d]!));
      const outcome: Record<string, number> = {};
      const environment: Record<string, number> = {};
      const pairs: Record<string, number> = {};
      const facts = (i: number) => {
        const u = unit(d * 10_000_000 + i + 7);
        return {
          outcome: OUTCOMES[Math.floor(u * OUTCOMES.length)]!,
          environment: ENVIRONMENTS[Math.floor(((u * 1000) % 1) * ENVIRONMENTS.length)]!,
        };
      };
      for (let i = 0; i < episodeCount; i++) {
        const f = facts(i);
        outcome[f.outcome] = (outcome[f.outcome] ?? 0) + 1;
        environment[f.environment] = (environment[f.environment] ?? 0) + 1;
        const pair = JSON.stringify([f.outcome, f.environment]);
        pairs[pair] = (pairs[pair] ?? 0) + 1;
      }
      const [row] = await sql<{ id: number }[]>`
        insert into dataset_versions (dataset_id, version, major, minor, patch, released_at, episode_count, file_count, total_bytes, streams, facet_counts, content_sha256)
        values (${datasetId}, ${`1.${k}.0`}, 1, ${k}, 0, ${new Date(released + k * 30 * 86_400_000)}, ${episodeCount}, ${episodeCount * STREAMS.length},
          ${episodeCount * 80_000_000}, ${`{${STREAMS.join(",")}}`}::text[], ${JSON.stringify({ outcome, environment, pairs })}::jsonb, ${randomHex(next, 64)})
        returning id`;
      const version: Version = { id: row!.id, datasetId, version: `1.${k}.0`, episodeCount, datasetIndex: d };
      versions.push(version);
      const copy = await copyStream(sql, "episodes", [
        "version_id",
        "episode_id",
        "task",
        "environment",
        "duration_s",
        "outcome",
        "has_recovery",
        "contributor",
        "streams",
      ]);
      let chunk = "";
      for (let i = 0; i < episodeCount; i++) {
        const f = facts(i);
        const u = unit(episodeKey(version, i) + 3);
        chunk += line([
          version.id,
          episodeId(version, i),
          TASKS[Math.floor(u * TASKS.length)]!,
          f.environment,
          (20 + u * 100).toFixed(2),
          f.outcome,
          u < 0.1 ? "t" : "f",
          contributorOf(version, i, shape.contributors),
          `{${STREAMS.join(",")}}`,
        ]);
        if (chunk.length > 1 << 20) {
          await copy.write(chunk);
          chunk = "";
        }
      }
      await copy.write(chunk);
      await copy.end();
    }
    if (d % 10 === 9) log(`catalog: ${versions.length}/${shape.versions} versions`);
  }

  const organizations: Organization[] = [];
  const orgRows: string[] = [];
  const licenceRows: string[] = [];
  const keyRows: string[] = [];
  const userRows: string[] = [];
  for (let o = 0; o < shape.organizations; o++) {
    const id = randomId("org", next);
    orgRows.push(line([id, `bench-org-${String(o).padStart(3, "0")}`, `Benchmark organisation ${o}`]));
    // Each holds licences on a handful to a few dozen versions.
    const count = Math.min(versions.length, 3 + Math.floor(next() * 28));
    const chosen = new Set<number>();
    while (chosen.size < count) chosen.add(Math.floor(next() * versions.length));
    const licences = [...chosen].map((v) => ({ id: randomId("lic", next), version: versions[v]! }));
    for (const l of licences) licenceRows.push(line([l.id, id, l.version.id]));
    const users = Array.from({ length: shape.usersPerOrganization }, (_, u) => {
      const userId = randomId("usr", next);
      userRows.push(line([userId, `licensee-${o}-${u}@bench.example`, "licensee", id]));
      return userId;
    });
    organizations.push({ id, licences, keys: [], users });
  }
  for (let k = 0; k < shape.keys; k++) {
    // Every organisation has a key; the rest go mostly to the busiest organisations.
    const org = organizations[k < organizations.length ? k : Math.floor(organizations.length * next() ** 2)]!;
    const id = randomId("key", next);
    const secret = `das_${base62(randomBytes(32))}`;
    keyRows.push(line([id, org.id, `bench key ${k}`, hashKey(secret), secret.slice(0, 12)]));
    org.keys.push(id);
  }
  const reviewers = Array.from({ length: shape.reviewers }, (_, r) => {
    const userId = randomId("usr", next);
    userRows.push(line([userId, `reviewer-${r}@bench.example`, "reviewer", null]));
    return userId;
  });
  const copies: [string, string[], string[]][] = [
    ["organizations", ["id", "slug", "name"], orgRows],
    ["licences", ["id", "organization_id", "version_id"], licenceRows],
    ["users", ["id", "email", "role", "organization_id"], userRows],
    ["api_keys", ["id", "organization_id", "name", "key_hash", "prefix"], keyRows],
  ];
  for (const [table, columns, rows] of copies) {
    const copy = await copyStream(sql, table, columns);
    await copy.write(rows.join(""));
    await copy.end();
  }
  return { versions, organizations, reviewers };
}

/** Distinct indices in [0, n), the low ones more often: some episodes are popular, most rarely asked for. */
function pickEpisodes(n: number, k: number, next: () => number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < Math.min(k, n)) chosen.add(Math.floor(n * next() ** 2));
  return [...chosen];
}

/** How many episodes a download asks for: mostly one or a few, sometimes a few dozen (at most 50). */
function downloadSize(next: () => number): number {
  const u = next();
  if (u < 0.55) return 1;
  if (u < 0.85) return 2 + Math.floor(next() * 9);
  return Math.min(50, Math.floor(11 * Math.exp(next() * Math.log(50 / 11)) + 0.5));
}

type Definitions = {
  constraints: { table: string; name: string; def: string; type: string }[];
  indexes: { name: string; def: string }[];
  triggers: { table: string; name: string }[];
};

/**
 * Keys, foreign keys and secondary indexes of the log's tables and summaries, dropped for the load and
 * rebuilt after: building an index by sorting once is many times faster than inserting tens of
 * millions of random keys into it, and no per-row foreign-key check runs. Triggers other than the
 * append-only ones (a summary maintained on insert) are disabled for the load; the summaries are
 * rebuilt once at the end instead.
 */
async function logDefinitions(sql: Sql): Promise<Definitions> {
  const constraints = await sql<{ table: string; name: string; def: string; type: string }[]>`
    select conrelid::regclass::text as table, conname as name, pg_get_constraintdef(oid) as def, contype as type
    from pg_constraint
    where (conrelid = any(${DISCLOSURE_LOG_TABLES}::regclass[]) and contype in ('p', 'u', 'f'))
       or (confrelid = any(${DISCLOSURE_LOG_TABLES}::regclass[]) and contype = 'f')`;
  const indexes = await sql<{ name: string; def: string }[]>`
    select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def
    from pg_index i
    where i.indrelid = any(${DISCLOSURE_LOG_TABLES}::regclass[])
      and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`;
  const triggers = await sql<{ table: string; name: string }[]>`
    select t.tgrelid::regclass::text as table, t.tgname as name
    from pg_trigger t join pg_proc p on p.oid = t.tgfoid
    where t.tgrelid = any(${DISCLOSURE_LOG_TABLES}::regclass[]) and not t.tgisinternal
      and p.proname <> 'disclosure_log_append_only'`;
  return { constraints: [...constraints], indexes: [...indexes], triggers: [...triggers] };
}

async function dropForLoad(sql: Sql, d: Definitions) {
  for (const c of d.constraints.filter((c) => c.type === "f"))
    await sql.unsafe(`alter table ${c.table} drop constraint ${c.name}`);
  for (const c of d.constraints.filter((c) => c.type !== "f"))
    await sql.unsafe(`alter table ${c.table} drop constraint ${c.name}`);
  for (const i of d.indexes) await sql.unsafe(`drop index ${i.name}`);
  for (const t of d.triggers) await sql.unsafe(`alter table ${t.table} disable trigger ${t.name}`);
}

async function restoreAfterLoad(sql: Sql, d: Definitions, log: Progress) {
  for (const t of d.triggers) await sql.unsafe(`alter table ${t.table} enable trigger ${t.name}`);
  await sql.unsafe(`set maintenance_work_mem = '512MB'`);
  for (const c of d.constraints.filter((c) => c.type !== "f")) {
    log(`rebuilding ${c.name}`);
    await sql.unsafe(`alter table ${c.table} add constraint ${c.name} ${c.def}`);
  }
  for (const i of d.indexes) {
    log(`rebuilding ${i.name}`);
    // A partitioned table's index is defined "ON ONLY" the parent; built again on the parent, it is
    // built on every month's partition too.
    await sql.unsafe(i.def.replace(" ON ONLY ", " ON "));
  }
  for (const c of d.constraints.filter((c) => c.type === "f")) {
    log(`checking ${c.name}`);
    await sql.unsafe(`alter table ${c.table} add constraint ${c.name} ${c.def}`);
  }
}

const DISCLOSURE_COLUMNS = [
  "id",
  "seq",
  "occurred_at",
  "organization_id",
  "api_key_id",
  "user_id",
  "reviewer_role",
  "channel",
  "dataset_id",
  "version",
  "version_id",
  "licence_id",
  "requested_scope",
  "episode_count",
  "file_count",
  "total_bytes",
  "episodes_sha256",
  "expires_at",
  "request_id",
  "idempotency_scope",
  "idempotency_key",
  "request_sha256",
  "prev_hash",
  "hash",
];

/** What every batch of entries is drawn from; plain data, so worker threads receive a copy. */
export type Plan = {
  shape: LogShape;
  versions: Version[];
  organizations: Organization[];
  reviewers: string[];
  startSeconds: number;
  spanSeconds: number;
};

type Counters = Pick<
  GeneratedLog,
  "disclosedEpisodes" | "byChannel" | "reviewerPreviews" | "wholeVersionEntries" | "smallEntries"
>;

/**
 * A batch of entries with everything but the chain: each `disclosures` row up to its last two
 * columns (prev_hash, hash), its canonical serialisation around where the previous hash goes, and
 * the `disclosure_episodes` rows. Batches are independent (each its own random sequence), so
 * worker threads draw them in parallel; only the chain itself is serial.
 */
export type PlannedBatch = { rows: string[]; before: string[]; after: string[]; episodes: string; counters: Counters };

export const BATCH = 2_000;
// Not hexadecimal, so it cannot occur in a serialised entry other than where the previous hash goes.
const PREV_HASH_SLOT = "~".repeat(64);
const wholeDigests = new Map<number, { digest: string; rows: string }>();

export function planBatch(plan: Plan, batch: number): PlannedBatch {
  const { shape, versions, organizations, reviewers } = plan;
  const next = random(shape.seed ^ Math.imul(batch + 1, 0x9e3779b1));
  const planned: PlannedBatch = {
    rows: [],
    before: [],
    after: [],
    episodes: "",
    counters: {
      disclosedEpisodes: 0,
      byChannel: { api: 0, portal: 0, preview: 0, hub: 0 },
      reviewerPreviews: 0,
      wholeVersionEntries: 0,
      smallEntries: 0,
    },
  };
  const counters = planned.counters;
  const episodeRows: string[] = [];
  for (let i = batch * BATCH; i < Math.min(shape.entries, (batch + 1) * BATCH); i++) {
    const seq = i + 1;
    const occurredAt = new Date((plan.startSeconds + Math.floor((i * plan.spanSeconds) / shape.entries)) * 1000);
    const u = next();
    let channel: DisclosureChannel;
    let organization = null as Organization | null;
    let version: Version;
    let licenceId: string | null = null;
    let apiKeyId: string | null = null;
    let userId: string | null = null;
    let reviewerRole: "reviewer" | null = null;
    let indices: number[] | null;
    let requestedScope: RequestedScope;
    const byLicence = (): [Organization, Version] => {
      const org = organizations[Math.floor(organizations.length * next() ** 2)]!;
      const licence = org.licences[Math.floor(org.licences.length * next() ** 1.5)]!;
      organization = org;
      licenceId = licence.id;
      return [org, licence.version];
    };
    if (u < 0.01) {
      // A reviewer's preview: no organisation, no licence, the role it was made under.
      channel = "preview";
      version = versions[Math.floor(next() * versions.length)]!;
      userId = reviewers[Math.floor(next() * reviewers.length)]!;
      reviewerRole = "reviewer";
      indices = pickEpisodes(version.episodeCount, 1, next);
      requestedScope = { episode_ids: [episodeId(version, indices[0]!)], streams: [...STREAMS] };
      counters.reviewerPreviews++;
    } else if (u < 0.03) {
      channel = "preview";
      const [org, licensed] = byLicence();
      version = licensed;
      userId = org.users[Math.floor(next() * org.users.length)]!;
      indices = pickEpisodes(version.episodeCount, 1, next);
      requestedScope = { episode_ids: [episodeId(version, indices[0]!)], streams: [...STREAMS] };
    } else {
      channel = next() < 0.72 ? "api" : "portal";
      const [org, licensed] = byLicence();
      version = licensed;
      if (channel === "api") apiKeyId = org.keys[Math.floor(next() * org.keys.length)]!;
      else userId = org.users[Math.floor(next() * org.users.length)]!;
      if (next() * shape.wholeVersionEvery < 1) {
        indices = null;
        requestedScope = { include_version_files: true };
      } else {
        indices = pickEpisodes(version.episodeCount, downloadSize(next), next);
        const ids = indices.map((x) => episodeId(version, x)).sort();
        requestedScope = next() < 0.3 ? { episode_ids: ids, streams: [STREAMS[0]!] } : { episode_ids: ids };
      }
    }
    const id = logId(channel === "preview" ? "pv" : "dl", occurredAt, next);
    let digest: string;
    let episodeCount: number;
    if (indices === null) {
      let whole = wholeDigests.get(version.id);
      if (!whole) {
        const ids = Array.from({ length: version.episodeCount }, (_, x) => episodeId(version, x));
        whole = { digest: episodesDigest(ids), rows: ids.map((e) => `\t${version.id}\t${e}\n`).join("") };
        wholeDigests.set(version.id, whole);
      }
      digest = whole.digest;
      episodeCount = version.episodeCount;
      // Each row is "<disclosure id>\t<version id>\t<episode id>\t<occurred_at>\n": the id goes before
      // every tab-led row, the entry's time (its month's partition, migration 0026) after it.
      const at = occurredAt.toISOString();
      episodeRows.push(`${id}${whole.rows.slice(0, -1).replace(/\n/g, `\t${at}\n${id}`)}\t${at}\n`);
      counters.wholeVersionEntries++;
    } else {
      const ids = indices.map((x) => episodeId(version, x));
      digest = episodesDigest(ids);
      episodeCount = ids.length;
      const at = occurredAt.toISOString();
      for (const e of ids) episodeRows.push(`${id}\t${version.id}\t${e}\t${at}\n`);
      counters.smallEntries++;
    }
    counters.byChannel[channel]++;
    counters.disclosedEpisodes += episodeCount;
    const fileCount =
      indices === null
        ? version.episodeCount * STREAMS.length
        : episodeCount * (requestedScope.streams?.length ?? STREAMS.length);
    const entry: ChainedEntry = {
      id,
      seq,
      occurredAt,
      organizationId: organization?.id ?? null,
      apiKeyId,
      userId,
      reviewerRole,
      channel,
      datasetId: version.datasetId,
      version: version.version,
      licenceId,
      requestedScope,
      episodeCount,
      fileCount,
      totalBytes: fileCount * 40_000_000 + Math.floor(next() * 1_000_000),
      episodesSha256: digest,
      expiresAt: new Date(occurredAt.getTime() + URL_TTL_SECONDS * 1000),
      requestId: `req_${randomHex(next, 16)}`,
      prevHash: PREV_HASH_SLOT,
    };
    // The product's own serialisation, cut where the previous entry's hash goes: the serial part
    // of the chain is then one SHA-256 per entry (see chainBatch).
    const parts = canonicalEntry(entry).split(PREV_HASH_SLOT);
    if (parts.length !== 2) throw new Error("the previous hash's place in a serialised entry is not unique");
    planned.before.push(parts[0]!);
    planned.after.push(parts[1]!);
    const row = line([
      id,
      seq,
      occurredAt.toISOString(),
      entry.organizationId,
      apiKeyId,
      userId,
      reviewerRole,
      channel,
      version.datasetId,
      version.version,
      version.id,
      licenceId,
      JSON.stringify(requestedScope),
      episodeCount,
      fileCount,
      entry.totalBytes,
      digest,
      entry.expiresAt.toISOString(),
      entry.requestId,
      null,
      null,
      randomHex(next, 64),
    ]);
    planned.rows.push(row.slice(0, -1));
  }
  planned.episodes = episodeRows.join("");
  return planned;
}

/** Links a planned batch to the chain: each entry's hash is SHA-256 of its serialisation with the previous hash in place (entryHash). */
export function chainBatch(planned: PlannedBatch, prevHash: string): { text: string; head: string } {
  let text = "";
  for (let i = 0; i < planned.rows.length; i++) {
    const hash = sha256Hex(planned.before[i]! + prevHash + planned.after[i]!);
    text += `${planned.rows[i]}\t${prevHash}\t${hash}\n`;
    prevHash = hash;
  }
  return { text, head: prevHash };
}

/** Batches drawn by `workers` threads (none: in this thread), handed out in order. */
function batchSource(plan: Plan, workers: number) {
  if (workers === 0) return { get: async (batch: number) => planBatch(plan, batch), close: async () => {} };
  // A worker starts as plain Node (tsx's --import does not reach it): it registers tsx, then loads the TypeScript.
  // Messages sent meanwhile wait in its port until it listens.
  const url = new URL("./disclosure-log-worker.ts", import.meta.url).href;
  const bootstrap = `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(url)}); })`;
  const threads = Array.from({ length: workers }, () => new Worker(bootstrap, { eval: true, workerData: plan }));
  const waiting = new Map<number, { resolve: (b: PlannedBatch) => void; reject: (e: Error) => void }>();
  let failure: Error | null = null;
  for (const thread of threads) {
    thread.on("message", ({ batch, planned }: { batch: number; planned: PlannedBatch }) => {
      waiting.get(batch)?.resolve(planned);
      waiting.delete(batch);
    });
    thread.on("error", (error) => {
      failure = error;
      for (const w of waiting.values()) w.reject(error);
      waiting.clear();
    });
  }
  const promises = new Map<number, Promise<PlannedBatch>>();
  const total = Math.ceil(plan.shape.entries / BATCH);
  let dispatched = 0;
  const dispatch = () => {
    while (dispatched < total && promises.size < workers * 3) {
      const batch = dispatched++;
      const promise = new Promise<PlannedBatch>((resolve, reject) =>
        failure ? reject(failure) : waiting.set(batch, { resolve, reject }),
      );
      promise.catch(() => {}); // awaited in order by get(); a failure is reported there
      promises.set(batch, promise);
      threads[batch % workers]!.postMessage(batch);
    }
  };
  return {
    get: async (batch: number) => {
      dispatch();
      const planned = await promises.get(batch)!;
      promises.delete(batch);
      dispatch();
      return planned;
    },
    close: async () => {
      await Promise.all(threads.map((t) => t.terminate()));
    },
  };
}

/**
 * Generates the catalog and a log of `shape.entries` entries into an empty log. `sql` needs a pool
 * of at least 3 connections (two COPY streams at once). Refuses a database whose log is not empty.
 * `workers`: threads drawing entries besides this one (0 in tests, which run TypeScript through Vite).
 */
export async function generateDisclosureLog(
  sql: Sql,
  shape: LogShape,
  log: Progress = () => {},
  workers = 0,
  /** When the entries are (seconds since the epoch); default `shape.years` ending a day before now. */
  window?: { startSeconds: number; spanSeconds: number },
): Promise<GeneratedLog> {
  const [log0] = await sql<{ present: boolean }[]>`select exists (select 1 from disclosures) as present`;
  if (log0!.present)
    throw new Error("the disclosure log of this database is not empty: generate into a fresh database");
  const next = random(shape.seed);
  let started = Date.now();
  const { versions, organizations, reviewers } = await generateCatalog(sql, shape, next, log);
  await sql`analyze`;
  const catalogSeconds = (Date.now() - started) / 1000;
  log(
    `catalog in ${catalogSeconds.toFixed(1)} s: ${versions.length} versions, ${versions.reduce((s, v) => s + v.episodeCount, 0)} episodes`,
  );

  const definitions = await logDefinitions(sql);
  await dropForLoad(sql, definitions);
  started = Date.now();
  const result: GeneratedLog = {
    entries: shape.entries,
    disclosedEpisodes: 0,
    byChannel: { api: 0, portal: 0, preview: 0, hub: 0 },
    reviewerPreviews: 0,
    wholeVersionEntries: 0,
    smallEntries: 0,
    headHash: GENESIS_HASH,
    catalogSeconds,
    logSeconds: 0,
    indexSeconds: 0,
  };
  const spanSeconds = window?.spanSeconds ?? shape.years * 365 * 86_400;
  const plan: Plan = {
    shape,
    versions,
    organizations,
    reviewers,
    spanSeconds,
    startSeconds: window?.startSeconds ?? Math.floor(Date.now() / 1000) - spanSeconds - 86_400,
  };
  const source = batchSource(plan, workers);
  // Every month of the span has its partition (migration 0026): made here as the migrations make them.
  await sql`select das_create_disclosure_months(to_timestamp(${plan.startSeconds})::date, (now() + interval '3 months')::date)`;
  const disclosuresCopy = await copyStream(sql, "disclosures", DISCLOSURE_COLUMNS);
  const episodesCopy = await copyStream(sql, "disclosure_episodes", [
    "disclosure_id",
    "version_id",
    "episode_id",
    "occurred_at",
  ]);
  try {
    let prevHash = GENESIS_HASH;
    const total = Math.ceil(shape.entries / BATCH);
    for (let batch = 0; batch < total; batch++) {
      const planned = await source.get(batch);
      const chained = chainBatch(planned, prevHash);
      prevHash = chained.head;
      const c = planned.counters;
      result.disclosedEpisodes += c.disclosedEpisodes;
      result.reviewerPreviews += c.reviewerPreviews;
      result.wholeVersionEntries += c.wholeVersionEntries;
      result.smallEntries += c.smallEntries;
      for (const channel of DISCLOSURE_CHANNELS) result.byChannel[channel] += c.byChannel[channel];
      await Promise.all([disclosuresCopy.write(chained.text), episodesCopy.write(planned.episodes)]);
      const done = Math.min(shape.entries, (batch + 1) * BATCH);
      if (done % 100_000 === 0) {
        log(
          `log: ${done}/${shape.entries} entries, ${result.disclosedEpisodes} episodes, ${Math.round(done / ((Date.now() - started) / 1000))} entries/s`,
        );
      }
    }
    await Promise.all([disclosuresCopy.end(), episodesCopy.end()]);
    result.headHash = prevHash;
  } catch (error) {
    // Both COPYs fail as a whole, releasing their locks, so that the keys can be put back.
    await Promise.all([disclosuresCopy.abort(error as Error), episodesCopy.abort(error as Error)]);
    throw error;
  } finally {
    await source.close();
    result.logSeconds = (Date.now() - started) / 1000;
    started = Date.now();
    // appendDisclosure fills the summaries with each entry; a bulk load bypasses it, so they are
    // filled here by the migrations' own functions, while the summaries' indexes are still dropped.
    log("counting each entry's contributors");
    await sql`select das_count_disclosure_contributors()`;
    log("indexing each disclosed episode's entry");
    await sql`select das_index_disclosure_episodes()`;
    await restoreAfterLoad(sql, definitions, log);
  }
  const [summaries] = await sql<
    { rebuild: string | null }[]
  >`select to_regproc('das_rebuild_disclosure_summaries')::text as rebuild`;
  if (summaries!.rebuild) {
    log("rebuilding the overview's summaries");
    await sql`select das_rebuild_disclosure_summaries()`;
  }
  // VACUUM, as autovacuum does to a table that only grows: index-only walks need the visibility map.
  await sql`vacuum analyze`;
  result.indexSeconds = (Date.now() - started) / 1000;
  log(
    `log in ${result.logSeconds.toFixed(1)} s (${Math.round(shape.entries / result.logSeconds)} entries/s), indexes in ${result.indexSeconds.toFixed(1)} s`,
  );
  return result;
}
