import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Ctx } from "@/lib/context";
import { getDb, sqlOf, type Db, type Sql } from "@/lib/db/client";
import type { UserPrincipal } from "@/lib/auth/principal";
import type { EpisodeLine } from "@/lib/catalog/import/records";
import { createOrganization, type Organization } from "@/lib/admin/organizations";
import { grantLicence } from "@/lib/admin/licences";
import { canonicalEntryAsObject } from "@/lib/testing/chain-oracle";
import {
  canonicalEntry,
  entryHash,
  episodesDigest,
  GENESIS_HASH,
  sha256Hex,
  type ChainedEntry,
} from "@/lib/disclosures/chain";
import { canonicalJson } from "@/lib/canonical-json";
import { csvLine } from "@/lib/csv";
import { appendDisclosure } from "@/lib/disclosures/append";
import { withdrawnMeanwhile } from "@/lib/catalog/withdrawn";
import { verifyChain, type ChainReport } from "@/lib/disclosures/verify";
import { exportDisclosures } from "@/lib/disclosures/export";
import type { DisclosureFilter } from "@/lib/disclosures/filter";
import { recipientsOfContributor as recipientsPage } from "@/lib/disclosures/recipients-of-contributor";
import {
  createTestOrg,
  grant,
  operatorCtx,
  operatorOn,
  randomEpisodes,
  uniqueId,
  byteOrder,
} from "@/lib/testing/fixtures";
import { createIsolatedDb, withTriggersDisabled, type IsolatedDb } from "@/lib/testing/isolated-db";
import {
  at,
  buildWorld,
  catalogOf,
  contributedEpisodes,
  downloadPlan,
  expectedChain,
  expectedEntry,
  expectedEpisodes,
  expectedFiles,
  exportOracle,
  importWithFiles,
  keyPrincipal,
  licenceOf,
  makeDownload,
  makeSequentially,
  parseCsv,
  allRecipientsOfContributor,
  userPrincipal,
  type Made,
  type World,
} from "@/lib/testing/disclosure-fixtures";

const refusal = (op: "UPDATE" | "DELETE" | "TRUNCATE", table: string) =>
  `the disclosure log is append-only: ${op} on ${table} is refused`;

/** Every line of an export, joined; read 500 entries a query, so that a thousand entries are more than one batch (and exactly two). */
async function exportText(db: Db, filter: DisclosureFilter, format: "csv" | "jsonl", batchSize = 500): Promise<string> {
  let text = "";
  for await (const line of exportDisclosures(operatorOn(db), filter, format, { batchSize })) text += line;
  return text;
}

type DisclosureRow = {
  id: string;
  seq: string;
  occurred_at: Date;
  organization_id: string;
  api_key_id: string | null;
  user_id: string | null;
  reviewer_role: "reviewer" | "admin" | null;
  channel: "api" | "portal" | "preview";
  dataset_id: string;
  version: string;
  version_id: number;
  licence_id: string;
  names_terms: boolean;
  terms_sha256: string | null;
  requested_scope: ChainedEntry["requestedScope"];
  episode_count: number;
  file_count: number;
  total_bytes: string;
  episodes_sha256: string;
  expires_at: Date;
  request_id: string;
  prev_hash: string;
  hash: string;
};
const chainRows = (sql: Sql) => sql<DisclosureRow[]>`select * from disclosures order by seq`;

// ---------------------------------------------------------------------------------------------
// Append-only, on a database of its own: a TRUNCATE takes whole-table locks, and on the run's
// shared database a suite appending at that moment could deadlock with it. Each attempt runs in a
// transaction that is rolled back whatever happens, so a missing trigger makes the test fail
// without wiping the log.
// ---------------------------------------------------------------------------------------------

describe("the disclosure log is append-only (database triggers)", () => {
  let w: World;
  const sql = () => w.iso.sql;
  let made: Made;

  /** Runs one statement in a transaction that can never commit; resolves to the statement's error. */
  async function attempt(statement: (tx: Sql) => Promise<unknown>): Promise<{ code?: string; message: string }> {
    const sentinel = new Error("the statement succeeded");
    try {
      await sql().begin(async (tx) => {
        await statement(tx as unknown as Sql);
        throw sentinel;
      });
    } catch (error) {
      return error as { code?: string; message: string };
    }
    throw new Error("unreachable");
  }

  const snapshot = async (id: string) => ({
    entry: await sql()`select * from disclosures where id = ${id}`,
    episodes: await sql()`select * from disclosure_episodes where disclosure_id = ${id} order by episode_id`,
  });

  beforeAll(async () => {
    w = await buildWorld("append_only");
    // An entry of three resolved episodes, by a key of the organisation licensed to dsB@1.0.0.
    const episodes = w.catalog
      .get(`${w.dsB}@1.0.0`)!
      .slice(0, 3)
      .map((e) => e.episode_id);
    made = await makeDownload(w.iso.db, w.keys1[0], { dataset_id: w.dsB, version: "1.0.0", episode_ids: episodes });
  });

  afterAll(async () => {
    await w?.iso.drop();
  });

  it("refuses UPDATE and DELETE of an entry, leaving it as it was", async () => {
    const id = made.download.download_id;
    const before = await snapshot(id);
    expect(before.entry).toHaveLength(1);
    const update = await attempt((tx) => tx`update disclosures set total_bytes = total_bytes + 1 where id = ${id}`);
    const updateHash = await attempt(
      (tx) => tx`update disclosures set hash = ${"f".repeat(64)}, prev_hash = ${"e".repeat(64)} where id = ${id}`,
    );
    const remove = await attempt((tx) => tx`delete from disclosures where id = ${id}`);
    expect(update).toMatchObject({ code: "P0001", message: refusal("UPDATE", "disclosures") });
    expect(updateHash).toMatchObject({ code: "P0001", message: refusal("UPDATE", "disclosures") });
    expect(remove).toMatchObject({ code: "P0001", message: refusal("DELETE", "disclosures") });
    expect(await snapshot(id)).toEqual(before);
  });

  it("refuses UPDATE and DELETE of an entry's resolved episodes", async () => {
    const id = made.download.download_id;
    const before = await snapshot(id);
    expect(before.episodes).toHaveLength(3);
    const update = await attempt(
      (tx) => tx`update disclosure_episodes set episode_id = ${"forged"} where disclosure_id = ${id}`,
    );
    const remove = await attempt((tx) => tx`delete from disclosure_episodes where disclosure_id = ${id}`);
    expect(update).toMatchObject({ code: "P0001", message: refusal("UPDATE", "disclosure_episodes") });
    expect(remove).toMatchObject({ code: "P0001", message: refusal("DELETE", "disclosure_episodes") });
    expect(await snapshot(id)).toEqual(before);
  });

  it("refuses UPDATE, DELETE and TRUNCATE of the summaries derived from an entry", async () => {
    const id = made.download.download_id;
    const [entry] = await sql()<{ seq: string }[]>`select seq from disclosures where id = ${id}`;
    const summaries = async () => ({
      contributors: await sql()`select * from disclosure_contributors where disclosure_id = ${id} order by contributor`,
      episodes: await sql()`select * from disclosure_episode_entries where seq = ${entry!.seq} order by episode_id`,
    });
    const before = await summaries();
    expect(before.contributors.length).toBeGreaterThan(0);
    expect(before.episodes).toHaveLength(3);
    for (const [table, key, value] of [
      ["disclosure_contributors", "disclosure_id", id],
      ["disclosure_episode_entries", "seq", entry!.seq],
    ] as const) {
      const update = await attempt(
        (tx) => tx`update ${tx(table)} set channel = ${"portal"} where ${tx(key)} = ${value}`,
      );
      const remove = await attempt((tx) => tx`delete from ${tx(table)} where ${tx(key)} = ${value}`);
      const truncate = await attempt((tx) => tx`truncate ${tx(table)}`);
      expect(update).toMatchObject({ code: "P0001", message: refusal("UPDATE", table) });
      expect(remove).toMatchObject({ code: "P0001", message: refusal("DELETE", table) });
      expect(truncate).toMatchObject({ code: "P0001", message: refusal("TRUNCATE", table) });
    }
    expect(await summaries()).toEqual(before);
  });

  it("refuses TRUNCATE of either table", async () => {
    const id = made.download.download_id;
    const before = await snapshot(id);
    const episodes = await attempt((tx) => tx`truncate disclosure_episodes`);
    const entries = await attempt((tx) => tx`truncate disclosures`);
    const both = await attempt((tx) => tx`truncate disclosures, disclosure_episodes`);
    expect(episodes).toMatchObject({ code: "P0001", message: refusal("TRUNCATE", "disclosure_episodes") });
    expect(entries).toMatchObject({ code: "P0001", message: refusal("TRUNCATE", "disclosures") });
    expect(both).toMatchObject({
      code: "P0001",
      message: expect.stringMatching(
        /^the disclosure log is append-only: TRUNCATE on disclosure(s|_episodes) is refused$/,
      ),
    });
    expect(await snapshot(id)).toEqual(before);
  });
});

