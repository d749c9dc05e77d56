import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildWorld, downloadPlan, makeSequentially, type World } from "@/lib/testing/disclosure-fixtures";
import { verifyChain, verifyChainDetailed } from "./verify";

// The banner over the reviewer's log: the latest incremental verification of the chain (what was
// appended since the last checkpoint), run in the background at most once a minute per process. Each test loads the module afresh, so that it
// starts without a result of an earlier one.

let w: World;

beforeAll(async () => {
  w = await buildWorld("status");
  await makeSequentially(w, downloadPlan(w));
});

afterAll(async () => {
  await w?.iso.drop();
});

const freshModule = async () => {
  vi.resetModules();
  return import("./chain-status");
};

describe("chainStatus", () => {
  it("waits for the first walk and reports the chain with the time it was checked", async () => {
    const { chainStatus } = await freshModule();
    const before = Date.now();
    const status = await chainStatus(w.iso.operator, 30_000);
    const [head] = await w.iso.sql<{ hash: string }[]>`select hash from disclosures order by seq desc limit 1`;
    expect(status.report).toEqual({ intact: true, count: 6, headHash: head!.hash });
    // Incremental from the genesis, since nothing was verified before; never verified in full yet.
    expect(status).toMatchObject({ from: null, entriesChecked: 6, lastFull: null });
    expect(status.checkedAt!.getTime()).toBeGreaterThanOrEqual(before);
    expect(status.checkedAt!.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it("answers from its last result within a minute, without walking again", async () => {
    const { chainStatus } = await freshModule();
    const first = await chainStatus(w.iso.operator, 30_000);
    // Another download after the check: a new walk would count it.
    await makeSequentially(w, downloadPlan(w).slice(0, 1));
    const second = await chainStatus(w.iso.operator, 30_000);
    expect(second).toBe(first);
    expect(second.report).toMatchObject({ count: 6 });
  });

  it("checks only what follows the last checkpoint: a tamper after it is reported, one before it is the full walk's to find", async () => {
    const sql = w.iso.sql;
    const full = await verifyChainDetailed(w.iso.operator, { mode: "full" });
    expect(full.report).toMatchObject({ intact: true, count: 7 });
    /** Committed, as a superuser could: this database is dropped afterwards. */
    const superuserEdit = async (seq: number) => {
      await sql`alter table disclosures disable trigger disclosures_append_only`;
      await sql`update disclosures set request_id = 'req_forged' where seq = ${seq}`;
      await sql`alter table disclosures enable trigger disclosures_append_only`;
    };

    await superuserEdit(4);
    await makeSequentially(w, downloadPlan(w).slice(0, 1));
    const before = await (await freshModule()).chainStatus(w.iso.operator, 30_000);
    // Only entry 8 was hashed; entry 4 lies below the checkpoint at 7.
    expect(before).toMatchObject({
      report: { intact: true, count: 8 },
      from: { seq: 7 },
      entriesChecked: 1,
      lastFull: { seq: 7, mode: "full" },
    });
    expect(before.report && before.lastFull!.verifiedAt).toEqual(full.checkpoint!.verifiedAt);
    expect(await verifyChain(w.iso.operator, { mode: "full" })).toMatchObject({ intact: false, firstBadSeq: 4 });

    await makeSequentially(w, downloadPlan(w).slice(0, 1));
    await superuserEdit(9);
    const after = await (await freshModule()).chainStatus(w.iso.operator, 30_000);
    expect(after).toMatchObject({
      report: {
        intact: false,
        count: 8,
        firstBadSeq: 9,
        reason: "the entry does not hash to its recorded hash (altered)",
      },
      from: { seq: 8 },
      entriesChecked: 0,
    });
  });

  it("shows no result yet, rather than making the page wait, when the first walk takes longer than it may wait", async () => {
    const { chainStatus } = await freshModule();
    // Another connection holds the log locked, so the walk cannot read it until released.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = w.iso.anotherPool(1).$client.begin(async (tx) => {
      await tx`lock table disclosures in access exclusive mode`;
      locked();
      await released;
    });
    await isLocked;
    expect(await chainStatus(w.iso.operator, 50)).toEqual({ report: null, checkedAt: null });
    release();
    await holding;
    // The walk went on in the background; its result is there once it is done.
    await vi.waitFor(async () => expect((await chainStatus(w.iso.operator, 0)).report).not.toBeNull(), {
      timeout: 30_000,
      interval: 20,
    });
  });
});
