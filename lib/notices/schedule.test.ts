import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ctx } from "@/lib/context";
import { importVersion } from "@/lib/catalog/import/import-version";
import { createOrganization } from "@/lib/admin/organizations";
import { endLicence, grantLicence, revokeLicence } from "@/lib/admin/licences";
import { startJobQueue, JOB_QUEUES } from "@/lib/db/job-queue";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import { startWebhookReceiver } from "@/lib/testing/webhook-receiver";
import { randomEpisodes, uniqueId, writeImportDir } from "@/lib/testing/fixtures";
import { addWebhookEndpoint } from "@/lib/admin/webhook-endpoints";
import { startNoticeWorker, type NoticeDeliveryWorker } from "@/lib/notices/worker";
import { acknowledgeNotice } from "@/lib/notices/acknowledge";
import { listNotices } from "@/lib/notices/list-notices";
import { reviewWithdrawals } from "@/lib/withdrawals/review";
import { NOTICE_SCHEDULE_CRON, runNoticeSchedule } from "./schedule";

// The notices that fall due with time (licence-end warnings, reminders of withdrawal notices not
// acknowledged), on a database of their own: the schedule reads every licence and notice of its
// database, and the tests move its clock (`now`) weeks ahead. Runs on two pools at once stand for
// two instances.

// Before anything reads the environment: the receiver is on this machine.
process.env.WEBHOOKS_ALLOW_PRIVATE = "1";

const DAY = 86_400_000;
const T0 = Date.now();
const at = (days: number) => new Date(T0 + days * DAY);