// ---------------------------------------------------------------------------------------------
// The canonical form: pure, no database.
// ---------------------------------------------------------------------------------------------

const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
const time = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2040, 0, 1) }).map((ms) => new Date(ms));
const scopeArb = fc.record(
  {
    episode_ids: fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }),
    filter: fc.record(
      { outcome: fc.string({ minLength: 1, maxLength: 8 }), environment: fc.string({ minLength: 1, maxLength: 8 }) },
      { requiredKeys: [] },
    ),
    streams: fc.array(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 }),
  },
  { requiredKeys: [] },
);
const entryArb: fc.Arbitrary<ChainedEntry> = fc.record({
  id: fc.string({ minLength: 1, maxLength: 20 }),
  seq: fc.integer({ min: 1, max: 2 ** 40 }),
  occurredAt: time,
  organizationId: fc.option(fc.string({ minLength: 1, maxLength: 20 })),
  apiKeyId: fc.option(fc.string({ minLength: 1, maxLength: 20 })),
  userId: fc.option(fc.string({ minLength: 1, maxLength: 20 })),
  reviewerRole: fc.option(fc.constantFrom("reviewer" as const, "admin" as const)),
  channel: fc.constantFrom("api" as const, "portal" as const, "preview" as const),
  datasetId: fc.string({ minLength: 1, maxLength: 20 }),
  version: fc.string({ minLength: 1, maxLength: 12 }),
  licenceId: fc.option(fc.string({ minLength: 1, maxLength: 20 })),
  requestedScope: scopeArb,
  episodeCount: fc.nat(),
  fileCount: fc.nat(),
  totalBytes: fc.nat({ max: Number.MAX_SAFE_INTEGER - 1 }),
  episodesSha256: hex64,
  expiresAt: time,
  requestId: fc.string({ minLength: 1, maxLength: 20 }),
  prevHash: hex64,
});

/** The same object with its keys (and its scope's keys) in reverse insertion order. */
function reversedKeys<T extends object>(value: T): T {
  if (Array.isArray(value) || value instanceof Date || value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, v !== null && typeof v === "object" ? reversedKeys(v) : v]),
  ) as T;
}

/** A different value for one field, of the right type. */
function altered(e: ChainedEntry, field: keyof ChainedEntry): ChainedEntry {
  const v = e[field];
  const changed = ((): unknown => {
    if (v instanceof Date) return new Date(v.getTime() + 1);
    if (typeof v === "number") return v + 1;
    if (field === "channel") return v === "api" ? "portal" : "api";
    if (field === "reviewerRole") return v === null ? "reviewer" : v === "reviewer" ? "admin" : null;
    if (field === "apiKeyId" || field === "userId" || field === "organizationId" || field === "licenceId")
      return v === null ? "x" : null;
    if (field === "prevHash" || field === "episodesSha256")
      return (v as string).replace(/^./, (c) => (c === "0" ? "1" : "0"));
    if (field === "requestedScope") {
      const scope = e.requestedScope;
      return scope.streams ? { ...scope, streams: [...scope.streams, "extra"] } : { ...scope, streams: ["extra"] };
    }
    return `${v as string}x`;
  })();
  return { ...e, [field]: changed };
}

const FIELDS: (keyof ChainedEntry)[] = [
  "id",
  "seq",
  "occurredAt",
  "organizationId",
  "apiKeyId",
  "userId",
  "reviewerRole",
  "channel",
  "datasetId",
  "version",
  "licenceId",
  "requestedScope",
  "episodeCount",
  "fileCount",
  "totalBytes",
  "episodesSha256",
  "expiresAt",
  "requestId",
  "prevHash",
];

describe("canonicalEntry and entryHash", () => {
  it("do not depend on the order of keys, in the entry or in its scope", () => {
    fc.assert(
      fc.property(entryArb, (e) => {
        expect(canonicalEntry(reversedKeys(e))).toBe(canonicalEntry(e));
        expect(entryHash(reversedKeys(e))).toBe(entryHash(e));
        expect(entryHash(e)).toMatch(/^[0-9a-f]{64}$/);
      }),
    );
  });

  it("change when any asserted field changes", () => {
    fc.assert(
      fc.property(entryArb, fc.constantFrom(...FIELDS), (e, field) => {
        const other = altered(e, field);
        expect(other[field]).not.toEqual(e[field]);
        expect(canonicalEntry(other)).not.toBe(canonicalEntry(e));
        expect(entryHash(other)).not.toBe(entryHash(e));
      }),
      { numRuns: 500 },
    );
  });

  it("tell apart the same value in different recipient fields, and requested scopes of different shape", () => {
    fc.assert(
      fc.property(entryArb, fc.string({ minLength: 1, maxLength: 10 }), (e, who) => {
        const asKey = { ...e, apiKeyId: who, userId: null };
        const asUser = { ...e, apiKeyId: null, userId: who };
        expect(entryHash(asKey)).not.toBe(entryHash(asUser));
        const byEpisodes = { ...e, requestedScope: { episode_ids: [who] } };
        const byStreams = { ...e, requestedScope: { streams: [who] } };
        expect(entryHash(byEpisodes)).not.toBe(entryHash(byStreams));
      }),
    );
  });

  it("serialise an entry made under a licence exactly as version 1 always did, so existing entries verify as before", () => {
    fc.assert(
      fc.property(entryArb, (e) => {
        const licensed = { ...e, reviewerRole: null };
        expect(canonicalEntry(licensed)).toBe(canonicalEntryAsObject(licensed));
        expect(JSON.parse(canonicalEntry(licensed))).toMatchObject({ v: 1 });
        // A reviewer's preview is version 2 and names the role it was made under.
        const reviewed = {
          ...e,
          reviewerRole: "reviewer" as const,
          organizationId: null,
          licenceId: null,
          channel: "preview" as const,
        };
        expect(canonicalEntry(reviewed)).toBe(canonicalEntryAsObject(reviewed));
        expect(JSON.parse(canonicalEntry(reviewed))).toMatchObject({
          v: 2,
          recipient: { reviewer_role: "reviewer", organization_id: null },
          licence_id: null,
        });
      }),
    );
  });

  it("covers the whole episode list through episodesDigest, independent of its order", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[A-Za-z0-9._:~-]{1,12}$/), { minLength: 2, maxLength: 20 }),
        (ids) => {
          expect(episodesDigest([...ids].reverse())).toBe(episodesDigest(ids));
          expect(episodesDigest(ids.slice(1))).not.toBe(episodesDigest(ids));
          expect(episodesDigest([...ids, `${ids[0]}x`])).not.toBe(episodesDigest(ids));
        },
      ),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Chain semantics and tamper detection.
