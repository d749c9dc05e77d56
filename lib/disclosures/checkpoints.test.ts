import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { removeEntriesFrom, withTriggersDisabled } from "@/lib/testing/isolated-db";
import {
  buildWorld,
  downloadPlan,
  makeDownload,
  makeSequentially,
  type World,
} from "@/lib/testing/disclosure-fixtures";
import { lastFullCheckpoint, verifyChainDetailed, type Checkpoint } from "./verify";

// Verified checkpoints: incremental verification walks only what follows the newest, after
// checking that the log still holds it; a full walk covers everything and compares the log with
// every checkpoint. Tampering happens in rolled-back transactions with the append-only triggers
// off, as a superuser could, so each test starts from the same intact log of 12 entries.

let w: World;
/** The checkpoints the first tests wrote: an incremental one at 6, one at 12, a full one at 12. */
let at6: Checkpoint;
let at12: Checkpoint;

beforeAll(async () => {
  w = await buildWorld("checkpoints");
  await makeSequentially(w, downloadPlan(w));
});

afterAll(async () => {
  await w?.iso.drop();
});

const checkpointRows = () =>
  w.iso.sql<
    { seq: string; mode: string; entries_checked: string }[]
  >`select seq, mode, entries_checked from disclosure_checkpoints order by id`;

/** Appends the plan's first `n` downloads inside the tamperer's transaction (`db`). */
async function appendInside(db: Db, n: number) {
  for (const [principal, body] of downloadPlan(w).slice(0, n)) await makeDownload(db, principal, body);
}

describe("checkpoints advance", () => {
  it("the first incremental verification walks from the genesis and appends a checkpoint at the head", async () => {
    const v = await verifyChainDetailed(w.iso.operator, { mode: "incremental" });
    expect(v.report).toMatchObject({ intact: true, count: 6 });
    expect(v.from).toBeNull();
    expect(v.entriesChecked).toBe(6);
    expect(v.checkpoint).toMatchObject({ seq: 6, mode: "incremental", entriesChecked: 6 });
    at6 = v.checkpoint!;
    expect(await checkpointRows()).toEqual([{ seq: "6", mode: "incremental", entries_checked: "6" }]);
  });

  it("with nothing new it checks no entry and appends no checkpoint", async () => {
    const v = await verifyChainDetailed(w.iso.operator, { mode: "incremental" });
    expect(v.report).toMatchObject({ intact: true, count: 6 });
    expect(v.from).toEqual(at6);
    expect(v.entriesChecked).toBe(0);
    expect(v.checkpoint).toBeNull();
    expect(await checkpointRows()).toHaveLength(1);
  });

  it("after new entries it checks only those and appends a checkpoint at the new head", async () => {
    await makeSequentially(w, downloadPlan(w));
    const progress: number[] = [];
    const v = await verifyChainDetailed(w.iso.operator, {
      mode: "incremental",
      onProgress: (p) => progress.push(p.entriesDone),
    });
    const [head] = await w.iso.sql<{ hash: string }[]>`select hash from disclosures where seq = 12`;
    expect(v.report).toEqual({ intact: true, count: 12, headHash: head!.hash });
    expect(v.from).toEqual(at6);
    expect(v.entriesChecked).toBe(6);
    expect(progress).toEqual([6]);
    expect(v.checkpoint).toMatchObject({ seq: 12, hash: head!.hash, mode: "incremental", entriesChecked: 6 });
    at12 = v.checkpoint!;
  });

  it("a full walk checks every entry, appends a full checkpoint even when nothing is new, and is the banner's last full verification", async () => {
    expect(await lastFullCheckpoint(w.iso.operator)).toBeNull();
    const v = await verifyChainDetailed(w.iso.operator, { mode: "full" });
    expect(v.report).toMatchObject({ intact: true, count: 12 });
    expect(v.entriesChecked).toBe(12);
    expect(v.checkpoint).toMatchObject({ seq: 12, mode: "full", entriesChecked: 12 });
    expect(await lastFullCheckpoint(w.iso.operator)).toEqual(v.checkpoint);
    expect(await checkpointRows()).toEqual([
      { seq: "6", mode: "incremental", entries_checked: "6" },
      { seq: "12", mode: "incremental", entries_checked: "6" },
      { seq: "12", mode: "full", entries_checked: "12" },
    ]);
  });

  it("the checkpoints are append-only", async () => {
    await expect(w.iso.sql`update disclosure_checkpoints set seq = 1`).rejects.toThrow(/append-only/);
    await expect(w.iso.sql`delete from disclosure_checkpoints`).rejects.toThrow(/append-only/);
    await expect(w.iso.sql`truncate disclosure_checkpoints`).rejects.toThrow(/append-only/);
  });
});

