import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../db/client";
import { objectExists, s3Client } from "../storage/client";
import { renderedObjectKey, storeLocation } from "../storage/config";
import { adminCli } from "../testing/admin-cli";
import { createTestOrg, operatorCtx } from "../testing/fixtures";
import { leRobotRepo, removeRepoDir, type LeRobotRepo } from "../testing/hub-fixtures";
import { collectRenderedViews, MIN_RETENTION_SECONDS, MUST_OUTLAST_SECONDS } from "./collect";
import { renderedView, renderView, type RenderedView } from "./render";

// Collection of rendered meta/ (decision 0147) on the run's PostgreSQL and local S3 store, with
// views rendered by lib/views/render.ts from a real LeRobot v2.1 version: a view unused for the
// retention goes with the objects no other view names; a view in use, and an object a kept view
// shares, stay; a render paused between its store and its rows keeps its objects from a
// collection that runs meanwhile.

const sql = () => getDb().$client;
const location = storeLocation();
const client = s3Client(location);
const das = adminCli("collect");
let repo: LeRobotRepo;
let versionId: number;

beforeAll(async () => {
  const org = await createTestOrg();
  // An fps no other suite's fixture has, so that this suite's rendered meta/info.json is bytes of its
  // own: rendered objects are shared by content across the run's suites, which run at once.
  repo = await leRobotRepo(org.id, { version: "v2.1", episodes: 4, fps: 13 });
  const [row] = await sql()<{ id: number }[]>`
    select id from dataset_versions where dataset_id = ${repo.datasetId} and version = '1.0.0'`;
  versionId = row!.id;
});
afterAll(() => {
  client.destroy();
  if (repo) removeRepoDir(repo);
});

const newKey = () => randomBytes(32).toString("hex");
/** A view of the episodes, rendered as a withdrawal's view or a plan's is, under a key of its own. */
const render = (key: string, episodes: number[]) =>
  renderView(operatorCtx(), {
    version: { versionId, datasetId: repo.datasetId, version: "1.0.0" },
    key,
    episodes: async () => episodes,
  });
const lastUsed = (key: string, when: string) =>
  sql()`update rendered_views set used_at = now() - ${when}::interval where view_key = ${key}`;
const usedAt = async (key: string) =>
  (await sql()<{ used_at: Date }[]>`select used_at from rendered_views where view_key = ${key}`)[0]?.used_at ?? null;
const viewExists = async (key: string) =>
  (await sql()`select 1 from rendered_views where view_key = ${key}`).length > 0;
const inStore = (sha256: string) => objectExists(client, location.bucket, renderedObjectKey(sha256));
const inLedger = async (sha256: string) =>
  (await sql()`select 1 from rendered_objects where sha256 = ${sha256}`).length > 0;
const shasOf = (view: RenderedView) => view.files.map((f) => f.sha256);
const namedByAnyView = async (sha256: string) =>
  (await sql()`select 1 from rendered_files where sha256 = ${sha256} limit 1`).length > 0;