// ---------------------------------------------------------------------------------------------

describe("the hash chain (database of its own)", () => {
  let w: World;
  let made: Made[];
  let rows: DisclosureRow[];
  let started: number;
  let finished: number;

  beforeAll(async () => {
    w = await buildWorld("chain");
    const plan = downloadPlan(w);
    started = Date.now();
    made = await makeSequentially(w, plan.slice(0, 3));
    // A second later on the log's clock, so that occurred_at visibly moves on along the chain.
    made.push(...(await makeSequentially(w, plan.slice(3), { clockAhead: 1 })));
    finished = Date.now();
    rows = await chainRows(w.iso.sql);
  });

  afterAll(async () => {
    await w?.iso.drop();
  });

  it("numbers entries 1..N and links each to the previous one's hash, from the genesis hash", () => {
    expect(rows.map((r) => Number(r.seq))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rows.map((r) => r.id)).toEqual(made.map((m) => m.download.download_id));
    expect(rows[0]!.prev_hash).toBe(GENESIS_HASH);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.hash);
    expect(new Set(rows.map((r) => r.hash)).size).toBe(rows.length);
  });

  it("times entries by the database clock in whole seconds, never backwards, expiring 900 s later", () => {
    for (const [i, r] of rows.entries()) {
      expect(r.occurred_at.getUTCMilliseconds()).toBe(0);
      expect(r.occurred_at.getTime()).toBeGreaterThanOrEqual(Math.floor(started / 1000) * 1000 - 1000);
      expect(r.occurred_at.getTime()).toBeLessThanOrEqual(finished + 1000);
      expect(r.expires_at.getTime() - r.occurred_at.getTime()).toBe(900_000);
      expect(r.occurred_at).toEqual(made[i]!.occurredAt);
      if (i > 0) expect(r.occurred_at.getTime()).toBeGreaterThanOrEqual(rows[i - 1]!.occurred_at.getTime());
    }
    // Across the clock's step the time moved on.
    expect(rows[3]!.occurred_at.getTime()).toBeGreaterThan(rows[2]!.occurred_at.getTime());
  });

  it("stores exactly what was disclosed, and each stored hash is the hash of that entry", async () => {
    const expected = expectedChain(made, catalogOf(w), licenceOf(w));
    for (const [i, r] of rows.entries()) {
      const e = expected[i]!;
      expect(r).toMatchObject({
        id: e.id,
        organization_id: e.organizationId,
        api_key_id: e.apiKeyId,
        user_id: e.userId,
        channel: e.channel,
        dataset_id: e.datasetId,
        version: e.version,
        licence_id: e.licenceId,
        requested_scope: e.requestedScope,
        episode_count: e.episodeCount,
        file_count: e.fileCount,
        total_bytes: String(e.totalBytes),
        episodes_sha256: e.episodesSha256,
        request_id: e.requestId,
        prev_hash: e.prevHash,
      });
      expect(r.hash).toBe(e.hash);
      const episodes = await w.iso.sql<{ episode_id: string }[]>`
        select de.episode_id from disclosure_episodes de join dataset_versions v on v.id = de.version_id
        where de.disclosure_id = ${e.id} and v.dataset_id = ${e.datasetId} and v.version = ${e.version}`;
      expect(episodes.map((x) => x.episode_id).sort(byteOrder)).toEqual(
        expectedEpisodes(catalogOf(w)(made[i]!), made[i]!.body),
      );
    }
    // The downloads themselves agree with the catalog.
    for (const m of made) {
      expect(m.download.files.map((f) => f.path).sort()).toEqual(
        expectedFiles(catalogOf(w)(m), m.body)
          .map((f) => f.path)
          .sort(),
      );
    }
  });

  it("reports an intact chain with its count and head hash", async () => {
    expect(await verifyChain(w.iso.operator)).toEqual({ intact: true, count: 6, headHash: rows.at(-1)!.hash });
  });

  it("appendDisclosure returns what it stored, with expires_at = occurred_at + the given ttl", async () => {
    const m = made[0]!;
    const entry = expectedEntry(m, catalogOf(w)(m), licenceOf(w)(m), 0, "");
    const [row] = await w.iso.sql<
      { version_id: number }[]
    >`select version_id from disclosures where id = ${m.download.download_id}`;
    const appended = await rolledBack(w.iso.db, async (tx, operator) => {
      const chained = await appendDisclosure(tx, {
        entry: {
          ...entry,
          id: uniqueId("dl_x").replace(/-/g, ""),
          episodeCount: 0,
          episodesSha256: episodesDigest([]),
          termsSha256: entry.termsSha256 ?? null,
          versionId: row!.version_id,
          idempotencyScope: null,
          idempotencyKey: null,
          requestSha256: "0".repeat(64),
        },
        episodeIds: [],
        ttlSeconds: 60,
        refusals: [withdrawnMeanwhile],
      });
      const [stored] = await tx<DisclosureRow[]>`select * from disclosures where id = ${chained.id}`;
      return { chained, stored: stored!, report: await verifyChain(operator) };
    });
    expect(appended.chained.seq).toBe(7);
    expect(appended.chained.prevHash).toBe(rows.at(-1)!.hash);
    expect(appended.chained.occurredAt.getUTCMilliseconds()).toBe(0);
    expect(appended.chained.expiresAt.getTime() - appended.chained.occurredAt.getTime()).toBe(60_000);
    expect(appended.stored.occurred_at).toEqual(appended.chained.occurredAt);
    expect(appended.stored.expires_at).toEqual(appended.chained.expiresAt);
    expect(appended.stored.hash).toBe(entryHash(appended.chained));
    expect(appended.report).toEqual({ intact: true, count: 7, headHash: appended.stored.hash });
  });

  it("appendDisclosure refuses an entry that records more episodes than it names, and appends nothing", async () => {
    const m = made[0]!;
    const entry = expectedEntry(m, catalogOf(w)(m), licenceOf(w)(m), 0, "");
    const [row] = await w.iso.sql<
      { version_id: number; episode_id: string }[]
    >`select d.version_id, de.episode_id from disclosures d join disclosure_episodes de on de.disclosure_id = d.id
      where d.id = ${m.download.download_id} limit 1`;
    const id = uniqueId("dl_x").replace(/-/g, "");
    const attempt = await rolledBack(w.iso.db, async (tx) =>
      appendDisclosure(tx, {
        entry: {
          ...entry,
          id,
          episodeCount: 2,
          termsSha256: entry.termsSha256 ?? null,
          versionId: row!.version_id,
          idempotencyScope: null,
          idempotencyKey: null,
          requestSha256: "0".repeat(64),
        },
        episodeIds: [row!.episode_id],
        ttlSeconds: 60,
        refusals: [withdrawnMeanwhile],
      }).then(
        () => null,
        (error: Error) => error.message,
      ),
    );
    expect(attempt).toMatch(/records 2 episodes and names 1; nothing was appended/);
    expect(await verifyChain(w.iso.operator)).toMatchObject({ intact: true, count: 6 });
  });

  describe("tampering, as a superuser with the triggers disabled, is found at the altered entry", () => {
    const N = 6;
    const ks = Array.from({ length: N }, (_, i) => i + 1);

    async function verifyAfter(tamper: (tx: Sql, k: number) => Promise<unknown>, k: number): Promise<ChainReport> {
      return withTriggersDisabled(w.iso.db, async (tx, operator) => {
        await tamper(tx, k);
        return verifyChain(operator);
      });
    }

    async function expectBreakAt(tamper: (tx: Sql, k: number) => Promise<unknown>, reason: RegExp, k: number, at = k) {
      const report = await verifyAfter(tamper, k);
      expect(report, `tampered entry ${k}`).toEqual({
        intact: false,
        count: at - 1,
        firstBadSeq: at,
        reason: expect.stringMatching(reason),
      });
    }

    const ALTERED = /does not hash to its recorded hash/;
    const EPISODES = /resolved episodes differ/;

    it.each(ks)("(a) total_bytes of entry %i", async (k) => {
      await expectBreakAt(
        (tx) => tx`update disclosures set total_bytes = total_bytes + 1 where seq = ${k}`,
        ALTERED,
        k,
      );
    });

    it.each(ks)("(b) requested_scope of entry %i", async (k) => {
      await expectBreakAt(
        (tx) =>
          tx`update disclosures set requested_scope = requested_scope || '{"streams": ["tampered"]}'::jsonb where seq = ${k}`,
        ALTERED,
        k,
      );
    });

    it.each(ks)("(c) one resolved episode of entry %i deleted", async (k) => {
      await expectBreakAt(
        (tx) => tx`delete from disclosure_episodes where ctid = (
          select de.ctid from disclosure_episodes de join disclosures d on d.id = de.disclosure_id where d.seq = ${k} limit 1)`,
        EPISODES,
        k,
      );
    });

    it.each(ks)("(d) an extra resolved episode inserted for entry %i", async (k) => {
      await expectBreakAt(
        (tx) =>
          tx`insert into disclosure_episodes (disclosure_id, version_id, episode_id, occurred_at) select id, version_id, 'forged-episode', occurred_at from disclosures where seq = ${k}`,
        EPISODES,
        k,
      );
    });

    it.each(ks)("(d') a resolved episode of entry %i swapped for another", async (k) => {
      await expectBreakAt(
        (tx) => tx`update disclosure_episodes set episode_id = 'forged-episode' where ctid = (
          select de.ctid from disclosure_episodes de join disclosures d on d.id = de.disclosure_id where d.seq = ${k} limit 1)`,
        EPISODES,
        k,
      );
    });

    it.each(ks.slice(0, -1))("(e) entry %i deleted with its episodes: the missing seq", async (k) => {
      await expectBreakAt(
        async (tx) => {
          await tx`delete from disclosure_episodes where disclosure_id = (select id from disclosures where seq = ${k})`;
          await tx`delete from disclosures where seq = ${k}`;
        },
        new RegExp(`^seq ${k} is missing$`),
        k,
      );
    });

    it("(e) deleting the last entry leaves a shorter chain, which only the checkpoint of an earlier verification shows", async () => {
      // The entries alone cannot show a cut tail; the checkpoint the first test's full walk wrote at seq N can.
      const report = await verifyAfter(async (tx) => {
        await tx`delete from disclosure_episodes where disclosure_id = (select id from disclosures where seq = ${N})`;
        await tx`delete from disclosures where seq = ${N}`;
      }, N);
      expect(report).toEqual({
        intact: false,
        count: N - 1,
        firstBadSeq: N,
        reason: expect.stringMatching(
          new RegExp(
            `^entries after seq ${N - 1} were removed: the log ends at seq ${N - 1} but seq ${N} was verified at `,
          ),
        ),
      });
      const withoutCheckpoints = await verifyAfter(async (tx) => {
        await tx`delete from disclosure_episodes where disclosure_id = (select id from disclosures where seq = ${N})`;
        await tx`delete from disclosures where seq = ${N}`;
        await tx`alter table disclosure_checkpoints disable trigger disclosure_checkpoints_append_only`;
        await tx`delete from disclosure_checkpoints`;
      }, N);
      expect(withoutCheckpoints).toEqual({ intact: true, count: N - 1, headHash: rows[N - 2]!.hash });
    });

    it.each(ks)("(f) entry %i's hash changed, and the next entry's prev_hash to match", async (k) => {
      const forged = "ab".repeat(32);
      await expectBreakAt(
        async (tx) => {
          await tx`update disclosures set hash = ${forged} where seq = ${k}`;
          await tx`update disclosures set prev_hash = ${forged} where seq = ${k + 1}`;
        },
        ALTERED,
        k,
      );
    });

    it.each(ks)(
      "(g) entry %i rewritten with a correctly recomputed hash: the next entry no longer hashes",
      async (k) => {
        const report = await verifyAfter(async (tx) => {
          await tx`update disclosures set total_bytes = total_bytes + 1000 where seq = ${k}`;
          const [r] = await tx<DisclosureRow[]>`select * from disclosures where seq = ${k}`;
          const rewritten = entryHash(entryOfRow(r!));
          await tx`update disclosures set hash = ${rewritten} where seq = ${k}`;
          await tx`update disclosures set prev_hash = ${rewritten} where seq = ${k + 1}`;
        }, k);
        if (k < N)
          expect(report).toEqual({
            intact: false,
            count: k,
            firstBadSeq: k + 1,
            reason: expect.stringMatching(ALTERED),
          });
        else {
          // Rewriting the head itself is caught only by comparing with a recorded head hash: the checkpoint at seq N.
          expect(report).toEqual({
            intact: false,
            count: 0,
            firstBadSeq: 1,
            reason: expect.stringMatching(new RegExp(`^history rewritten at or before seq ${N}: `)),
          });
        }
      },
    );

    it("(h) every other asserted column of an entry", async () => {
      const k = 3;
      const [other] = await w.iso.sql<{ org: string; key: string; licence: string }[]>`
        select (select id from organizations where id <> (select organization_id from disclosures where seq = ${k}) limit 1) as org,
               (select id from api_keys where id is distinct from (select api_key_id from disclosures where seq = ${k}) limit 1) as key,
               (select id from licences where id <> (select licence_id from disclosures where seq = ${k}) limit 1) as licence`;
      const tampers: [string, (tx: Sql) => Promise<unknown>][] = [
        ["id", (tx) => tx`update disclosures set id = 'dl_forged' where seq = ${k}`],
        [
          "occurred_at",
          (tx) => tx`update disclosures set occurred_at = occurred_at - interval '1 second' where seq = ${k}`,
        ],
        ["expires_at", (tx) => tx`update disclosures set expires_at = expires_at + interval '1 day' where seq = ${k}`],
        ["organization_id", (tx) => tx`update disclosures set organization_id = ${other!.org} where seq = ${k}`],
        ["api_key_id", (tx) => tx`update disclosures set api_key_id = ${other!.key} where seq = ${k}`],
        [
          "user_id",
          (tx) =>
            tx`update disclosures set user_id = (select id from users limit 1), api_key_id = null where seq = ${k}`,
        ],
        [
          "channel",
          (tx) =>
            tx`update disclosures set channel = case channel when 'api' then 'portal' else 'api' end where seq = ${k}`,
        ],
        ["dataset_id", (tx) => tx`update disclosures set dataset_id = dataset_id || 'x' where seq = ${k}`],
        ["version", (tx) => tx`update disclosures set version = '9.9.9' where seq = ${k}`],
        ["licence_id", (tx) => tx`update disclosures set licence_id = ${other!.licence} where seq = ${k}`],
        // Made to look like an entry from before entries named their terms (migration 0017).
        ["names_terms", (tx) => tx`update disclosures set names_terms = false where seq = ${k}`],
        ["file_count", (tx) => tx`update disclosures set file_count = file_count - 1 where seq = ${k}`],
        ["request_id", (tx) => tx`update disclosures set request_id = 'req_forged' where seq = ${k}`],
        ["prev_hash", (tx) => tx`update disclosures set prev_hash = ${"cd".repeat(32)} where seq = ${k}`],
      ];
      for (const [column, tamper] of tampers) {
        const report = await verifyAfter(tamper, k);
        expect(report, column).toMatchObject({ intact: false, firstBadSeq: k, count: k - 1 });
      }
      // The episode rows and the entry's recorded digest changed together still fail: the digest is in the hash.
      const both = await verifyAfter(async (tx) => {
        await tx`delete from disclosure_episodes where disclosure_id = (select id from disclosures where seq = ${k})`;
        await tx`update disclosures set episode_count = 0, episodes_sha256 = ${episodesDigest([])} where seq = ${k}`;
      }, k);
      expect(both).toMatchObject({ intact: false, firstBadSeq: k, reason: expect.stringMatching(ALTERED) });
      // Entry ids renumbered (two seqs swapped) break the links at the first of them.
      const swapped = await verifyAfter(async (tx) => {
        await tx`update disclosures set seq = 1000000 where seq = 2`;
        await tx`update disclosures set seq = 2 where seq = 4`;
        await tx`update disclosures set seq = 4 where seq = 1000000`;
      }, k);
      expect(swapped).toMatchObject({ intact: false, firstBadSeq: 2 });
    });

    // recipientsOfContributor joins the resolved episodes on (version_id, episode_id), and replays
    // re-resolve files by the entry's version_id: re-pointing either would hide or change a disclosure.
    it.each(ks)("(i) the resolved episodes of entry %i re-pointed at another version", async (k) => {
      await expectBreakAt(
        (tx) =>
          tx`update disclosure_episodes set version_id = version_id + 1000000 where disclosure_id = (select id from disclosures where seq = ${k})`,
        /version/,
        k,
      );
    });

    it("(i) a resolved episode moved to another real version of its dataset, or the entry's version_id changed", async () => {
      const [entry] = await w.iso.sql<{ seq: string; other: number }[]>`
        select d.seq, v2.id as other from disclosures d join dataset_versions v on v.id = d.version_id
        join dataset_versions v2 on v2.dataset_id = v.dataset_id and v2.id <> v.id order by d.seq limit 1`;
      const k = Number(entry!.seq);
      await expectBreakAt(
        (tx) => tx`update disclosure_episodes set version_id = ${entry!.other} where ctid = (
          select de.ctid from disclosure_episodes de join disclosures d on d.id = de.disclosure_id where d.seq = ${k} limit 1)`,
        /version/,
        k,
      );
      await expectBreakAt(
        async (tx) => {
          await tx`update disclosure_episodes set version_id = ${entry!.other} where disclosure_id = (select id from disclosures where seq = ${k})`;
          await tx`update disclosures set version_id = ${entry!.other} where seq = ${k}`;
        },
        /version/,
        k,
      );
    });

    it("leaves the chain intact afterwards (every tamper was rolled back)", async () => {
      expect(await verifyChain(w.iso.operator)).toEqual({ intact: true, count: N, headHash: rows.at(-1)!.hash });
    });
  });
});

