import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { importVersion } from "@/lib/catalog/import/import-version";
import { endLicence, grantLicence, revokeLicence } from "@/lib/admin/licences";
import { NoticeList } from "@/lib/api/responses";
import { call } from "@/lib/testing/http";
import { expectOk } from "@/lib/testing/expect-api";
import { startWebhookReceiver } from "@/lib/testing/webhook-receiver";
import {
  createTestKey,
  createTestOrg,
  grant,
  operatorCtx,
  randomEpisodes,
  uniqueId,
  writeImportDir,
} from "@/lib/testing/fixtures";
import { addWebhookEndpoint } from "@/lib/admin/webhook-endpoints";
import { startNoticeWorker, type NoticeDeliveryWorker } from "@/lib/notices/worker";
import { listDeliveryAttempts } from "@/lib/notice-delivery/attempts";
import * as api from "../../app/api/[[...path]]/route";
import { announceNewVersion } from "./new-version";

// A new version of a dataset, imported on the run's real database: every organisation holding a
// current licence for an earlier version is told, once, in the inbox, the API and by a signed
// webhook to a real receiver; nobody else is.

// Before anything reads the environment: the receiver is on this machine.
process.env.WEBHOOKS_ALLOW_PRIVATE = "1";

const sql = () => getDb().$client;
const episodesOf = new Map<string, ReturnType<typeof randomEpisodes>>();

async function importAs(datasetId: string, version: string, released_at = "2026-06-01T00:00:00Z") {
  // Episode ids are unique across datasets: each dataset its own, the same in each of its versions.
  if (!episodesOf.has(datasetId)) episodesOf.set(datasetId, randomEpisodes(4, 2627));
  const dir = writeImportDir(datasetId, { version, released_at, episodes: episodesOf.get(datasetId)! });
  try {
    return await importVersion(sql(), dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const workers: NoticeDeliveryWorker[] = [];
afterAll(async () => {
  for (const worker of workers) await worker.stop();
});

type NoticeJson = { notice_id: string; kind: string; [field: string]: unknown };
const noticesOf = async (key: string): Promise<NoticeJson[]> => {
  const res = await call(api.GET, "/api/v1/notices", { key });
  expectOk(res);
  // What the API answers is what its contract (and so the OpenAPI document) says.
  NoticeList.parse(res.json);
  return res.json.notices;
};

describe("a new version of a dataset", () => {
  it("is told to exactly the organisations with a current licence for an earlier version, once each", async () => {
    const operator = operatorCtx();
    const datasetId = uniqueId("nv");
    const otherDataset = uniqueId("nv-other");
    await importAs(datasetId, "1.0.0");
    await importAs(datasetId, "1.1.0");
    await importAs(otherDataset, "1.0.0");
    const orgs = {
      holder: await createTestOrg(),
      both: await createTestOrg(),
      revoked: await createTestOrg(),
      ended: await createTestOrg(),
      otherDataset: await createTestOrg(),
      none: await createTestOrg(),
    };
    await grant(orgs.holder.id, datasetId, "1.0.0");
    await grant(orgs.both.id, datasetId, "1.0.0");
    await grant(orgs.both.id, datasetId, "1.1.0");
    await grant(orgs.revoked.id, datasetId, "1.0.0");
    await revokeLicence(operator, { organizationId: orgs.revoked.id, datasetId, version: "1.0.0" });
    await grantLicence(operator, {
      organizationId: orgs.ended.id,
      datasetId,
      version: "1.1.0",
      startsAt: new Date(Date.now() - 10 * 86_400_000),
      endsAt: new Date(Date.now() + 86_400_000),
    });
    // Ended early: its end moved to a moment already past.
    await endLicence(operator, {
      organizationId: orgs.ended.id,
      datasetId,
      version: "1.1.0",
      endsAt: new Date(Date.now() - 1000),
    });
    await grant(orgs.otherDataset.id, otherDataset, "1.0.0");
    const keys = Object.fromEntries(
      await Promise.all(Object.entries(orgs).map(async ([name, org]) => [name, (await createTestKey(org.id)).secret])),
    ) as Record<keyof typeof orgs, string>;

    // A real receiver for the holder's webhook, checking every signature.
    const receiver = await startWebhookReceiver({ path: "/das" });
    try {
      const endpoint = await addWebhookEndpoint(operator, {
        organizationId: orgs.holder.id,
        url: receiver.url,
      });
      receiver.verifyWith(endpoint.secret);

      const imported = await importAs(datasetId, "2.0.0", "2026-07-01T00:00:00Z");
      expect(imported).toMatchObject({ status: "imported", versionNotices: 2 });

      const [holder = [], both = [], revoked, ended, other, none] = await Promise.all(
        [keys.holder, keys.both, keys.revoked, keys.ended, keys.otherDataset, keys.none].map(noticesOf),
      );
      expect(holder).toEqual([
        {
          notice_id: expect.stringMatching(/^nt_[0-9a-f]{32}$/),
          kind: "new_version",
          created_at: expect.any(String),
          dataset_id: datasetId,
          version: "2.0.0",
          released_at: "2026-07-01T00:00:00.000Z",
          licensed_versions: ["1.0.0"],
          acknowledged_at: null,
        },
      ]);
      // One notice per organisation, naming every earlier version it holds.
      expect(both.map((n) => [n.kind, n.version, n.licensed_versions])).toEqual([
        ["new_version", "2.0.0", ["1.0.0", "1.1.0"]],
      ]);
      expect([revoked, ended, other, none]).toEqual([[], [], [], []]);

      // Importing the same content again is unchanged and tells nobody again; computing again adds nothing.
      expect(await importAs(datasetId, "2.0.0", "2026-07-01T00:00:00Z")).toMatchObject({
        status: "unchanged",
        versionNotices: 0,
      });
      const [version] = await sql()<{ id: number }[]>`
        select id from dataset_versions where dataset_id = ${datasetId} and version = '2.0.0'`;
      expect(await announceNewVersion(sql(), version!.id)).toBe(0);
      const [count] = await sql()<{ n: number }[]>`
        select count(*)::int as n from notices where kind = 'new_version' and version_id = ${version!.id}`;
      expect(count!.n).toBe(2);

      // Delivered by webhook as the API shows it, with its own event type.
      workers.push(
        await startNoticeWorker({
          url: process.env.DATABASE_URL!,
          db: getDb(),
          pollingIntervalSeconds: 0.5,
          schedule: false,
        }),
      );
      const until = Date.now() + 30_000;
      await receiver.waitFor(1, 30_000);
      expect(receiver.received).toMatchObject([{ verified: true }]);
      const received = receiver.events<{ type: string; data: NoticeJson }>();
      const { acknowledged_at: _, ...payload } = holder[0]!;
      expect(received[0]).toMatchObject({ type: "notice.new_version", data: payload });
      // The worker records the attempt once the receiver has answered: wait for the record too.
      const webhookAttempts = async () =>
        (await listDeliveryAttempts(operator, { noticeId: holder[0]!.notice_id })).filter(
          (a) => a.channel === "webhook",
        );
      let attempts = await webhookAttempts();
      while (!attempts.length && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 100));
        attempts = await webhookAttempts();
      }
      expect(attempts.map((a) => [a.event_type, a.delivered, a.message_id])).toEqual([
        ["notice.new_version", true, received[0]!.id],
      ]);
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
