// npm run bench:withdrawal -- [--entries 1000000] [--organizations 1000] [--reuse] [--workers N]
// A disclosure log of N entries to O organisations (scripts/bench/disclosure-log.ts: a valid chain,
// a realistic mix), then the withdrawal of the contributor whose episodes reached the most
// organisations, through the product's own verb (lib/withdrawals/withdraw.ts): the time of the
// whole transaction (hiding the episodes, the audit, and computing every notice from the log) and
// of computing and enqueueing the notices alone, run again in a transaction rolled back; then each
// notice's webhook, one endpoint per recipient organisation on a receiver on this machine that
// verifies every signature, delivered by the product's worker (scripts/bench/webhook-receiver.ts,
// shared with bench:webhooks). The last line of stdout is one JSON object.
import { totalmem, userInfo } from "node:os";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startEmbeddedDefault } from "@/lib/dev/embedded-default";
import { migrateDatabase } from "@/lib/db/migrate";
import { createDb, sqlOf } from "@/lib/db/client";
import type { Ctx } from "@/lib/context";
import { tellWithdrawalNotices, withdrawEpisodes } from "@/lib/withdrawals/withdraw";
import { addWebhookEndpoint, removeWebhookEndpoint } from "@/lib/admin/webhook-endpoints";
import { startVerifyingReceiver, timeDeliveries } from "./bench/webhook-receiver";
import { computeWithdrawalNotices } from "@/lib/notices/withdrawal-notices";
import { BENCH_SHAPE, generateDisclosureLog } from "./bench/disclosure-log";
import { progress } from "./bench/common";

const { values } = parseArgs({
  options: {
    entries: { type: "string", default: "1000000" },
    organizations: { type: "string", default: "1000" },
    reuse: { type: "boolean", default: false },
    workers: { type: "string", default: String((await import("node:os")).cpus().length) },
  },
});
const entries = Number(values.entries);
const organizations = Number(values.organizations);
if (!Number.isInteger(entries) || entries < 1000) throw new Error("--entries must be a whole number of at least 1000");
if (!Number.isInteger(organizations) || organizations < 1) throw new Error("--organizations must be a whole number");

process.env.DAS_DATA_DIR ??= ".data/bench-withdrawal";
// The receiver is on this machine; deliveries are worked by this process's worker, started when timed.
process.env.WEBHOOKS_ALLOW_PRIVATE = "1";
process.env.NOTICE_WORKER = "off";
const runtime = await startEmbeddedDefault({ sharedBuffers: `${Math.floor(totalmem() / 4 / 2 ** 20)}MB` });
// The benchmark makes databases and, for its bulk load, drops and rebuilds keys: the owner's work.
const ownerUrl = runtime.env.DATABASE_OWNER_URL ?? runtime.env.DATABASE_URL!;
// APP_SECRET among them, which seals the webhook endpoints' secrets.
Object.assign(process.env, runtime.env);
const name = `bench_withdrawal_${entries}_${organizations}`;
const admin = postgres(ownerUrl, { max: 1, onnotice: () => {} });
const [found] = await admin<{ complete: boolean }[]>`
  select coalesce(shobj_description(oid, 'pg_database') = 'complete', false) as complete from pg_database where datname = ${name}`;
const reuse = Boolean(values.reuse && found?.complete);
if (found && !reuse) await admin.unsafe(`drop database ${name} with (force)`);
if (!reuse) await admin.unsafe(`create database ${name}`);
await admin.end();
const url = new URL(ownerUrl);
url.pathname = `/${name}`;
await migrateDatabase(url.toString());
const db = createDb(url.toString(), { max: 6 });
const sql = sqlOf(db);
const ctx: Ctx = {
  db,
  requestId: "bench-withdrawal",
  principal: { kind: "operator", name: userInfo().username, organizationId: null },
};

