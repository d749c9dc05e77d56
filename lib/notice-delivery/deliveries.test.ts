import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { withTx } from "@/lib/db/tx";
import { sqlOf } from "@/lib/db/client";
import { env } from "@/lib/env";
import { createUser } from "@/lib/admin/users";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";
import { filesOf, userPrincipal } from "@/lib/testing/disclosure-fixtures";
import { createDownload } from "@/lib/downloads/create-download";
import { withdrawEpisodes } from "@/lib/withdrawals/withdraw";
import { reviewWithdrawals } from "@/lib/withdrawals/review";
import { Rollback } from "@/lib/testing/isolated-db";
import { tellTestNotice } from "@/lib/testing/notices";
import { startWebhookReceiver } from "@/lib/testing/webhook-receiver";
import { addWebhookEndpoint, removeWebhookEndpoint } from "@/lib/admin/webhook-endpoints";
import { startNoticeWorker, type NoticeDeliveryWorker } from "@/lib/notices/worker";
import { listDeliveryAttempts } from "./attempts";
import { listNotices } from "@/lib/notices/list-notices";
import type { WithdrawalNotice } from "@/lib/notices/records";

// Notice deliveries with real parts: the run's PostgreSQL (pg-boss's jobs in it), a real HTTP
// receiver that verifies every signature with the standardwebhooks package, and a real SMTP server.

/** A receiver that answers 500 to its first `failures` requests, then 200. */
const startReceiver = (failures: number) =>
  startWebhookReceiver({
    path: "/das-notices",
    status: (n) => (n < failures ? 500 : 200),
    answer: (status) => (status === 500 ? "down for maintenance" : "ok"),
  });

type Mail = { from: string; to: string[]; text: string };
const mails: Mail[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      mails.push({
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
        to: session.envelope.rcptTo.map((r) => r.address),
        text: Buffer.concat(chunks).toString("utf8"),
      });
      callback();
    });
  },
});
await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
// Before anything reads the environment: a receiver on this machine, SMTP on this machine, short retries.
process.env.WEBHOOKS_ALLOW_PRIVATE = "1";
process.env.NOTICE_RETRY_DELAY_S = "1";
process.env.SMTP_URL = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
process.env.SMTP_FROM = "notices@das.test";

const workers: NoticeDeliveryWorker[] = [];
const startWorker = async () => {
  const worker = await startNoticeWorker({
    url: process.env.DATABASE_URL!,
    db: getDb(),
    pollingIntervalSeconds: 0.5,
    // The schedule's notices are tested on a database of their own (lib/notices/schedule.test.ts).
    schedule: false,
  });
  workers.push(worker);
  return worker;
};

async function waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(() => {
  expect(env()).toMatchObject({ WEBHOOKS_ALLOW_PRIVATE: true, NOTICE_RETRY_DELAY_S: 1, SMTP_URL: expect.any(String) });
});
afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