describe("collection of rendered views", () => {
  it("deletes views unused for the retention and the objects no kept view names; keeps the rest", async () => {
    const [stale, twin, other, kept] = [newKey(), newKey(), newKey(), newKey()];
    const staleView = await render(stale, [0, 1]);
    // The same episodes under another key: the same bytes, so every object of `stale` is shared.
    const twinView = await render(twin, [0, 1]);
    const otherView = await render(other, [2, 3]);
    const keptView = await render(kept, [1, 2]);
    expect(staleView.files.length).toBeGreaterThan(0);
    expect(shasOf(twinView)).toEqual(shasOf(staleView));
    await lastUsed(stale, "8 days");
    await lastUsed(other, "8 days");
    await lastUsed(kept, "6 days");
    const namedByKept = new Set([...shasOf(twinView), ...shasOf(keptView)]);
    const onlyOther = shasOf(otherView).filter((sha) => !namedByKept.has(sha));
    expect(onlyOther.length).toBeGreaterThan(0);
    for (const sha of shasOf(otherView)) expect(await inStore(sha)).toBe(true);

    // (Counts are not asserted: a server of the run collects on its own schedule too.)
    const collected = await collectRenderedViews(operatorCtx(), { retentionDays: 7 });
    expect(collected.retention_days).toBe(7);
    expect(await viewExists(stale)).toBe(false);
    expect(await viewExists(other)).toBe(false);
    expect(await viewExists(twin)).toBe(true);
    expect(await viewExists(kept)).toBe(true);
    // Unused, named by nothing kept: gone from the store and the ledger, unless another suite's view
    // (same bytes, rendered meanwhile) names it; at least this suite's own info.json went.
    const gone: string[] = [];
    for (const sha of onlyOther) {
      const named = await namedByAnyView(sha);
      expect(await inStore(sha), sha).toBe(named);
      expect(await inLedger(sha), sha).toBe(named);
      if (!named) gone.push(sha);
    }
    expect(gone.length).toBeGreaterThan(0);
    // Named by a kept view (the stale view's twin, or a view in use): still there.
    for (const sha of namedByKept) {
      expect(await inStore(sha), sha).toBe(true);
      expect(await inLedger(sha), sha).toBe(true);
    }

    // A collected view asked for again is rendered again, to the same bytes, back in the store.
    const again = await render(other, [2, 3]);
    expect(again.files).toEqual(otherView.files);
    for (const sha of onlyOther) expect(await inStore(sha), sha).toBe(true);
  });

  it("records a read's use at most once an hour, and a view read is no longer collected", async () => {
    const key = newKey();
    await render(key, [0, 2]);
    // Read within the hour of its last use: nothing is written.
    await lastUsed(key, "30 minutes");
    const before = await usedAt(key);
    expect(await renderedView(sql(), key)).not.toBeNull();
    expect(await usedAt(key)).toEqual(before);
    // Read after 8 days without use: touched, so a collection now keeps it.
    await lastUsed(key, "8 days");
    expect(await renderedView(sql(), key)).not.toBeNull();
    const [touched] = await sql()<{ fresh: boolean }[]>`
      select used_at > now() - interval '1 minute' as fresh from rendered_views where view_key = ${key}`;
    expect(touched?.fresh).toBe(true);
    await collectRenderedViews(operatorCtx(), { retentionDays: 7 });
    expect(await viewExists(key)).toBe(true);
  });

  it("keeps the objects of a render that put them and has not yet written its rows", async () => {
    // An unused view with objects no other view names: the next collection would delete those.
    const old = newKey();
    const oldView = await render(old, [0, 3]);
    await lastUsed(old, "8 days");
    const sharedRows = await sql()<{ sha256: string }[]>`
      select distinct sha256 from rendered_files where sha256 = any(${shasOf(oldView)}::text[]) and view_key <> ${old}`;
    const shared = new Set(sharedRows.map((r) => r.sha256));
    const onlyOld = shasOf(oldView).filter((sha) => !shared.has(sha));
    expect(onlyOld.length).toBeGreaterThan(0);

    // A new render of the same bytes (another key) finds them in the store and is then held just
    // before its rows: a transaction of the test's own holds an uncommitted row of the same key,
    // which its insert must wait for.
    const renewed = newKey();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const isHolding = new Promise<void>((resolve) => (holding = resolve));
    const blocker = sql()
      .begin(async (tx) => {
        await tx`insert into rendered_views (view_key, version_id, facts) values (${renewed}, ${versionId}, '{}'::jsonb)`;
        holding();
        await held;
        throw new Error("rolled back on purpose");
      })
      .catch(() => undefined);
    await isHolding;
    const rendering = render(renewed, [0, 3]);
    await waitFor(`the render waits to insert its view`, async () => {
      const rows = await sql()`select 1 from pg_stat_activity
        where wait_event_type = 'Lock' and query like '%insert into rendered_views%' and query like '%returning view_key%'`;
      return rows.length > 0;
    });

    // Collection meanwhile: the old view goes at once; its objects wait for the render's lock.
    let finished = false;
    const collecting = collectRenderedViews(operatorCtx(), { retentionDays: 7 }).finally(() => (finished = true));
    // Either it waits for the lock (as it must) or, without the lock, it has finished already.
    await waitFor("collection waits for the render's lock, or is done", async () => {
      const rows = await sql()`select 1 from pg_stat_activity
        where wait_event_type = 'Lock' and wait_event = 'advisory' and query like '%pg_advisory_xact_lock(%'`;
      return rows.length > 0 || finished;
    });
    expect(finished, "collection went on while a render held the lock").toBe(false);
    expect(await viewExists(old)).toBe(false);
    for (const sha of onlyOld) expect(await inStore(sha), sha).toBe(true);

    release();
    await blocker;
    const renewedView = await rendering;
    await collecting;
    expect(shasOf(renewedView)).toEqual(shasOf(oldView));
    expect(await viewExists(renewed)).toBe(true);
    for (const sha of shasOf(renewedView)) {
      expect(await inStore(sha), sha).toBe(true);
      expect(await inLedger(sha), sha).toBe(true);
    }
  });

  it("refuses a retention shorter than a day, which outlasts a signed URL and the lag of used_at", async () => {
    expect(MIN_RETENTION_SECONDS).toBeGreaterThan(MUST_OUTLAST_SECONDS);
    await expect(collectRenderedViews(operatorCtx(), { retentionDays: 0.5 })).rejects.toThrow(
      "a retention of 0.5 day(s) is shorter than the shortest allowed, 1 day",
    );
  });

  it("runs as das-admin store collect", async () => {
    const key = newKey();
    const view = await render(key, [1, 3]);
    await lastUsed(key, "40 days");
    const run = await das.run(["store", "collect", "--retention-days", "30", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout) as { views: number; objects: number; retention_days: number };
    expect(printed).toEqual({
      views: expect.any(Number),
      files: expect.any(Number),
      objects: expect.any(Number),
      retention_days: 30,
    });
    expect(run.stderr).toMatch(
      /Collected [0-9]+ view\(s\) unused for 30 day\(s\) \([0-9]+ rendered file row\(s\)\) and deleted [0-9]+ object\(s\) no remaining view names from the store\./,
    );
    expect(await viewExists(key)).toBe(false);
    // Its objects that no remaining view names are gone from the store; the others stay.
    const namedRows = await sql()<{ sha256: string }[]>`
      select distinct sha256 from rendered_files where sha256 = any(${shasOf(view)}::text[])`;
    const named = new Set(namedRows.map((r) => r.sha256));
    for (const sha of shasOf(view)) expect(await inStore(sha), sha).toBe(named.has(sha));
  });
});

async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