let iso: IsolatedDb;
let second: Ctx;
let datasetId: string;
const workers: NoticeDeliveryWorker[] = [];
beforeAll(async () => {
  iso = await createIsolatedDb("notices");
  second = { ...iso.operator, db: iso.anotherPool(2) };
  datasetId = uniqueId("ls");
  const dir = writeImportDir(datasetId, { version: "1.0.0", episodes: randomEpisodes(3, 2628) });
  try {
    await importVersion(iso.sql, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await iso?.drop();
});

const newOrg = () => createOrganization(iso.operator, { slug: uniqueId("org") });
const holding = async (endsAt: Date) => {
  const org = await newOrg();
  await grantLicence(iso.operator, { organizationId: org.id, datasetId, version: "1.0.0", endsAt });
  return org;
};
/** Runs the schedule on both pools at once, as two instances whose timers fire together. */
const runTwice = async (now: Date, reminderDays = 7) => {
  const [a, b] = await Promise.all([
    runNoticeSchedule(iso.operator, { now, reminderDays }),
    runNoticeSchedule(second, { now, reminderDays }),
  ]);
  return { licence_endings: a.licence_endings + b.licence_endings, reminders: a.reminders + b.reminders };
};
const warnings = async (organizationId: string) =>
  (
    await iso.sql<{ days_before: number; ends_at: Date }[]>`
      select threshold_days as days_before, ends_at from notices
      where organization_id = ${organizationId} and kind = 'licence_ending' order by created_at, threshold_days desc`
  ).map((w) => [w.days_before, w.ends_at.toISOString()]);

describe("licence-end warnings", () => {
  it("go out once at 30 and once at 7 days before the end, on two instances too; moved ends are judged at run time", async () => {
    const end = at(50);
    const steady = await holding(end);
    const endedEarly = await holding(end);
    const extended = await holding(end);
    const revoked = await holding(end);
    await revokeLicence(iso.operator, { organizationId: revoked.id, datasetId, version: "1.0.0" });

    expect(await runTwice(at(19))).toEqual({ licence_endings: 0, reminders: 0 });
    // 29 days before: the 30-day warning, once however many instances run it.
    expect(await runTwice(at(21))).toEqual({ licence_endings: 3, reminders: 0 });
    expect(await runTwice(at(21))).toEqual({ licence_endings: 0, reminders: 0 });

    // One licence ends early (before the next run), another is extended by 70 days.
    await endLicence(iso.operator, { organizationId: endedEarly.id, datasetId, version: "1.0.0", endsAt: at(20) });
    const later = at(120);
    await endLicence(iso.operator, { organizationId: extended.id, datasetId, version: "1.0.0", endsAt: later });
    expect(await runTwice(at(30))).toEqual({ licence_endings: 0, reminders: 0 });

    // A licence granted 5 days before its end gets the 7-day warning only.
    const late = await holding(at(49));
    expect(await runTwice(at(44))).toEqual({ licence_endings: 2, reminders: 0 });
    expect(await runTwice(at(44))).toEqual({ licence_endings: 0, reminders: 0 });
    // The extended licence is warned again, of its new end, when that comes near.
    expect(await runTwice(at(91))).toEqual({ licence_endings: 1, reminders: 0 });

    expect(await warnings(steady.id)).toEqual([
      [30, end.toISOString()],
      [7, end.toISOString()],
    ]);
    expect(await warnings(endedEarly.id)).toEqual([[30, end.toISOString()]]);
    expect(await warnings(extended.id)).toEqual([
      [30, end.toISOString()],
      [30, later.toISOString()],
    ]);
    expect(await warnings(late.id)).toEqual([[7, at(49).toISOString()]]);
    expect(await warnings(revoked.id)).toEqual([]);

    // The organisation reads them as notices of their own kind.
    const member: Ctx = {
      ...iso.operator,
      principal: { kind: "api_key", keyId: "k", keyPrefix: "das_k", organizationId: steady.id, narrowed: false },
    };
    const { notices } = await listNotices(member, { limit: 10 });
    expect(notices.map((n) => (n.kind === "licence_ending" ? [n.kind, n.days_before, n.ends_at] : n.kind))).toEqual(
      expect.arrayContaining([
        ["licence_ending", 30, end.toISOString()],
        ["licence_ending", 7, end.toISOString()],
      ]),
    );
  }, 60_000);
});

describe("reminders of withdrawal notices not acknowledged", () => {
  it("go out every NOTICE_REMINDER_DAYS days while outstanding, once per period, and reviewers see them", async () => {
    const [outstanding, acknowledged] = [await newOrg(), await newOrg()];
    // An endpoint, so that each reminder is queued for delivery (nothing listens there; it stays queued).
    await addWebhookEndpoint(iso.operator, { organizationId: outstanding.id, url: "http://127.0.0.1:9/das" });
    // Notices as a withdrawal writes them (lib/notices/withdrawal-notices.ts), written at T0.
    const withdrawalId = uniqueId("wd");
    await iso.sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count)
      values (${withdrawalId}, 'operator', 'test', 'test (das-admin)', 'consent withdrawn', 1)`;
    const noticeIds = [`nt_${randomBytes(16).toString("hex")}`, `nt_${randomBytes(16).toString("hex")}`];
    for (const [i, org] of [outstanding, acknowledged].entries())
      await iso.sql`insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
        values (${noticeIds[i]!}, ${org.id}, 'withdrawal', ${withdrawalId}, '{e-1}'::text[], '[]'::jsonb)`;
    const keyOf = (organizationId: string): Ctx => ({
      ...iso.operator,
      principal: { kind: "api_key", keyId: "k", keyPrefix: "das_k", organizationId, narrowed: false },
    });
    await acknowledgeNotice(keyOf(acknowledged.id), {
      noticeId: noticeIds[1]!,
      statement: "Deleted.",
      deletedPaths: [],
    });

    expect((await runTwice(at(6))).reminders).toBe(0);
    expect((await runTwice(at(8))).reminders).toBe(1);
    expect((await runTwice(at(8))).reminders).toBe(0);
    // The next period counts from the last reminder.
    expect((await runTwice(at(14))).reminders).toBe(0);
    expect((await runTwice(at(15.5))).reminders).toBe(1);
    // A schedule that did not run for weeks sends one reminder, not one per period missed.
    expect((await runTwice(at(60))).reminders).toBe(1);
    expect((await runTwice(at(60), 0)).reminders).toBe(0);

    const reminders = await iso.sql<{ notice_id: string; number: number; reminded_at: Date }[]>`
      select notice_id, number, reminded_at from notice_reminders order by number`;
    expect(reminders.map((r) => [r.notice_id, r.number, r.reminded_at.toISOString()])).toEqual([
      [noticeIds[0], 1, at(8).toISOString()],
      [noticeIds[0], 2, at(15.5).toISOString()],
      [noticeIds[0], 3, at(60).toISOString()],
    ]);
    // Each reminder is its own message to receivers (its own webhook-id), queued with the notice's id.
    const jobs = await iso.sql<{ message_id: string; event_type: string }[]>`
      select data->>'messageId' as message_id, data->>'eventType' as event_type from pgboss.job
      where data->>'noticeId' = ${noticeIds[0]!}`;
    expect(jobs.map((j) => j.event_type)).toEqual(Array(3).fill("notice.withdrawal_reminder"));
    expect(new Set(jobs.map((j) => j.message_id)).size).toBe(3);

    const [review] = await reviewWithdrawals(iso.operator, { limit: 5 });
    expect(review!.recipients.map((r) => [r.organization_id, r.reminders, r.last_reminded_at])).toEqual([
      [outstanding.id, 3, at(60).toISOString()],
      [acknowledged.id, 0, null],
    ]);
    const { notices } = await listNotices(keyOf(outstanding.id), { limit: 5 });
    expect(notices).toMatchObject([{ kind: "withdrawal", reminders: 3, last_reminded_at: at(60).toISOString() }]);
  }, 60_000);
});

describe("the schedule in the delivery worker", () => {
  it("is registered by every worker and its job, sent twice to two workers, warns and delivers once", async () => {
    const receiver = await startWebhookReceiver({ path: "/das" });
    const boss = await startJobQueue(iso.url, { max: 1 });
    try {
      // Ends in 10 days of the real clock: the job judges by it.
      const org = await holding(new Date(Date.now() + 10 * DAY));
      const endpoint = await addWebhookEndpoint(iso.operator, {
        organizationId: org.id,
        url: receiver.url,
      });
      receiver.verifyWith(endpoint.secret);
      for (const db of [iso.db, second.db])
        workers.push(await startNoticeWorker({ url: iso.url, db, pollingIntervalSeconds: 0.5 }));
      const schedules = await iso.sql<{ name: string; cron: string; timezone: string }[]>`
        select name, cron, timezone from pgboss.schedule`;
      expect(schedules).toEqual([{ name: JOB_QUEUES.noticeSchedule, cron: NOTICE_SCHEDULE_CRON, timezone: "UTC" }]);

      // What pg-boss's cron does when the hour comes, twice over.
      await boss.send(JOB_QUEUES.noticeSchedule, {});
      await boss.send(JOB_QUEUES.noticeSchedule, {});
      await receiver.waitFor(1, 30_000);
      // Give a duplicate the time to arrive if there were one.
      await new Promise((r) => setTimeout(r, 2_000));
      expect(receiver.received).toMatchObject([{ verified: true }]);
      expect(receiver.events()[0]).toMatchObject({
        type: "notice.licence_ending",
        data: { kind: "licence_ending", dataset_id: datasetId, version: "1.0.0", days_before: 30 },
      });
      expect(await warnings(org.id)).toHaveLength(1);
    } finally {
      await boss.stop({ graceful: false, wait: true });
      await receiver.close();
    }
  }, 90_000);
});