/** An entry rebuilt from a stored row, to forge a consistent hash. */
function entryOfRow(r: DisclosureRow): ChainedEntry {
  return {
    id: r.id,
    seq: Number(r.seq),
    occurredAt: r.occurred_at,
    organizationId: r.organization_id,
    apiKeyId: r.api_key_id,
    userId: r.user_id,
    reviewerRole: r.reviewer_role,
    channel: r.channel,
    datasetId: r.dataset_id,
    version: r.version,
    licenceId: r.licence_id,
    ...(r.names_terms ? { termsSha256: r.terms_sha256 } : {}),
    requestedScope: r.requested_scope,
    episodeCount: r.episode_count,
    fileCount: r.file_count,
    totalBytes: Number(r.total_bytes),
    episodesSha256: r.episodes_sha256,
    expiresAt: r.expires_at,
    requestId: r.request_id,
    prevHash: r.prev_hash,
  };
}

/** A transaction that is always rolled back (triggers left on): for appends that must not stay. */
async function rolledBack<T>(db: Db, fn: (tx: Sql, operator: Ctx) => Promise<T>): Promise<T> {
  let result: T | undefined;
  const done = new Error("rollback");
  await db
    .transaction(async (transaction) => {
      result = await fn(sqlOf(transaction as unknown as Db), operatorOn(transaction as unknown as Db));
      throw done;
    })
    .catch((error) => {
      if (error !== done) throw error;
    });
  return result as T;
}

