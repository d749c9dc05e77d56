import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "@/lib/db/client";
import { buildWorld, downloadPlan, makeSequentially, type World } from "@/lib/testing/disclosure-fixtures";
import { verifyChainDetailed, type ChainReport } from "./verify";
import { parallelRangeChecker, type ParallelRangeChecker } from "./verify-parallel";
import { isoOfTimestamp } from "./verify-range";

// A full walk spread over threads (das-admin disclosures verify --full) must find exactly what the
// walk in one process finds: the same head, and for every kind of tampering the same first bad
// entry and reason. The threads read on connections of their own, so the tampering here is
// committed (in a database of this file's own) and undone after each case.

let w: World;
let threads: ParallelRangeChecker;
/** The plan's downloads: entries 1..6. */
const HEAD = 6;

beforeAll(async () => {
  w = await buildWorld("parallel");
  await makeSequentially(w, downloadPlan(w));
  // Ranges of two entries read one at a time, cut after three episodes: many ranges, and ranges
  // read in several parts, for six entries.
  threads = parallelRangeChecker(w.iso.url, { threads: 2, batch: { entries: 1, episodes: 3 }, batchesPerRange: 2 });
});

afterAll(async () => {
  await threads?.close();
  await w?.iso.drop();
});

const inOneProcess = async () =>
  (await verifyChainDetailed(w.iso.operator, { mode: "full", writeCheckpoint: false })).report;
const inThreads = async () =>
  (await verifyChainDetailed(w.iso.operator, { mode: "full", writeCheckpoint: false, ranges: threads })).report;

/** Commits `tamper` past the log's triggers, then `undo` the same way, returning both walks' reports in between. */
async function whileTampered(
  tamper: (tx: Sql) => Promise<unknown>,
  undo: (tx: Sql) => Promise<unknown>,
): Promise<[ChainReport, ChainReport]> {
  const asSuperuser = (change: (tx: Sql) => Promise<unknown>) =>
    w.iso.sql.begin(async (tx) => {
      // No trigger fires for this transaction, the append-only ones included, as for a superuser's.
      await tx`set local session_replication_role = replica`;
      await change(tx as unknown as Sql);
    });
  await asSuperuser(tamper);
  try {
    return [await inOneProcess(), await inThreads()];
  } finally {
    await asSuperuser(undo);
  }
}

