// npm run bench:withdrawal -- [--entries 1000000] [--organizations 1000] [--reuse] [--workers N]
// A disclosure log of N entries to O organisations (scripts/bench/disclosure-log.ts: a valid chain,
// a realistic mix), then the withdrawal of the contributor whose episodes reached the most
// organisations, through the product's own verb (lib/withdrawals/withdraw.ts): the time of the
// whole transaction (hiding the episodes, the audit, and computing every notice from the log) and
// of computing the notices alone, run again on a copy of the withdrawal. Webhook deliveries are
// not built, so `deliveries_per_s` is absent. The last line of stdout is one JSON object.
import { totalmem, userInfo } from "node:os";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startEmbeddedDefault } from "@/lib/dev/embedded-default";
import { migrateDatabase } from "@/lib/db/migrate";
import { createDb, sqlOf } from "@/lib/db/client";
import type { Ctx } from "@/lib/context";
import { withdrawEpisodes } from "@/lib/withdrawals/withdraw";
import { computeWithdrawalNotices } from "@/lib/withdrawals/notices";
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
const runtime = await startEmbeddedDefault({ sharedBuffers: `${Math.floor(totalmem() / 4 / 2 ** 20)}MB` });
const name = `bench_withdrawal_${entries}_${organizations}`;
const admin = postgres(runtime.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
const [found] = await admin<{ complete: boolean }[]>`
  select coalesce(shobj_description(oid, 'pg_database') = 'complete', false) as complete from pg_database where datname = ${name}`;
const reuse = Boolean(values.reuse && found?.complete);
if (found && !reuse) await admin.unsafe(`drop database ${name} with (force)`);
if (!reuse) await admin.unsafe(`create database ${name}`);
await admin.end();
const url = new URL(runtime.env.DATABASE_URL!);
url.pathname = `/${name}`;
await migrateDatabase(url.toString());
const db = createDb(url.toString(), { max: 6 });
const sql = sqlOf(db);
const ctx: Ctx = {
  db,
  requestId: "bench-withdrawal",
  principal: { kind: "operator", name: userInfo().username, organizationId: null },
};

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
  // The computation alone, from scratch, in a transaction rolled back: the notices' unique key
  // would otherwise make it a no-op. Twice: the first after a restart reads from disk.
  const computeOnce = () =>
    sql
      .begin(async (tx) => {
        await tx`alter table notices disable trigger notices_append_only`;
        await tx`delete from notices where withdrawal_id = ${withdrawalId}`;
        const started = performance.now();
        const made = await computeWithdrawalNotices(tx as unknown as typeof sql, withdrawalId);
        const seconds = (performance.now() - started) / 1000;
        if (made !== notices) throw new Error(`computed ${made} notices again, ${notices} the first time`);
        throw Object.assign(new Error("rollback"), { seconds });
      })
      .catch((e: { message: string; seconds?: number }) => {
        if (e.message !== "rollback") throw e;
        return e.seconds!;
      });
  const coldSeconds = await computeOnce();
  const computeSeconds = await computeOnce();
  progress(`notices computed again in ${coldSeconds.toFixed(2)} s, then in ${computeSeconds.toFixed(2)} s`);
  process.stdout.write(
    `${JSON.stringify({
      entries,
      organizations,
      contributor: chosen!.contributor,
      recipient_organizations: chosen!.organizations,
      notices,
      compute_s: Number(computeSeconds.toFixed(3)),
      first_compute_s: Number(coldSeconds.toFixed(3)),
      withdrawal_transaction_s: transactionSeconds === null ? null : Number(transactionSeconds.toFixed(3)),
    })}\n`,
  );
} finally {
  await db.$client.end({ timeout: 5 });
  await runtime.stop();
}
