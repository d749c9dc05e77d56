import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildWorld, downloadPlan, makeSequentially, type World } from "@/lib/testing/disclosure-fixtures";

// The banner over the reviewer's log: the latest verification of the chain, walked in the
// background at most once a minute per process. Each test loads the module afresh, so that it
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

  it("reports a broken chain at the first bad entry", async () => {
    const { chainStatus } = await freshModule();
    const sql = w.iso.sql;
    // Committed, as a superuser could: this database is dropped afterwards.
    await sql`alter table disclosures disable trigger disclosures_append_only`;
    await sql`update disclosures set request_id = 'req_forged' where seq = 4`;
    await sql`alter table disclosures enable trigger disclosures_append_only`;
    const status = await chainStatus(w.iso.operator, 30_000);
    expect(status.report).toEqual({ intact: false, count: 3, firstBadSeq: 4, reason: "the entry does not hash to its recorded hash (altered)" });
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
    await vi.waitFor(async () => expect((await chainStatus(w.iso.operator, 0)).report).not.toBeNull(), { timeout: 30_000, interval: 20 });
  });
});