// ---------------------------------------------------------------------------------------------
// Concurrency.
// ---------------------------------------------------------------------------------------------

describe("concurrent appends (database of its own)", () => {
  let w: World;

  beforeAll(async () => {
    w = await buildWorld("concurrency");
  });

  afterAll(async () => {
    await w?.iso.drop();
  });

  const seqsAndLinks = async () => {
    const rows = await chainRows(w.iso.sql);
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.hash);
      expect(rows[i]!.occurred_at.getTime()).toBeGreaterThanOrEqual(rows[i - 1]!.occurred_at.getTime());
    }
    return rows;
  };

  it("50 simultaneous downloads make seqs exactly 1..50 and one intact chain", async () => {
    const plan = downloadPlan(w);
    const made = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        makeDownload(w.iso.db, plan[i % plan.length]![0], plan[i % plan.length]![1]),
      ),
    );
    const rows = await seqsAndLinks();
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(made.map((m) => m.download.download_id)));
    expect(await verifyChain(w.iso.operator)).toEqual({ intact: true, count: 50, headHash: rows.at(-1)!.hash });
    // Each entry still hashes to what its own request asked for.
    const byId = new Map(made.map((m) => [m.download.download_id, m]));
    const ordered = rows.map((r) => byId.get(r.id)!);
    expect(expectedChain(ordered, catalogOf(w), licenceOf(w)).map((e) => e.hash)).toEqual(rows.map((r) => r.hash));
  });

  it("two app instances (two pools) appending at once extend one unbroken chain", async () => {
    const before = (await chainRows(w.iso.sql)).length;
    const other = w.iso.anotherPool(8);
    const plan = downloadPlan(w);
    const made = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        makeDownload(i % 2 ? other : w.iso.db, plan[i % plan.length]![0], plan[i % plan.length]![1]),
      ),
    );
    const rows = await seqsAndLinks();
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: before + 60 }, (_, i) => i + 1));
    expect(new Set(rows.slice(before).map((r) => r.id))).toEqual(new Set(made.map((m) => m.download.download_id)));
    expect(await verifyChain(w.iso.operator)).toEqual({
      intact: true,
      count: before + 60,
      headHash: rows.at(-1)!.hash,
    });
    // Both pools really held connections to the database while appending.
    const [{ n }] = (await w.iso
      .sql`select count(*)::int as n from pg_stat_activity where datname = ${w.iso.name}`) as unknown as [
      { n: number },
    ];
    expect(n).toBeGreaterThan(10);
  });
});