describe("a full walk over threads", () => {
  it("finds the intact log's head, as the walk in one process does", async () => {
    const one = await inOneProcess();
    expect(one).toMatchObject({ intact: true, count: HEAD });
    expect(await inThreads()).toEqual(one);
  });

  it("reports every tampered entry where the walk in one process reports it, whichever thread read it", async () => {
    const idAt = async (seq: number) =>
      (await w.iso.sql<{ id: string }[]>`select id from disclosures where seq = ${seq}`)[0]!.id;
    const cases: {
      name: string;
      at: number;
      reason: RegExp;
      tamper: (tx: Sql) => Promise<unknown>;
      undo: (tx: Sql) => Promise<unknown>;
    }[] = [];
    for (const seq of [1, 2, 4, HEAD]) {
      cases.push({
        name: `altered entry ${seq}`,
        at: seq,
        reason: /does not hash/,
        tamper: (tx) => tx`update disclosures set request_id = request_id || '-forged' where seq = ${seq}`,
        undo: (tx) => tx`update disclosures set request_id = left(request_id, -7) where seq = ${seq}`,
      });
    }
    // Instants: the threads read them as UTC text and the walk in one process in the server's own
    // zone, each through isoOfTimestamp; a millisecond off, or an instant no Date can hold, is an alteration.
    cases.push({
      name: "entry 2 a millisecond later",
      at: 2,
      reason: /does not hash/,
      tamper: (tx) => tx`update disclosures set occurred_at = occurred_at + interval '1 millisecond' where seq = 2`,
      undo: (tx) => tx`update disclosures set occurred_at = occurred_at - interval '1 millisecond' where seq = 2`,
    });
    cases.push({
      name: "entry 3 expiring before Christ",
      at: 3,
      reason: /does not hash/,
      tamper: (tx) => tx`update disclosures set expires_at = expires_at - interval '2100 years' where seq = 3`,
      undo: (tx) => tx`update disclosures set expires_at = expires_at + interval '2100 years' where seq = 3`,
    });
    const unlinked = await w.iso.sql<{ prev_hash: string }[]>`select prev_hash from disclosures where seq = 5`;
    cases.push({
      name: "a broken link at 5",
      at: 5,
      reason: /prev_hash/,
      tamper: (tx) => tx`update disclosures set prev_hash = ${"f".repeat(64)} where seq = 5`,
      undo: (tx) => tx`update disclosures set prev_hash = ${unlinked[0]!.prev_hash} where seq = 5`,
    });
    cases.push({
      name: "seq 4 missing",
      at: 4,
      reason: /seq 4 is missing/,
      tamper: (tx) => tx`update disclosures set seq = 1004 where seq = 4`,
      undo: (tx) => tx`update disclosures set seq = 4 where seq = 1004`,
    });
    const entry3 = await idAt(3);
    const removed = await w.iso.sql<{ version_id: number; episode_id: string; occurred_at: Date }[]>`
      select version_id, episode_id, occurred_at from disclosure_episodes where disclosure_id = ${entry3} order by episode_id limit 1`;
    cases.push({
      name: "an episode of entry 3 removed",
      at: 3,
      reason: /resolved episodes differ/,
      tamper: (tx) =>
        tx`delete from disclosure_episodes where disclosure_id = ${entry3} and episode_id = ${removed[0]!.episode_id}`,
      undo: (tx) =>
        tx`insert into disclosure_episodes (disclosure_id, version_id, episode_id, occurred_at)
          values (${entry3}, ${removed[0]!.version_id}, ${removed[0]!.episode_id}, ${removed[0]!.occurred_at})`,
    });
    cases.push({
      name: "a gap before the last entry",
      at: HEAD,
      reason: new RegExp(`seq ${HEAD} is missing`),
      // The last entry moved far beyond the head: the walk must read past the gap, not end at it.
      tamper: (tx) => tx`update disclosures set seq = 5000 where seq = ${HEAD}`,
      undo: (tx) => tx`update disclosures set seq = ${HEAD} where seq = 5000`,
    });

    for (const c of cases) {
      const [one, parallel] = await whileTampered(c.tamper, c.undo);
      expect(one, c.name).toEqual({
        intact: false,
        count: c.at - 1,
        firstBadSeq: c.at,
        reason: expect.stringMatching(c.reason),
      });
      expect(parallel, c.name).toEqual(one);
    }
    expect(await inThreads()).toMatchObject({ intact: true, count: HEAD });
  });
});

describe("isoOfTimestamp", () => {
  it("writes every instant as the Date the driver parses from the same text would, in any session's time zone", async () => {
    const instants = [
      "2026-11-23 00:24:21+00",
      "2026-11-23 00:24:21.5+00",
      "2026-11-23 00:24:21.123+00",
      "2026-11-23 00:24:21.123456+00",
      "1999-12-31 23:59:59.999+00",
      "0999-01-01 00:00:00+00",
      "9999-12-31 23:59:59+00",
      "2026-06-30 12:00:00.01+00",
    ];
    for (const zone of ["UTC", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham"]) {
      const rows = await w.iso.sql.begin(async (tx) => {
        await tx`select set_config('TimeZone', ${zone}, true)`;
        return tx<
          { text: string; parsed: Date }[]
        >`select t::text as text, t as parsed from unnest(${instants}::text[]) as s, cast(s as timestamptz) as t`;
      });
      expect(rows).toHaveLength(instants.length);
      // A Date cannot read an offset with seconds, which zones had before standard time (year 999).
      for (const { text, parsed } of rows) {
        expect(isoOfTimestamp(text), `${zone}: ${text}`).toBe(
          Number.isNaN(parsed.getTime()) ? `unreadable: ${text}` : parsed.toISOString(),
        );
      }
    }
  });

  it("writes an instant no Date can hold as text that no entry hashes with", () => {
    expect(isoOfTimestamp("0044-03-15 12:00:00+00 BC")).toBe("unreadable: 0044-03-15 12:00:00+00 BC");
    expect(isoOfTimestamp("infinity")).toMatch(/^unreadable/);
  });
});