const cleanups: (() => Promise<void>)[] = [];
try {
  if (!reuse) {
    // Fewer episodes and contributors than bench:review's catalog, and as many keys as organisations, so that one
    // contributor's episodes reach most of the organisations.
    await generateDisclosureLog(
      sql,
      {
        ...BENCH_SHAPE,
        entries,
        organizations,
        keys: organizations,
        versions: 50,
        episodes: 100_000,
        contributors: 200,
      },
      progress,
      Number(values.workers),
    );
    await sql.unsafe(`comment on database ${name} is 'complete'`);
  } else progress(`reusing ${name}`);

  // The contributor whose episodes reached the most organisations, from the contributor summary.
  const [chosen] = await sql<{ contributor: string; organizations: number; entries: number }[]>`
    select contributor, count(distinct organization_id)::int as organizations, count(*)::int as entries
    from disclosure_contributors where organization_id is not null
    group by contributor order by 2 desc, 3 desc limit 1`;
  progress(`withdrawing ${chosen!.contributor}: ${chosen!.entries} entries to ${chosen!.organizations} organisations`);

  // One webhook endpoint per recipient organisation, on this run's receiver (a reused database's
  // endpoints of an earlier run, on another port, are removed first).
  const receiver = await startVerifyingReceiver();
  cleanups.push(() => receiver.close());
  const recipients = await sql<{ organization_id: string }[]>`
    select distinct organization_id from disclosure_contributors
    where contributor = ${chosen!.contributor} and organization_id is not null order by organization_id`;
  const stale = await sql<{ id: string }[]>`
    select id from webhook_endpoints where removed_at is null and organization_id = any(${recipients.map((r) => r.organization_id)}::text[])`;
  for (const { id } of stale) await removeWebhookEndpoint(ctx, { id });
  for (const { organization_id } of recipients) {
    const added = await addWebhookEndpoint(ctx, {
      organizationId: organization_id,
      url: `${receiver.base}/${organization_id}`,
    });
    receiver.verifyWith(organization_id, added.secret);
  }
  progress(`${recipients.length} webhook endpoints on ${receiver.base}`);
  const [already] = await sql<
    { n: number }[]
  >`select count(*)::int as n from withdrawals where contributor = ${chosen!.contributor}`;
  let withdrawalId: string;
  let transactionSeconds: number | null = null;
  let notices: number;
  if (already!.n) {
    const [earlier] = await sql<{ id: string }[]>`
      select id from withdrawals where contributor = ${chosen!.contributor} limit 1`;
    withdrawalId = earlier!.id;
    notices = (
      await sql<{ n: number }[]>`select count(*)::int as n from notices where withdrawal_id = ${withdrawalId}`
    )[0]!.n;
    // Delivered again, to this run's endpoints, as the withdrawal delivered them the first time.
    await tellWithdrawalNotices(sql, withdrawalId);
  } else {
    const started = performance.now();
    const done = await withdrawEpisodes(ctx, { contributor: chosen!.contributor, reason: "bench:withdrawal" });
    transactionSeconds = (performance.now() - started) / 1000;
    withdrawalId = done.withdrawal_id;
    notices = done.notices;
    progress(
      `withdrawal ${withdrawalId}: ${done.episode_ids.length} episodes, ${notices} notices in ${transactionSeconds.toFixed(2)} s`,
    );
  }
  // The computation and the enqueueing alone, from scratch, in a transaction rolled back: the
  // notices' unique key would otherwise make it a no-op. Twice: the first after a restart reads from disk.
  const computeOnce = () =>
    sql
      .begin(async (tx) => {
        await tx`alter table notices disable trigger notices_append_only`;
        await tx`delete from notices where withdrawal_id = ${withdrawalId}`;
        const started = performance.now();
        const made = await computeWithdrawalNotices(tx as unknown as typeof sql, withdrawalId);
        const computed = performance.now();
        await tellWithdrawalNotices(tx as unknown as typeof sql, withdrawalId);
        const seconds = (performance.now() - started) / 1000;
        const enqueueSeconds = (performance.now() - computed) / 1000;
        if (made !== notices) throw new Error(`computed ${made} notices again, ${notices} the first time`);
        throw Object.assign(new Error("rollback"), { seconds, enqueueSeconds });
      })
      .catch((e: { message: string; seconds?: number; enqueueSeconds?: number }) => {
        if (e.message !== "rollback") throw e;
        return { seconds: e.seconds!, enqueueSeconds: e.enqueueSeconds! };
      });
  const cold = await computeOnce();
  const warm = await computeOnce();
  const [coldSeconds, computeSeconds] = [cold.seconds, warm.seconds];
  progress(
    `notices computed and enqueued again in ${coldSeconds.toFixed(2)} s, then in ${computeSeconds.toFixed(2)} s (enqueueing ${warm.enqueueSeconds.toFixed(2)} s)`,
  );

  // The deliveries the withdrawal queued (one per notice: one endpoint per organisation), timed.
  const delivered = await timeDeliveries({ url: url.toString(), db, receiver, total: notices });
  progress(`${notices} webhook deliveries in ${delivered.seconds.toFixed(2)} s`);
  process.stdout.write(
    `${JSON.stringify({
      entries,
      organizations,
      contributor: chosen!.contributor,
      recipient_organizations: chosen!.organizations,
      notices,
      compute_s: Number(computeSeconds.toFixed(3)),
      first_compute_s: Number(coldSeconds.toFixed(3)),
      enqueue_s: Number(warm.enqueueSeconds.toFixed(3)),
      deliver_s: Number(delivered.seconds.toFixed(3)),
      deliveries_per_s: delivered.deliveriesPerSecond,
      withdrawal_transaction_s: transactionSeconds === null ? null : Number(transactionSeconds.toFixed(3)),
    })}\n`,
  );
} finally {
  for (const cleanup of cleanups) await cleanup();
  await db.$client.end({ timeout: 5 });
  await runtime.stop();
}
