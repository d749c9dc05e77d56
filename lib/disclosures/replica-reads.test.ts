import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type RootDb } from "@/lib/db/client";
import type { Ctx } from "@/lib/context";
import {
  buildWorld,
  downloadPlan,
  makeDownload,
  makeSequentially,
  type World,
} from "@/lib/testing/disclosure-fixtures";
import { startStreamingReplica, type StreamingReplica } from "@/lib/testing/streaming-replica";
import { adminCli } from "@/lib/testing/admin-cli";
import { searchDisclosures } from "./search";
import { exportDisclosures } from "./export";
import { verifyChainDetailed } from "./verify";
import { reviewReadsAsOf } from "./replica-reads";
import { allRecipientsOfContributor } from "@/lib/testing/disclosure-fixtures";

// DATABASE_REPLICA_URL: the reviewer's reads of the log go to a real streaming replica of the
// test server (pg_basebackup -R, or PostgreSQL's low-level backup API where the machine has no
// pg_basebackup of the server's version), a second server on a port of its own. Replay is paused
// to tell its answers from the primary's: what a page reads from it lags, and says by how much;
// appends and checkpoints go to the primary whatever the context's replica.

let w: World;
let replica: StreamingReplica;
let replicaDb: RootDb;
let reviewer: Ctx;
const admin = adminCli("replica-reads", { databaseUrl: () => w.iso.url });

beforeAll(async () => {
  w = await buildWorld("replica");
  replica = await startStreamingReplica(w.iso.url);
  // Made after the backup, so the replica has replayed transactions (its "as of" is their time).
  await makeSequentially(w, downloadPlan(w).slice(0, 3));
  replicaDb = createDb(replica.url, { max: 2 });
  reviewer = { ...w.iso.operator, replica: replicaDb };
  await replica.caughtUp();
}, 240_000);

afterAll(async () => {
  await replicaDb?.$client.end({ timeout: 5 });
  await replica?.remove();
  await w?.iso.drop();
});

const idsOf = async (ctx: Ctx) =>
  (await searchDisclosures(ctx, { filter: {}, limit: 100 })).entries.map((e) => e.id).sort();
const primaryHead = async () =>
  Number((await w.iso.sql<{ seq: string }[]>`select max(seq) as seq from disclosures`)[0]!.seq);

describe("a streaming read replica", () => {
  it("is a hot standby: a write through it is refused, so appends can only be the primary's", async () => {
    const [row] = await replicaDb.$client<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`;
    expect(row!.standby).toBe(true);
    // 503 for the client; underneath, PostgreSQL's read_only_sql_transaction.
    await expect(makeDownload(replicaDb, ...downloadPlan(w)[0]!)).rejects.toMatchObject({
      code: "unavailable",
      cause: { code: "25006" },
    });
  });

  it("serves the reviewer's reads, behind the primary while it does not replay, and says as of when", async () => {
    await replica.pauseReplay();
    try {
      const before = await idsOf(reviewer);
      const [principal, body] = downloadPlan(w)[3]!;
      // Appended by the primary although the reviewer's context names a replica: a licensee's act.
      const made = await makeDownload(w.iso.db, principal, body);
      expect(await idsOf(w.iso.operator)).toContain(made.download.download_id);
      expect(await idsOf(reviewer)).toEqual(before);
      const lag = await reviewReadsAsOf(reviewer);
      expect(lag).not.toBeNull();
      // As of a moment before the entry it does not show (whose time is whole seconds, rounded down).
      expect(lag!.asOf!.getTime()).toBeLessThan(made.occurredAt.getTime() + 1000);
      // Exports and the contributor report read the same replica.
      const exported: string[] = [];
      for await (const text of exportDisclosures(reviewer, {}, "jsonl")) exported.push(String(text));
      expect(exported.join("").trim().split("\n")).toHaveLength(before.length);
      const recipients = await allRecipientsOfContributor(reviewer, w.contributors.x);
      expect(recipients.map((r) => r.download_id)).not.toContain(made.download.download_id);
    } finally {
      await replica.resumeReplay();
    }
    await replica.caughtUp();
    expect(await idsOf(reviewer)).toEqual(await idsOf(w.iso.operator));
    const lag = await reviewReadsAsOf(reviewer);
    expect(lag!.receiving).toBe(true);
    expect(lag!.behindMs).toBeLessThan(10_000);
    // Without a replica the reads are the primary's: nothing to say.
    expect(await reviewReadsAsOf(w.iso.operator)).toBeNull();
  });

  it("walks the chain on the replica and writes the checkpoint it reached on the primary", async () => {
    await replica.caughtUp();
    await replica.pauseReplay();
    let verified: Awaited<ReturnType<typeof verifyChainDetailed>>;
    let head: number;
    try {
      const [principal, body] = downloadPlan(w)[4]!;
      await makeDownload(w.iso.db, principal, body);
      head = await primaryHead();
      verified = await verifyChainDetailed(reviewer, { mode: "full" });
    } finally {
      await replica.resumeReplay();
    }
    // The replica's head, one entry short of the primary's.
    expect(verified.report).toMatchObject({ intact: true, count: head - 1 });
    const [written] = await w.iso.sql<{ seq: string }[]>`
      select seq from disclosure_checkpoints where mode = 'full' order by id desc limit 1`;
    expect(Number(written!.seq)).toBe(head - 1);
  });

  it("is where das-admin disclosures verify --full walks when DATABASE_REPLICA_URL is set", async () => {
    await replica.caughtUp();
    await replica.pauseReplay();
    try {
      const [principal, body] = downloadPlan(w)[5]!;
      await makeDownload(w.iso.db, principal, body);
      const head = await primaryHead();
      const run = await admin.run(["disclosures", "verify", "--full", "--threads", "1"], {
        env: { DATABASE_REPLICA_URL: replica.url },
      });
      expect(run.stderr).toContain(`Disclosure log intact: ${head - 1} entries verified`);
      expect(run.code).toBe(0);
    } finally {
      await replica.resumeReplay();
    }
  });
});
