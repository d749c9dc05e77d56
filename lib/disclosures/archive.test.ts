import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getObjectBytes, putObject } from "@/lib/storage/client";
import { adminCli } from "@/lib/testing/admin-cli";
import {
  appendNamingFiles,
  buildWorld,
  clockAt,
  downloadPlan,
  makeDownload,
  type World,
} from "@/lib/testing/disclosure-fixtures";
import { uniqueId } from "@/lib/testing/fixtures";
import { archiveMonth, partitionName, restoreMonth } from "./archive";
import { archiveStoreFromEnv, readMonthDigest, type ArchiveStore } from "./archive-store";
import { closeEndedMonths, monthName } from "./months";
import { searchDisclosures } from "./search";
import { verifyChainDetailed, type ChainReport } from "./verify";

// Months of the log leave the database for the object store and come back (das-admin disclosures
// archive / restore): entries made in two past months (the log's clock moved back to them; one of
// them delivering per-licence copies) and this one; the ended months closed with their checkpoints
// and signed digests; one archived and restored, checked at every step against the full walk, which
// joins an archived month at its checkpoints; an archive altered in the store is refused.

let w: World;
let store: ArchiveStore;
let signing: { privateKey: KeyObject; publicKey: KeyObject };
let first: string;
let second: string;
let whole: ChainReport;
const admin = adminCli("archive", { databaseUrl: () => w.iso.url });

const monthsAgo = (n: number) => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - n, 10, 12));
};

const fullWalk = async () =>
  (await verifyChainDetailed(w.iso.operator, { mode: "full", writeCheckpoint: false })).report;
const onlineSeqs = async () =>
  (await searchDisclosures(w.iso.operator, { filter: {}, limit: 100 })).entries.map((e) => e.seq).sort((a, b) => a - b);

beforeAll(async () => {
  w = await buildWorld("archive");
  store = { ...archiveStoreFromEnv(), prefix: `${uniqueId("archives")}/` };
  signing = generateKeyPairSync("ed25519");
  first = monthName(monthsAgo(3));
  second = monthName(monthsAgo(2));
  await w.iso.sql`select das_create_disclosure_months(${`${first}-01`}, ${`${second}-01`})`;
  const plan = downloadPlan(w);
  const [inFirst, inSecond] = [clockAt(monthsAgo(3)), clockAt(monthsAgo(2))];
  for (const [principal, body] of plan.slice(0, 2)) await makeDownload(w.iso.db, principal, body, inFirst);
  // A delivery of per-licence copies: its files' rows are in its month, archived and restored with it.
  await appendNamingFiles(
    w.iso.db,
    w.keys1[0],
    { datasetId: w.dsA, version: "1.0.0" },
    { files: [{ path: "data/chunk-000/episode_000000.parquet", sha256: "e".repeat(64) }] },
    inFirst,
  );
  for (const [principal, body] of plan.slice(3, 5)) await makeDownload(w.iso.db, principal, body, inSecond);
  await makeDownload(w.iso.db, ...plan[5]!);
  whole = await fullWalk();
}, 180_000);

afterAll(async () => {
  await w?.iso.drop();
});