describe("a notice delivered by webhook and email", () => {
  it("arrives once the receiver recovers, across a worker restart, with one webhook-id and valid signatures", async () => {
    const operator = operatorCtx();
    const org = await createTestOrg();
    const emails = [`${uniqueId("a")}@acme.test`, `${uniqueId("b")}@acme.test`];
    for (const email of emails) await createUser(operator, { email, role: "licensee", organizationId: org.id });
    const receiver = await startReceiver(2);
    try {
      const endpoint = await addWebhookEndpoint(operator, { organizationId: org.id, url: receiver.url });
      receiver.verifyWith(endpoint.secret);
      // Told inside the transaction that writes the notice: rolled back, nothing is ever sent.
      let rolledBack = "";
      await withTx(operator, async (tx) => {
        rolledBack = (await tellTestNotice(sqlOf(tx.db), org.id)).noticeId;
        throw new Rollback(null);
      }).catch((e) => expect(e).toBeInstanceOf(Rollback));
      const { noticeId, enqueued } = await withTx(operator, (tx) => tellTestNotice(sqlOf(tx.db), org.id));
      expect(enqueued).toMatchObject({ webhookEndpointIds: [endpoint.id], email: true });

      // The receiver is down: the first worker meets it twice, then stops (a restart, a deploy).
      const first = await startWorker();
      await waitFor("two failed attempts", () => receiver.received.length >= 2);
      await first.stop();
      const afterStop = receiver.received.length;
      const failed = await listDeliveryAttempts(operator, { noticeId, endpointId: endpoint.id });
      expect(failed.map((a) => [a.attempt, a.delivered, a.status_code])).toEqual(
        [...Array(afterStop).keys()].map((i) => [afterStop - i, false, 500]).slice(0, failed.length),
      );
      expect(failed[0]!.error).toBe("answered 500: down for maintenance");
      expect(failed[0]!.next_retry_at).toBeInstanceOf(Date);

      // Nothing is sent while no worker runs; a new one picks the job up from the database.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(receiver.received.length).toBe(afterStop);
      await startWorker();
      await waitFor("the delivery", () => receiver.received.some((r) => r.status === 200));
      const attempts = await waitFor("the delivered attempt recorded", async () => {
        const rows = await listDeliveryAttempts(operator, { noticeId, endpointId: endpoint.id });
        return rows[0]?.delivered ? rows : null;
      });

      const got = receiver.received;
      expect(got.length).toBe(3);
      expect(got.every((r) => r.verified)).toBe(true);
      expect(new Set(got.map((r) => r.id))).toEqual(new Set([enqueued.messageId]));
      expect(new Set(got.map((r) => r.body)).size).toBe(1);
      expect(JSON.parse(got[0]!.body)).toMatchObject({
        type: "notice.withdrawal",
        data: { notice_id: noticeId, kind: "withdrawal", episode_ids: ["ep-1", "ep-7"] },
      });
      // each attempt carries its own timestamp (receivers refuse stale ones), signed with it
      expect(got.every((r) => Math.abs(r.timestamp - Date.now() / 1000) < 60)).toBe(true);
      expect(attempts.map((a) => [a.attempt, a.delivered, a.status_code, a.next_retry_at])).toEqual([
        [3, true, 200, null],
        [2, false, 500, null],
        [1, false, 500, null],
      ]);
      expect(attempts.every((a) => a.message_id === enqueued.messageId && a.organization_slug === org.slug)).toBe(true);

      // The email went to the organisation's users, once, as plain text, through the same queue.
      const mail = await waitFor("the email", () => mails.find((m) => m.text.includes(noticeId)));
      expect(mail.from).toBe("notices@das.test");
      expect(mail.to.sort()).toEqual([...emails].sort());
      expect(mail.text).toContain("Content-Type: text/plain");
      expect(mail.text).toContain(`Message-ID: <${enqueued.messageId}@dataset-access-service>`);
      expect(mails.filter((m) => m.text.includes(noticeId)).length).toBe(1);
      const emailAttempts = (await listDeliveryAttempts(operator, { noticeId })).filter((a) => a.channel === "email");
      expect(emailAttempts).toMatchObject([{ delivered: true, status_code: 250, attempt: 1 }]);

      // The rolled-back notice was never delivered.
      expect(mails.some((m) => m.text.includes(rolledBack))).toBe(false);
      expect(await listDeliveryAttempts(operator, { noticeId: rolledBack })).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it("goes to every active endpoint of the organisation and to no removed one", async () => {
    const operator = operatorCtx();
    const org = await createTestOrg();
    const [one, two] = [await startReceiver(0), await startReceiver(0)];
    try {
      const kept = await addWebhookEndpoint(operator, { organizationId: org.id, url: one.url });
      const removed = await addWebhookEndpoint(operator, { organizationId: org.id, url: two.url });
      one.verifyWith(kept.secret);
      two.verifyWith(removed.secret);
      await removeWebhookEndpoint(operator, { id: removed.id });
      const { enqueued } = await tellTestNotice(sqlOf(operator.db), org.id);
      expect(enqueued.webhookEndpointIds).toEqual([kept.id]);
      if (!workers.length) await startWorker();
      await waitFor("the delivery", () => one.received.length === 1);
      expect(one.received[0]!.verified).toBe(true);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(two.received).toEqual([]);
    } finally {
      await one.close();
      await two.close();
    }
  });
});

describe("a withdrawal's deliveries as a reviewer follows them", () => {
  it("shows per recipient and channel: delivered, failing with its attempts, none registered; email sent", async () => {
    const operator = operatorCtx();
    const episodes = randomEpisodes(2, 2727);
    const datasetId = await importTestDataset([{ version: "1.0.0", episodes, files: filesOf(episodes) }]);
    const [reached, down, bare] = [await createTestOrg(), await createTestOrg(), await createTestOrg()];
    const memberOf = new Map<string, string>();
    for (const org of [reached, down, bare]) {
      await grant(org.id, datasetId, "1.0.0");
      memberOf.set(org.id, `${uniqueId("m")}@acme.test`);
      const member = await userPrincipal(operator, org.id, "licensee", memberOf.get(org.id)!);
      await createDownload(
        { db: getDb(), principal: member, requestId: uniqueId("req") },
        { body: { dataset_id: datasetId, version: "1.0.0", episode_ids: episodes.map((e) => e.episode_id) } },
      );
    }
    const [good, failing] = [await startReceiver(0), await startReceiver(1_000)];
    try {
      const goodEndpoint = await addWebhookEndpoint(operator, { organizationId: reached.id, url: good.url });
      good.verifyWith(goodEndpoint.secret);
      await addWebhookEndpoint(operator, { organizationId: down.id, url: failing.url });
      const done = await withdrawEpisodes(operator, {
        episodeIds: episodes.map((e) => e.episode_id),
        reason: "consent withdrawn",
      });
      expect(done.notices).toBe(3);
      if (!workers.length) await startWorker();
      const channels = await waitFor("the deliveries tried", async () => {
        const [w] = (await reviewWithdrawals(operator, { limit: 50 })).filter(
          (x) => x.withdrawal_id === done.withdrawal_id,
        );
        const of = Object.fromEntries(w!.recipients.map((r) => [r.organization_id, r.channels]));
        const settled =
          of[reached.id]!.webhooks[0]!.state === "delivered" &&
          of[down.id]!.webhooks[0]!.attempts >= 2 &&
          [reached, down, bare].every((o) => of[o.id]!.email.state === "delivered");
        return settled ? of : null;
      });
      expect(channels[reached.id]).toMatchObject({
        inbox: { state: "delivered" },
        webhooks: [{ url: good.url, state: "delivered", attempts: 1, status_code: 200, error: null, removed: false }],
        email: { state: "delivered", attempts: 1, status_code: 250 },
      });
      expect(channels[down.id]!.webhooks).toMatchObject([
        { url: failing.url, state: "failing", status_code: 500, error: "answered 500: down for maintenance" },
      ]);
      expect(channels[bare.id]!.webhooks).toEqual([]);

      // The body is the notice as its organisation reads it from the API, as first written; the
      // worker writes it from the notice at each attempt, the same bytes every time.
      const noticeOf = async (organizationId: string) => {
        const notice = (
          await listNotices(
            {
              ...operator,
              principal: { kind: "api_key", keyId: "k", keyPrefix: "das_k", organizationId, narrowed: false },
            },
            { limit: 1 },
          )
        ).notices[0] as WithdrawalNotice;
        const { acknowledged_at, reminders, last_reminded_at, ...written } = notice;
        expect({ acknowledged_at, reminders, last_reminded_at }).toEqual({
          acknowledged_at: null,
          reminders: 0,
          last_reminded_at: null,
        });
        return written;
      };
      const reachedNotice = await noticeOf(reached.id);
      expect(reachedNotice.episode_ids).toEqual(episodes.map((e) => e.episode_id).sort());
      expect(reachedNotice.deliveries).toHaveLength(1);
      expect(good.received.map((r) => [r.verified, JSON.parse(r.body)])).toEqual([
        [true, { type: "notice.withdrawal", timestamp: expect.any(String), data: reachedNotice }],
      ]);
      expect(failing.received.length).toBeGreaterThanOrEqual(2);
      expect(new Set(failing.received.map((r) => r.body)).size).toBe(1);
      expect(JSON.parse(failing.received[0]!.body).data).toEqual(await noticeOf(down.id));
      // The email names the organisation's episodes and the notice to acknowledge.
      const mail = mails.find((m) => m.to.includes(memberOf.get(reached.id)!))!;
      const text = mail.text // quoted-printable: soft line breaks and escaped bytes
        .replace(/=\r?\n/g, "")
        .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
      expect(text).toContain(`acknowledge notice ${reachedNotice.notice_id}`);
      expect(text).toContain(`Episodes: ${reachedNotice.episode_ids.join(", ")}`);
    } finally {
      await good.close();
      await failing.close();
    }
  });
});