describe("a tampered entry is found by the right mode", () => {
  it("before the last checkpoint: missed by incremental verification, found by a full walk", async () => {
    const [incremental, full] = await withTriggersDisabled(w.iso.db, async (tx, operator) => {
      await tx`update disclosures set total_bytes = total_bytes + 1 where seq = 3`;
      return [
        await verifyChainDetailed(operator, { mode: "incremental" }),
        await verifyChainDetailed(operator, { mode: "full" }),
      ];
    });
    expect(incremental.report).toMatchObject({ intact: true, count: 12 });
    expect(incremental.entriesChecked).toBe(0);
    expect(full.report).toEqual({
      intact: false,
      count: 2,
      firstBadSeq: 3,
      reason: "the entry does not hash to its recorded hash (altered)",
    });
    expect(full.checkpoint).toBeNull();
  });

  it("after the last checkpoint: found by incremental verification, which appends no checkpoint", async () => {
    const v = await withTriggersDisabled(w.iso.db, async (tx, operator) => {
      await appendInside(operator.db, 2);
      await tx`update disclosures set request_id = 'req_forged' where seq = 14`;
      const found = await verifyChainDetailed(operator, { mode: "incremental" });
      return { found, checkpoints: await tx<{ n: number }[]>`select count(*)::int as n from disclosure_checkpoints` };
    });
    expect(v.found.report).toEqual({
      intact: false,
      count: 13,
      firstBadSeq: 14,
      reason: "the entry does not hash to its recorded hash (altered)",
    });
    expect(v.found.entriesChecked).toBe(1);
    expect(v.checkpoints[0]!.n).toBe(3);
  });

  it("entries removed from the end, below the checkpoint: reported with where the log ends and when the checkpoint was verified, by both modes", async () => {
    const [incremental, full] = await withTriggersDisabled(w.iso.db, async (tx, operator) => {
      await removeEntriesFrom(tx, 11);
      return [
        await verifyChainDetailed(operator, { mode: "incremental" }),
        await verifyChainDetailed(operator, { mode: "full" }),
      ];
    });
    const [latest] = await w.iso.sql<
      { verified_at: Date }[]
    >`select verified_at from disclosure_checkpoints order by seq desc, verified_at desc limit 1`;
    const reason = `entries after seq 10 were removed: the log ends at seq 10 but seq 12 was verified at ${latest!.verified_at.toISOString()}`;
    expect(incremental.report).toEqual({ intact: false, count: 10, firstBadSeq: 11, reason });
    expect(full.report).toEqual({ intact: false, count: 10, firstBadSeq: 11, reason });
    expect(full.checkpoint).toBeNull();
  });

  it("a rewritten tail (entries removed, then new ones chained consistently in their place): the checkpoint's hash no longer matches", async () => {
    const [incremental, full] = await withTriggersDisabled(w.iso.db, async (tx, operator) => {
      await removeEntriesFrom(tx, 11);
      await appendInside(operator.db, 3);
      return [
        await verifyChainDetailed(operator, { mode: "incremental" }),
        await verifyChainDetailed(operator, { mode: "full" }),
      ];
    });
    // The first checkpoint it contradicts is at 12; the one at 6 still matches, so the rewrite lies in 7..12.
    const reason = new RegExp(
      `^history rewritten at or before seq 12: its hash is not the one verified at .*; the checkpoint at seq 6 still matches$`,
    );
    expect(incremental.report).toEqual({
      intact: false,
      count: 6,
      firstBadSeq: 7,
      reason: expect.stringMatching(reason),
    });
    expect(full.report).toEqual({ intact: false, count: 6, firstBadSeq: 7, reason: expect.stringMatching(reason) });
    // The full walk names the lowest contradicted checkpoint (the first at 12), the incremental one the newest it started from.
    expect(full.report.intact === false && full.report.reason).toContain(at12.verifiedAt.toISOString());
  });

  it("reads in batches of bounded entries and episodes: every batch size finds the same head, and the same break", async () => {
    const counts = await w.iso.sql<{ episode_count: number }[]>`select episode_count from disclosures order by seq`;
    expect(Math.max(...counts.map((c) => c.episode_count))).toBeGreaterThan(2);
    const full = await verifyChainDetailed(w.iso.operator, { mode: "full", writeCheckpoint: false });
    // Ranges of 1..5 entries, cut after 1..3 episodes (an entry of more than that is a batch alone).
    for (const entries of [1, 2, 5]) {
      for (const episodes of [1, 3, 1_000_000]) {
        const batch = { entries, episodes };
        const progress: number[] = [];
        const v = await verifyChainDetailed(w.iso.operator, {
          mode: "full",
          writeCheckpoint: false,
          batch,
          onProgress: (p) => progress.push(p.entriesDone),
        });
        expect(v.report, JSON.stringify(batch)).toEqual(full.report);
        expect(v.entriesChecked).toBe(12);
        expect(progress.at(-1)).toBe(12);
        const broken = await withTriggersDisabled(w.iso.db, async (tx, operator) => {
          await tx`update disclosures set request_id = 'req_forged' where seq = 8`;
          return verifyChainDetailed(operator, { mode: "full", batch });
        });
        expect(broken.report, JSON.stringify(batch)).toEqual({
          intact: false,
          count: 7,
          firstBadSeq: 8,
          reason: "the entry does not hash to its recorded hash (altered)",
        });
        // The tail, past the head seen at the start, in batches too: entries appended during a walk.
        const tail = await withTriggersDisabled(w.iso.db, async (_tx, operator) => {
          await appendInside(operator.db, 3);
          return verifyChainDetailed(operator, { mode: "incremental", batch });
        });
        expect(tail.report, JSON.stringify(batch)).toMatchObject({ intact: true, count: 15 });
        expect(tail.entriesChecked).toBe(3);
      }
    }
  });

  it("leaves the log intact afterwards (every tamper was rolled back)", async () => {
    const v = await verifyChainDetailed(w.iso.operator, { mode: "full", writeCheckpoint: false });
    expect(v.report).toMatchObject({ intact: true, count: 12 });
    expect(v.checkpoint).toBeNull();
  });
});