describe("a month of the log", () => {
  it("closes once it has ended: a checkpoint at its last entry and a signed digest of what it held", async () => {
    expect(whole).toMatchObject({ intact: true, count: 6 });
    const closed = await closeEndedMonths(w.iso.operator, { store, signingKey: signing.privateKey });
    expect(closed.map((m) => [m.month, m.entries, m.firstSeq, m.lastSeq])).toEqual([
      [first, 3, 1, 3],
      [second, 2, 4, 5],
    ]);
    const checkpoints = await w.iso.sql<
      { seq: string }[]
    >`select seq from disclosure_checkpoints where mode = 'month' order by seq`;
    expect(checkpoints.map((c) => Number(c.seq))).toEqual([3, 5]);
    const digest = await readMonthDigest(store, closed[0]!.digestKey!, signing.publicKey);
    expect(digest).toMatchObject({ digest: { month: first, entries: 3, first_seq: 1, last_seq: 3 } });
    // Closed once: a second look changes nothing; the current month stays open.
    expect(await closeEndedMonths(w.iso.operator, { store, signingKey: signing.privateKey })).toEqual([]);
  });

  it("is archived: exported, checked in the store, then detached and dropped; the full walk joins it at its checkpoints", async () => {
    const result = await archiveMonth(w.iso.operator, first, { store, publicKey: signing.publicKey });
    expect(result).toMatchObject({ month: first, entries: 3 });
    expect(result.tables.map((t) => [t.table, t.rows > 0])).toEqual([
      ["disclosures", true],
      ["disclosure_episodes", true],
      ["disclosure_contributors", true],
      ["disclosure_episode_entries", true],
      ["disclosure_files", true],
    ]);
    const [gone] = await w.iso.sql<
      { present: boolean }[]
    >`select to_regclass(${partitionName("disclosures", first)}) is not null as present`;
    expect(gone!.present).toBe(false);
    expect(await onlineSeqs()).toEqual([4, 5, 6]);
    expect(await fullWalk()).toEqual(whole);
  });

  it("refuses what may not leave: a month archived already, a month that has not closed", async () => {
    await expect(archiveMonth(w.iso.operator, first, { store, publicKey: signing.publicKey })).rejects.toThrow(
      /archived already/,
    );
    const current = monthName(new Date());
    await expect(archiveMonth(w.iso.operator, current, { store, publicKey: signing.publicKey })).rejects.toThrow(
      /has not closed/,
    );
  });

  it("is not restored from an archive altered in the store, and is restored from the one it left", async () => {
    const key = `${store.prefix}${first}/disclosures.csv.gz`;
    const original = await getObjectBytes(store.client, store.bucket, key);
    const altered = gunzipSync(original)
      .toString("utf8")
      .replace(/req-[0-9a-f]+/, "req-rewritten");
    await putObject(store.client, store.bucket, key, gzipSync(Buffer.from(altered)));
    await expect(restoreMonth(w.iso.operator, first, { store, publicKey: signing.publicKey })).rejects.toThrow(
      /does not check; nothing was restored: .*not the object the manifest names/,
    );
    expect(await onlineSeqs()).toEqual([4, 5, 6]);

    await putObject(store.client, store.bucket, key, original);
    expect(await restoreMonth(w.iso.operator, first, { store, publicKey: signing.publicKey })).toEqual({
      month: first,
      entries: 3,
    });
    expect(await onlineSeqs()).toEqual([1, 2, 3, 4, 5, 6]);
    // The same full walk as before the month left.
    expect(await fullWalk()).toEqual(whole);
    await makeDownload(w.iso.db, ...downloadPlan(w)[0]!);
    expect(await fullWalk()).toMatchObject({ intact: true, count: 7 });
  });

  it("is archived and listed by das-admin, which verifies the log with the month archived", async () => {
    const env = {
      DIGEST_SIGNING_KEY: signing.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      DISCLOSURE_ARCHIVE_PREFIX: store.prefix,
    };
    const archived = await admin.run(["disclosures", "archive", "--month", second], { env });
    expect(archived.stderr).toContain(`Archived ${second}: 2 entries`);
    expect(archived.code).toBe(0);
    const months = await admin.run(["disclosures", "months", "--json"], { env });
    const listed = JSON.parse(months.stdout) as { month: string; online: boolean; archive: string | null }[];
    expect(listed.find((m) => m.month === second)).toMatchObject({ online: false, archive: "archived" });
    expect(listed.find((m) => m.month === first)).toMatchObject({ online: true, archive: "restored" });
    const verified = await admin.run(["disclosures", "verify", "--full", "--threads", "1"], { env });
    expect(verified.stderr).toContain("Disclosure log intact: 7 entries verified");
  });

  it("breaks the walk where an archived month no longer joins the entries before it", async () => {
    const asSuperuser = (change: string) =>
      w.iso.sql.begin(async (tx) => {
        await tx`set local session_replication_role = replica`;
        await tx.unsafe(change);
      });
    await asSuperuser(`update disclosure_months set prev_hash = repeat('a', 64) where month = '${second}-01'`);
    try {
      expect(await fullWalk()).toEqual({
        intact: false,
        count: 3,
        firstBadSeq: 4,
        reason: "prev_hash does not match the previous entry's hash",
      });
    } finally {
      await asSuperuser(
        `update disclosure_months m set prev_hash = d.hash from disclosures d where d.seq = 3 and m.month = '${second}-01'`,
      );
    }
    expect(await fullWalk()).toMatchObject({ intact: true, count: 7 });
  });
});
