import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import { createOrganization } from "@/lib/admin/organizations";
import { uniqueId } from "@/lib/testing/fixtures";
import { tellTestNotice } from "@/lib/testing/notices";
import { startWebhookReceiver } from "@/lib/testing/webhook-receiver";
import { addWebhookEndpoint } from "@/lib/admin/webhook-endpoints";
import { listDeliveryAttempts } from "./attempts";

// The service delivers by itself: `next start` (what npm start serves) runs the delivery worker
// (instrumentation.ts), and a server stopped between two attempts loses nothing: the next one
// started on the same database delivers. On a database of its own, so no other worker takes the job.

// Before anything reads the environment: the receiver is on this machine, and the jobs enqueued
// here retry after 2-4 s, then 4-8 s (a job carries the retry policy of the process that enqueued it).
process.env.WEBHOOKS_ALLOW_PRIVATE = "1";
process.env.NOTICE_RETRY_DELAY_S = "2";

let iso: IsolatedDb;
const servers: AppServer[] = [];
beforeAll(async () => {
  iso = await createIsolatedDb("deliveries");
});
afterAll(async () => {
  for (const server of servers) await server.stop();
  await iso?.drop();
});

const serve = async () => {
  const server = await startAppServer({
    DATABASE_URL: iso.url,
    NOTICE_WORKER: "on",
    WEBHOOKS_ALLOW_PRIVATE: "1",
  });
  servers.push(server);
  return server;
};

async function waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 40_000): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > until)
      throw new Error(
        `timed out waiting for ${what}; the servers said:\n${servers.map((s) => s.output()).join("\n---\n")}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the server's delivery worker", () => {
  it("delivers a notice whose receiver was down, across a server restart, once, with one webhook-id", {
    timeout: 180_000,
  }, async () => {
    const receiver = await startWebhookReceiver({ status: (n) => (n < 2 ? 500 : 200) });
    const received = receiver.received;
    try {
      const org = await createOrganization(iso.operator, { slug: uniqueId("org") });
      const endpoint = await addWebhookEndpoint(iso.operator, {
        organizationId: org.id,
        url: receiver.url,
      });
      receiver.verifyWith(endpoint.secret);
      const { noticeId, enqueued } = await tellTestNotice(iso.sql, org.id);

      const first = await serve();
      await waitFor(
        "a failed attempt recorded",
        async () => (await listDeliveryAttempts(iso.operator, { noticeId })).length >= 1,
      );
      await first.stop();
      const second = await serve();
      await waitFor("the delivery", () => received.some((r) => r.status === 200));
      const attempts = await waitFor("the delivered attempt recorded", async () => {
        const rows = await listDeliveryAttempts(iso.operator, { noticeId });
        return rows[0]?.delivered ? rows : null;
      });
      await second.stop();

      expect(received.map((r) => r.status)).toEqual([500, 500, 200]);
      expect(received.every((r) => r.verified && r.id === enqueued.messageId)).toBe(true);
      expect(attempts.map((a) => [a.attempt, a.delivered])).toEqual([
        [3, true],
        [2, false],
        [1, false],
      ]);
    } finally {
      await receiver.close();
    }
  });
});
