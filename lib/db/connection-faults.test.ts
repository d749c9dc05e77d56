import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { verifyChain } from "@/lib/disclosures/verify";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
} from "@/lib/testing/fixtures";

// Database connections lost under load: `next start` serves downloads while the test terminates
// its backends (pg_terminate_backend), as a failover or an operator would. Every request must end
// within 5 s, with its download or with 503 and Retry-After (never a 500, never a hang), full
// service must be back within 10 s of the last kill, and no 201 may lack its disclosure entry.

const REQUEST_BOUND_MS = 5_000;
const RECOVERY_BOUND_MS = 10_000;
const CONCURRENCY = 16;
const REQUESTS = 300;
/** Only this server's connections are killed: other suites share the database (and the app's default name). */
const APPLICATION_NAME = `das-faults-${randomBytes(4).toString("hex")}`;

const sql = () => getDb().$client;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let server: AppServer;
let key: string;
let datasetId: string;

type Outcome = {
  startedAt: number;
  ms: number;
  status: number;
  retryAfter: string | null;
  downloadId?: string;
  code?: string;
};

beforeAll(async () => {
  const org = await createTestOrg();
  key = (await createTestKey(org.id)).secret;
  const episodes = randomEpisodes(20, 811);
  datasetId = await importTestDataset([
    {
      version: "1.0.0",
      episodes,
      files: episodes.flatMap((e) => [
        {
          path: `${e.episode_id}/cam.mp4`,
          episode_id: e.episode_id,
          stream: "cam",
          size_bytes: 10,
          sha256: "a".repeat(64),
        },
        {
          path: `${e.episode_id}/joints.parquet`,
          episode_id: e.episode_id,
          stream: "joints",
          size_bytes: 20,
          sha256: "b".repeat(64),
        },
      ]),
    },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  const url = new URL(inject("databaseUrl"));
  url.searchParams.set("application_name", APPLICATION_NAME);
  server = await startAppServer({ DATABASE_URL: url.toString() });
});

afterAll(async () => {
  await server?.stop();
});

/** One download request; a hang shows up as a duration past the bound rather than a stuck test. */
async function download(): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const res = await fetch(`${server.url}/api/v1/downloads`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ dataset_id: datasetId, version: "1.0.0", streams: ["cam"] }),
      signal: AbortSignal.timeout(60_000),
    });
    const body = (await res.json().catch(() => undefined)) as
      | { download_id?: string; error?: { code: string } }
      | undefined;
    return {
      startedAt,
      ms: Date.now() - startedAt,
      status: res.status,
      retryAfter: res.headers.get("retry-after"),
      downloadId: body?.download_id,
      code: body?.error?.code,
    };
  } catch (error) {
    return { startedAt, ms: Date.now() - startedAt, status: 0, retryAfter: null, code: (error as Error).name };
  }
}

/** Runs `count` downloads, `CONCURRENCY` at a time. */
async function load(count: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < count) outcomes.push(await download());
    }),
  );
  return outcomes;
}

/** Terminates every backend of the app server; returns how many there were. */
async function killConnections(): Promise<number> {
  const rows = await sql()`
    select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = ${APPLICATION_NAME} and datname = current_database()`;
  return rows.length;
}

function expectBounded(outcomes: Outcome[]): void {
  const slow = outcomes.filter((o) => o.ms > REQUEST_BOUND_MS);
  expect(
    slow.map((o) => `${o.status} after ${o.ms} ms`),
    "requests slower than the bound",
  ).toEqual([]);
  const wrong = outcomes.filter(
    (o) =>
      !(
        o.status === 201 ||
        (o.status === 503 && o.code === "unavailable" && o.retryAfter && /^\d+$/.test(o.retryAfter))
      ),
  );
  expect(
    wrong.map((o) => `${o.status} ${o.code} retry-after=${o.retryAfter}`),
    "answers other than 201 or 503 with Retry-After",
  ).toEqual([]);
}

/** Every download answered 201 is in the log with its episodes, and the chain verifies. */
async function expectRecorded(outcomes: Outcome[]): Promise<void> {
  const ids = outcomes.filter((o) => o.status === 201).map((o) => o.downloadId!);
  const rows = await sql()<{ id: string; episode_count: number; recorded: number }[]>`
    select d.id, d.episode_count, (select count(*)::int from disclosure_episodes de where de.disclosure_id = d.id) as recorded
    from disclosures d where d.id = any(${ids}::text[])`;
  expect(rows.length).toBe(ids.length);
  for (const row of rows) expect(row.recorded, row.id).toBe(row.episode_count);
  expect(rows.every((r) => r.episode_count === 20)).toBe(true);
  const report = await verifyChain(operatorCtx());
  expect(report.intact, JSON.stringify(report)).toBe(true);
}

describe("lost database connections", () => {
  it("answers every download within 5 s while connections are killed, and fully recovers within 10 s", async () => {
    expect((await load(CONCURRENCY)).every((o) => o.status === 201)).toBe(true); // warm: the pool is open

    let lastKill = 0;
    let killed = 0;
    const kills = (async () => {
      for (let round = 0; round < 6; round++) {
        await sleep(round === 0 ? 500 : 400);
        killed += await killConnections();
        lastKill = Date.now();
      }
    })();
    const outcomes = await load(REQUESTS);
    await kills;
    expect(killed).toBeGreaterThan(0);
    // Service goes on after the kills until well past the recovery bound.
    const after: Outcome[] = [];
    while (Date.now() < lastKill + RECOVERY_BOUND_MS + 2_000) after.push(...(await load(CONCURRENCY)));
    const all = [...outcomes, ...after];

    expectBounded(all);
    const lateFailures = all.filter((o) => o.status !== 201 && o.startedAt >= lastKill + RECOVERY_BOUND_MS);
    expect(
      lateFailures.map((o) => `${o.status} at +${o.startedAt - lastKill} ms`),
      "failures after the recovery bound",
    ).toEqual([]);
    expect(after.slice(-CONCURRENCY).every((o) => o.status === 201)).toBe(true);
    await expectRecorded(all);
    // A dead connection must fail its queries, not throw where no request can catch it.
    expect(server.output()).not.toMatch(/uncaughtException|unhandledRejection/);
  }, 180_000);

  it("fails over at once from connections killed while idle in the pool", async () => {
    expect((await load(CONCURRENCY)).every((o) => o.status === 201)).toBe(true);
    await sleep(200); // the pool's connections are now idle
    expect(await killConnections()).toBeGreaterThan(0);
    const killedAt = Date.now();
    // A terminated backend takes a moment to go: requests meeting it get 503, never a wait.
    const outcomes = await load(CONCURRENCY);
    let batch = await load(CONCURRENCY);
    while (batch.some((o) => o.status !== 201) && Date.now() < killedAt + RECOVERY_BOUND_MS) {
      outcomes.push(...batch);
      batch = await load(CONCURRENCY);
    }
    expectBounded([...outcomes, ...batch]);
    expect(
      batch.map((o) => o.status),
      "a full batch succeeds within the recovery bound",
    ).toEqual(batch.map(() => 201));
    await expectRecorded([...outcomes, ...batch]);
    expect(server.output()).not.toMatch(/uncaughtException|unhandledRejection/);
  }, 180_000);
});