// ---------------------------------------------------------------------------------------------
// "Who received contributor X's episodes?" In the shared database, with contributors of its own.
// ---------------------------------------------------------------------------------------------

describe("recipientsOfContributor", () => {
  const db = () => getDb();
  const x = uniqueId("contrib-x");
  const y = uniqueId("contrib-y");
  const nobody = uniqueId("contrib-none");
  let orgs: Organization[];
  let made: Made[];
  let a100: EpisodeLine[];
  let a110: EpisodeLine[];
  let b100: EpisodeLine[];
  let reviewer: UserPrincipal;
  /** The licence of each organisation and dataset@version. */
  const licenceIds = new Map<string, string>();

  beforeAll(async () => {
    const op = operatorCtx();
    a100 = contributedEpisodes(6, 201, [x, y]);
    a110 = [...a100, ...contributedEpisodes(3, 202, [x])];
    b100 = contributedEpisodes(5, 203, [y, x, y]);
    const dsA = await importWithFiles(db().$client, [
      { version: "1.0.0", episodes: a100 },
      { version: "1.1.0", episodes: a110 },
    ]);
    const dsB = await importWithFiles(db().$client, [{ version: "1.0.0", episodes: b100 }]);
    orgs = [await createTestOrg(), await createTestOrg()];
    for (const org of orgs)
      for (const [ds, v] of [
        [dsA, "1.0.0"],
        [dsA, "1.1.0"],
        [dsB, "1.0.0"],
      ])
        licenceIds.set(`${org.id}/${at(ds!, v!)}`, (await grant(org.id, ds!, v!)).id);
    const key1 = await keyPrincipal(op, orgs[0]!.id);
    const user1 = await userPrincipal(op, orgs[0]!.id);
    const key2 = await keyPrincipal(op, orgs[1]!.id);
    const user2 = await userPrincipal(op, orgs[1]!.id);
    reviewer = await userPrincipal(op, null, "reviewer");
    const ofX = a100.filter((e) => e.contributor === x).map((e) => e.episode_id);
    const ofY = a100.filter((e) => e.contributor === y).map((e) => e.episode_id);
    made = [];
    for (const [principal, body] of [
      [key1, { dataset_id: dsA, version: "1.0.0", episode_ids: [ofX[0]!, ofY[0]!] }],
      [user2, { dataset_id: dsA, version: "1.1.0" }],
      [key1, { dataset_id: dsA, version: "1.0.0", episode_ids: [ofY[1]!, ofY[2]!] }],
      [key2, { dataset_id: dsB, version: "1.0.0", streams: ["cam"] }],
      [user1, { dataset_id: dsA, version: "1.1.0", episode_ids: [ofX[0]!, ofX[1]!], streams: ["joints"] }],
      [key2, { dataset_id: dsA, version: "1.0.0", filter: { outcome: a100[0]!.outcome } }],
    ] as const) {
      made.push(await makeDownload(db(), principal, body as Made["body"]));
    }
  });

  const ctxAs = (principal: Ctx["principal"]): Ctx => ({ db: db(), requestId: uniqueId("req"), principal });
  /** Every page of the report, two entries a page: the pages meet without a gap or a repeat. */
  const recipientsOfContributor = (ctx: Ctx, contributor: string) => allRecipientsOfContributor(ctx, contributor, 2);

  async function expected(contributor: string) {
    const ids = made.map((m) => m.download.download_id);
    const seqs = new Map(
      (await db().$client<{ id: string; seq: string }[]>`select id, seq from disclosures where id = any(${ids})`).map(
        (r) => [r.id, Number(r.seq)],
      ),
    );
    const orgOf = new Map(orgs.map((o) => [o.id, o]));
    return made
      .map((m) => {
        const catalog =
          m.body.dataset_id === made[3]!.body.dataset_id ? b100 : m.body.version === "1.1.0" ? a110 : a100;
        const contributed = new Set(catalog.filter((e) => e.contributor === contributor).map((e) => e.episode_id));
        const count = expectedEpisodes(catalog, m.body).filter((id) => contributed.has(id)).length;
        const org = orgOf.get(m.principal.organizationId!)!;
        return {
          count,
          row: {
            contributor,
            download_id: m.download.download_id,
            seq: seqs.get(m.download.download_id)!,
            occurred_at: m.occurredAt.toISOString(),
            organization: org.slug,
            organization_name: org.name,
            api_key: m.principal.kind === "api_key" ? m.principal.keyPrefix : null,
            user: m.principal.kind === "user" ? m.principal.email : null,
            reviewer_role: null,
            channel: m.principal.kind === "api_key" ? "api" : "portal",
            dataset_id: m.body.dataset_id,
            version: m.body.version,
            licence_id: licenceIds.get(`${org.id}/${at(m.body.dataset_id, m.body.version)}`),
            episode_count: count,
          },
        };
      })
      .filter((r) => r.count > 0)
      .map((r) => r.row)
      .reverse();
  }

  it("lists exactly the disclosures holding the contributor's episodes, newest first, with how many", async () => {
    for (const contributor of [x, y]) {
      const want = await expected(contributor);
      expect(want.length).toBeGreaterThanOrEqual(4);
      const got = await recipientsOfContributor(ctxAs(reviewer), contributor);
      expect(got).toEqual(want);
      for (let i = 1; i < got.length; i++) expect(got[i]!.seq).toBeLessThan(got[i - 1]!.seq);
    }
    // Both channels and both organisations appear, and a download without the contributor's episodes does not.
    const ofY = await recipientsOfContributor(ctxAs(reviewer), y);
    expect(new Set(ofY.map((r) => r.channel))).toEqual(new Set(["api", "portal"]));
    expect(new Set(ofY.map((r) => r.organization))).toEqual(new Set(orgs.map((o) => o.slug)));
    expect((await recipientsOfContributor(ctxAs(reviewer), x)).map((r) => r.download_id)).not.toContain(
      made[2]!.download.download_id,
    );
    // An episode present in two versions counts once per disclosure, in the version that was disclosed.
    const whole = (await recipientsOfContributor(ctxAs(reviewer), x)).find(
      (r) => r.download_id === made[1]!.download.download_id,
    );
    expect(whole?.episode_count).toBe(a110.filter((e) => e.contributor === x).length);
  });

  it("returns nothing for a contributor nobody received", async () => {
    expect(await recipientsOfContributor(ctxAs(reviewer), nobody)).toEqual([]);
  });

  it("answers reviewers, admins and operators, and refuses licensees and API keys with 403 forbidden", async () => {
    const op = operatorCtx();
    const admin = await userPrincipal(op, null, "admin");
    const want = await expected(x);
    expect(await recipientsOfContributor(ctxAs(admin), x)).toEqual(want);
    expect(await recipientsOfContributor(operatorCtx(), x)).toEqual(want);
    const licensee = await userPrincipal(op, orgs[0]!.id, "licensee");
    const key = await keyPrincipal(op, orgs[0]!.id);
    for (const principal of [licensee, key]) {
      await expect(recipientsOfContributor(ctxAs(principal), x)).rejects.toMatchObject({
        name: "AppError",
        code: "forbidden",
        status: 403,
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Exports: CSV and JSON Lines, every filter against an oracle built from what the test made.
// ---------------------------------------------------------------------------------------------

const CSV_HEADER =
  "seq,id,occurred_at,organization,organization_name,api_key,user,reviewer_role,channel,dataset_id,version,licence_id,terms_sha256,episode_count,file_count,total_bytes,expires_at,request_id,requested_scope,hash";

describe("exportDisclosures (database of its own)", () => {
  let w: World;
  let made: Made[];
  let groups: Date[];
  let oracle: Record<string, unknown>[];

  beforeAll(async () => {
    w = await buildWorld("export");
    const plan = downloadPlan(w);
    made = [];
    groups = [];
    // Three groups of downloads, each in a later second than the one before (the log's clock g seconds ahead).
    for (let g = 0; g < 3; g++) {
      const group = await makeSequentially(w, g === 1 ? plan.slice(2).concat(plan.slice(0, 2)) : plan, {
        clockAhead: g,
      });
      groups.push(group[0]!.occurredAt);
      made.push(...group);
    }
    oracle = exportOracle(w, made);
  });

  afterAll(async () => {
    await w?.iso.drop();
  });

  it("JSON Lines: one object per entry, in seq order, with its episode ids", async () => {
    const text = await exportText(w.iso.db, {}, "jsonl");
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.slice(0, -1).split("\n");
    expect(lines).toHaveLength(18);
    expect(lines.map((l) => JSON.parse(l))).toEqual(oracle);
    // However the entries are split into reads of their episodes (a run per entry here, or a few), and into batches.
    for (const [batchSize, episodesPerRead] of [
      [4, 1],
      [5, 3],
      [18, 7],
    ] as const) {
      let small = "";
      for await (const line of exportDisclosures(operatorOn(w.iso.db), {}, "jsonl", { batchSize, episodesPerRead }))
        small += line;
      expect(small, `${batchSize} entries, ${episodesPerRead} episodes a read`).toBe(text);
    }
  });

  it("CSV: the header and one record per entry, with RFC 4180 quoting", async () => {
    const text = await exportText(w.iso.db, {}, "csv");
    const records = parseCsv(text);
    expect(records[0]!.join(",")).toBe(CSV_HEADER);
    expect(records).toHaveLength(1 + 18);
    const columns = CSV_HEADER.split(",");
    for (const [i, record] of records.slice(1).entries()) {
      expect(record).toHaveLength(columns.length);
      const want = oracle[i]!;
      const got = Object.fromEntries(columns.map((c, j) => [c, record[j]!]));
      const { requested_scope, ...plain } = want;
      expect(JSON.parse(got.requested_scope!)).toEqual(requested_scope);
      for (const [c, v] of Object.entries(plain))
        if (c !== "episode_ids") expect(got[c], c).toBe(v === null ? "" : String(v));
    }
    // Byte for byte what csvLine writes for the same values (the export writes the database's raw bytes).
    const scopes = await w.iso.sql<
      { scope: string }[]
    >`select requested_scope::text as scope from disclosures order by seq`;
    const lines = oracle.map((o, i) =>
      csvLine(columns.map((c) => (c === "requested_scope" ? scopes[i]!.scope : o[c]))),
    );
    expect(text).toBe(csvLine(columns) + lines.join(""));
    // The scope is JSON (as the database writes it), whose quotes and commas CSV must double and enclose.
    const scope = records[1]![columns.indexOf("requested_scope")]!;
    expect(scope).toMatch(/^\{"/);
    expect(text).toContain(`,"${scope.replace(/"/g, '""')}",`);
    // The organisation's name holds a comma, a quote and a line break.
    expect(text).toContain(`,"Acme, ""Robotics""\nLtd",`);
    expect(text).toContain(`,"Beta\nLabs",`);
  });

  const cases = (): [string, DisclosureFilter, (o: Record<string, unknown>, m: Made) => boolean][] => [
    ["no filter", {}, () => true],
    ["from", { from: groups[1] }, (o) => Date.parse(o.occurred_at as string) >= groups[1]!.getTime()],
    [
      "to (inclusive)",
      { to: { through: groups[1]! } },
      (o) => Date.parse(o.occurred_at as string) <= groups[1]!.getTime(),
    ],
    [
      "from and to",
      { from: groups[1], to: { through: groups[2]! } },
      (o) =>
        Date.parse(o.occurred_at as string) >= groups[1]!.getTime() &&
        Date.parse(o.occurred_at as string) <= groups[2]!.getTime(),
    ],
    [
      "from, a millisecond early",
      { from: new Date(groups[1]!.getTime() - 1) },
      (o) => Date.parse(o.occurred_at as string) >= groups[1]!.getTime(),
    ],
    ["organisation 1", { organization: w.org1.slug }, (o) => o.organization === w.org1.slug],
    ["organisation 2", { organization: w.org2.slug }, (o) => o.organization === w.org2.slug],
    ["dataset A", { datasetId: w.dsA }, (o) => o.dataset_id === w.dsA],
    ["dataset B", { datasetId: w.dsB }, (o) => o.dataset_id === w.dsB],
    ["version 1.1.0", { version: "1.1.0" }, (o) => o.version === "1.1.0"],
    [
      "dataset A version 1.0.0",
      { datasetId: w.dsA, version: "1.0.0" },
      (o) => o.dataset_id === w.dsA && o.version === "1.0.0",
    ],
    ["key prefix", { apiKeyPrefix: w.keys1[0].keyPrefix }, (o) => o.api_key === w.keys1[0].keyPrefix],
    ["other key prefix", { apiKeyPrefix: w.keys1[1].keyPrefix }, (o) => o.api_key === w.keys1[1].keyPrefix],
    ["user email, any case", { userEmail: w.user2.email.toUpperCase() }, (o) => o.user === w.user2.email],
    [
      "episode id",
      { episodeId: w.catalog.get(at(w.dsA, "1.0.0"))![0]!.episode_id },
      (o) => (o.episode_ids as string[]).includes(w.catalog.get(at(w.dsA, "1.0.0"))![0]!.episode_id),
    ],
    ...(["x", "y", "z"] as const).map(
      (c): [string, DisclosureFilter, (o: Record<string, unknown>, m: Made) => boolean] => [
        `contributor ${c}`,
        { contributor: w.contributors[c] },
        (o, m) =>
          catalogOf(w)(m).some(
            (e) => e.contributor === w.contributors[c] && (o.episode_ids as string[]).includes(e.episode_id),
          ),
      ],
    ),
    [
      "organisation 1, dataset A, contributor y, from group 2",
      { organization: w.org1.slug, datasetId: w.dsA, contributor: w.contributors.y, from: groups[1] },
      (o, m) =>
        o.organization === w.org1.slug &&
        o.dataset_id === w.dsA &&
        Date.parse(o.occurred_at as string) >= groups[1]!.getTime() &&
        catalogOf(w)(m).some(
          (e) => e.contributor === w.contributors.y && (o.episode_ids as string[]).includes(e.episode_id),
        ),
    ],
    ["an unknown key prefix", { apiKeyPrefix: "das_nothing0" }, () => false],
  ];

  it("each filter selects exactly the entries the oracle selects, in both formats", async () => {
    for (const [name, filter, keep] of cases()) {
      const want = oracle.filter((o, i) => keep(o, made[i]!));
      const jsonl = (await exportText(w.iso.db, filter, "jsonl"))
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(jsonl, name).toEqual(want);
      const csv = parseCsv(await exportText(w.iso.db, filter, "csv"));
      expect(csv[0]!.join(","), name).toBe(CSV_HEADER);
      expect(
        csv.slice(1).map((r) => r[1]),
        name,
      ).toEqual(want.map((o) => o.id));
      if (name !== "no filter" && name !== "an unknown key prefix") {
        expect(want.length, `${name} selects something`).toBeGreaterThan(0);
        expect(want.length, `${name} leaves something out`).toBeLessThan(oracle.length);
      }
    }
  });
});

describe("exportDisclosures: a CSV that is safe to open in a spreadsheet", () => {
  it("neutralises an organisation name a spreadsheet would run as a formula", async () => {
    const formula = '=HYPERLINK("http://evil","x")';
    const op = operatorCtx();
    const org = await createOrganization(op, { slug: uniqueId("org"), name: formula });
    const datasetId = await importWithFiles(getDb().$client, [{ version: "1.0.0", episodes: randomEpisodes(2, 301) }]);
    await grant(org.id, datasetId, "1.0.0");
    await makeDownload(getDb(), await keyPrincipal(op, org.id), { dataset_id: datasetId, version: "1.0.0" });

    const text = await exportText(getDb(), { organization: org.slug }, "csv");
    // The cell is text behind a single quote, in a quoted field (OWASP's rule).
    expect(text).toContain(`,"'=HYPERLINK(""http://evil"",""x"")",`);
    const [header, row, ...rest] = parseCsv(text);
    expect(rest).toEqual([]);
    expect(row![header!.indexOf("organization_name")]).toBe(`'${formula}`);
    // JSON Lines is for programs, not spreadsheets: the name stays as it is there.
    expect(JSON.parse(await exportText(getDb(), { organization: org.slug }, "jsonl")).organization_name).toBe(formula);
  });
});

describe("exportDisclosures and verifyChain over more entries than a batch (database of its own)", () => {
  const TOTAL = 1201;
  let iso: IsolatedDb;
  let ids: string[];
  let orgs: Organization[];
  let datasets: string[];

  beforeAll(async () => {
    iso = await createIsolatedDb("batches");
    const op = iso.operator;
    const episodes = [randomEpisodes(1, 301), randomEpisodes(1, 302)];
    datasets = [
      await importWithFiles(iso.sql, [{ version: "1.0.0", episodes: episodes[0]! }]),
      await importWithFiles(iso.sql, [{ version: "1.0.0", episodes: episodes[1]! }]),
    ];
    orgs = [
      await createOrganization(op, { slug: uniqueId("org") }),
      await createOrganization(op, { slug: uniqueId("org") }),
    ];
    const keys = [await keyPrincipal(op, orgs[0]!.id), await keyPrincipal(op, orgs[1]!.id)];
    const versions = await iso.sql<{ id: number; dataset_id: string }[]>`select id, dataset_id from dataset_versions`;
    const setup = new Map<string, { licenceId: string; versionId: number }>();
    for (const org of orgs) {
      for (const ds of datasets) {
        const { id } = await grantLicence(op, { organizationId: org.id, datasetId: ds, version: "1.0.0" });
        setup.set(`${org.id}/${ds}`, { licenceId: id, versionId: versions.find((v) => v.dataset_id === ds)!.id });
      }
    }
    // Entry n: organisation by parity, dataset 0 for the first 1000. Appended directly, 16 at a time.
    ids = Array.from({ length: TOTAL }, (_, i) => `dl_batch${i + 1}`);
    let next = 0;
    const worker = async () => {
      while (next < TOTAL) {
        const n = next++;
        const org = orgs[n % 2]!;
        const d = n < 1000 ? 0 : 1;
        const { licenceId, versionId } = setup.get(`${org.id}/${datasets[d]}`)!;
        const episodeId = episodes[d]![0]!.episode_id;
        await iso.sql.begin(async (tx) => {
          await appendDisclosure(tx as unknown as Sql, {
            episodeIds: [episodeId],
            ttlSeconds: 900,
            refusals: [withdrawnMeanwhile],
            entry: {
              id: ids[n]!,
              organizationId: org.id,
              apiKeyId: keys[n % 2]!.keyId,
              userId: null,
              reviewerRole: null,
              channel: "api",
              datasetId: datasets[d]!,
              version: "1.0.0",
              versionId,
              licenceId,
              termsSha256: null,
              requestedScope: { episode_ids: [episodeId] },
              episodeCount: 1,
              fileCount: 2,
              totalBytes: 1000 + n,
              episodesSha256: episodesDigest([episodeId]),
              requestId: `req_${n}`,
              idempotencyScope: null,
              idempotencyKey: null,
              requestSha256: "0".repeat(64),
            },
          });
        });
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  });

  afterAll(async () => {
    await iso?.drop();
  });

  it("streams every entry once, in seq order, in both formats", async () => {
    const order = await iso.sql<{ id: string }[]>`select id from disclosures order by seq`;
    const jsonl = (await exportText(iso.db, {}, "jsonl"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { seq: number; id: string; episode_ids: string[] });
    expect(jsonl.map((r) => r.seq)).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
    expect(jsonl.map((r) => r.id)).toEqual(order.map((r) => r.id));
    expect(new Set(jsonl.map((r) => r.id))).toEqual(new Set(ids));
    expect(jsonl.every((r) => r.episode_ids.length === 1)).toBe(true);
    const csv = parseCsv(await exportText(iso.db, {}, "csv"));
    expect(csv).toHaveLength(TOTAL + 1);
    expect(csv.slice(1).map((r) => Number(r[0]))).toEqual(jsonl.map((r) => r.seq));
    // Whatever the batch, the batches meet without a gap or a repeat (the next is read while one is written).
    for (const batchSize of [7, 1200, 1201, 5000]) {
      expect(parseCsv(await exportText(iso.db, {}, "csv", batchSize)), `batches of ${batchSize}`).toEqual(csv);
    }
  });

  it("streams filtered results across batches: exactly a multiple of the batch, and more than one batch", async () => {
    const byDataset = (await exportText(iso.db, { datasetId: datasets[0] }, "jsonl"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; seq: number });
    expect(byDataset).toHaveLength(1000);
    expect(new Set(byDataset.map((r) => r.id))).toEqual(new Set(ids.slice(0, 1000)));
    for (const [o, org] of orgs.entries()) {
      const rows = (await exportText(iso.db, { organization: org.slug }, "jsonl"))
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; seq: number });
      expect(new Set(rows.map((r) => r.id))).toEqual(new Set(ids.filter((_, n) => n % 2 === o)));
      expect(rows.map((r) => r.seq)).toEqual([...rows.map((r) => r.seq)].sort((a, b) => a - b));
    }
  });

  it("verifies a chain longer than its read batch", async () => {
    const [head] = await iso.sql<{ hash: string }[]>`select hash from disclosures order by seq desc limit 1`;
    expect(await verifyChain(iso.operator)).toEqual({ intact: true, count: TOTAL, headHash: head!.hash });
    const broken = await withTriggersDisabled(iso.db, async (tx, operator) => {
      await tx`update disclosures set request_id = 'req_forged' where seq = 1100`;
      return verifyChain(operator);
    });
    expect(broken).toMatchObject({ intact: false, firstBadSeq: 1100, count: 1099 });
  });
});
