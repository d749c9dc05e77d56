import { rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb, type Sql } from "@/lib/db/client";
import { importVersion } from "@/lib/catalog/import/import-version";
import { createOrganization } from "@/lib/admin/organizations";
import { grantLicence } from "@/lib/admin/licences";
import { createUser } from "@/lib/admin/users";
import { addWebhookEndpoint } from "@/lib/admin/webhook-endpoints";
import { startNoticeWorker, type NoticeDeliveryWorker } from "@/lib/notices/worker";
import { tellWithdrawalNotices } from "@/lib/withdrawals/withdraw";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  randomEpisodes,
  writeImportDir,
} from "@/lib/testing/fixtures";
import { call } from "@/lib/testing/http";
import { startWebhookReceiver } from "@/lib/testing/webhook-receiver";
import * as api from "../../app/api/[[...path]]/route";
import { tellNotices } from "./messages";
import { remindOutstandingNotices } from "./reminders";

// What every kind of notice says, byte for byte: its webhook (webhook-id and body) and its email
// as they leave through the real worker to a real HTTP receiver and a real SMTP server, and the
// API's answers about notices. The goldens in ./goldens/ were written by the code before notices
// moved into one folder (issue 35); only the parts that change with the clock (the body's
// timestamp, the email's Date, an acknowledgement's id, time and hash) are masked.

const id = (n: number) => `nt_${n.toString(16).padStart(32, "0")}`;
const golden = (name: string) => `./goldens/${name}`;

type Mail = { raw: string };
const mails: Mail[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, _session, callback) {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      mails.push({ raw: Buffer.concat(chunks).toString("utf8") });
      callback();
    });
  },
});
await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
// Before anything reads the environment: the receiver and SMTP are on this machine.
process.env.WEBHOOKS_ALLOW_PRIVATE = "1";
process.env.SMTP_URL = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
process.env.SMTP_FROM = "notices@das.test";

const receiver = await startWebhookReceiver({ path: "/hook" });
const hooks = receiver.received;

let iso: IsolatedDb;
let worker: NoticeDeliveryWorker | undefined;
beforeAll(async () => {
  // A database of its own: its worker takes every job of it, and its emails go to this file's SMTP server.
  iso = await createIsolatedDb("messages");
}, 120_000);
afterAll(async () => {
  await worker?.stop();
  await iso?.drop();
  await receiver.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

async function waitFor<T>(what: string, probe: () => T, timeoutMs = 60_000): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A dataset version and a licence to it, and one notice of every kind to `organizationId`, with fixed ids and times. */
async function writeNotices(sql: Sql, organizationId: string, first: number, versionId: number, licenceId: string) {
  const withdrawalId = `wd_golden${first}`;
  await sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count)
    values (${withdrawalId}, 'operator', 'golden', 'golden (das-admin)', 'consent withdrawn', 3)`;
  await sql`
    insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries, created_at)
    values (${id(first)}, ${organizationId}, 'withdrawal', ${withdrawalId}, ${["ep-001", "ep-007", "ep-042"]}::text[],
      jsonb_build_array(
        jsonb_build_object('download_id', 'dl_golden1', 'seq', 42, 'occurred_at', '2026-11-01T10:00:00.000Z', 'channel', 'api',
          'dataset_id', 'kitchen-pick-place', 'version', '1.0.0', 'episode_ids', jsonb_build_array('ep-001', 'ep-007')),
        jsonb_build_object('download_id', 'pv_golden2', 'seq', 57, 'occurred_at', '2026-11-02T11:30:00.250Z', 'channel', 'preview',
          'dataset_id', 'kitchen-pick-place', 'version', '1.1.0', 'episode_ids', jsonb_build_array('ep-042'))),
      '2026-11-20T08:30:00.123456Z')`;
  const [newVersion] = await sql<{ notice_id: string; organization_id: string }[]>`
    insert into notices (id, organization_id, kind, version_id, details, created_at)
    values (${id(first + 1)}, ${organizationId}, 'new_version', ${versionId},
      jsonb_build_object('dataset_id', 'kitchen-pick-place', 'version', '1.2.0', 'released_at', '2026-11-21T00:00:00.000Z',
        'licensed_versions', jsonb_build_array('1.0.0', '1.1.0')),
      '2026-11-21T06:00:00.5Z')
    returning id as notice_id, organization_id, created_at, details`;
  const [licenceEnding] = await sql<{ notice_id: string; organization_id: string }[]>`
    insert into notices (id, organization_id, kind, licence_id, version_id, threshold_days, ends_at, details, created_at)
    values (${id(first + 2)}, ${organizationId}, 'licence_ending', ${licenceId}, ${versionId}, 7, '2026-12-01T00:00:00Z',
      jsonb_build_object('dataset_id', 'kitchen-pick-place', 'version', '1.0.0', 'ends_at', '2026-12-01T00:00:00.000Z', 'days_before', 7),
      '2026-11-24T07:07:00Z')
    returning id as notice_id, organization_id, created_at, details`;
  return { withdrawalId, newVersion: newVersion!, licenceEnding: licenceEnding! };
}

/** A version of a dataset of the database's own, and a licence of the organisation to it. */
async function versionAndLicence(sql: Sql, organizationId: string, datasetId: string) {
  const [v] = await sql<{ id: number }[]>`
    select v.id from dataset_versions v where v.dataset_id = ${datasetId} and v.version = '1.0.0'`;
  const [l] = await sql<{ id: string }[]>`
    select id from licences where organization_id = ${organizationId} and version_id = ${v!.id}`;
  return { versionId: v!.id, licenceId: l!.id };
}

describe("every kind of notice, as it leaves", () => {
  it("has the webhook and the email it had", { timeout: 180_000 }, async () => {
    const operator = iso.operator;
    const datasetId = "golden-notices";
    const dir = writeImportDir(datasetId, { version: "1.0.0", episodes: randomEpisodes(2, 3535) });
    try {
      await importVersion(iso.sql, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const org = await createOrganization(operator, { slug: "golden" });
    await grantLicence(operator, { organizationId: org.id, datasetId, version: "1.0.0" });
    await createUser(operator, { email: "licensee@golden.test", role: "licensee", organizationId: org.id });
    const endpoint = await addWebhookEndpoint(operator, {
      organizationId: org.id,
      url: receiver.url,
    });
    receiver.verifyWith(endpoint.secret);
    const { versionId, licenceId } = await versionAndLicence(iso.sql, org.id, datasetId);
    const written = await writeNotices(iso.sql, org.id, 1, versionId, licenceId);

    // Each told as the product tells it: the withdrawal's notices, their reminder, a new version, a licence's end.
    await tellWithdrawalNotices(iso.sql, written.withdrawalId);
    expect(await remindOutstandingNotices(iso.sql, new Date("2026-11-27T09:00:00.500Z"), 7)).toBe(1);
    await tellNotices(iso.sql, [
      { noticeId: written.newVersion.notice_id, organizationId: org.id, kind: "new_version" },
      { noticeId: written.licenceEnding.notice_id, organizationId: org.id, kind: "licence_ending" },
    ]);

    worker = await startNoticeWorker({
      url: iso.url,
      db: iso.db,
      pollingIntervalSeconds: 0.5,
      schedule: false,
    });
    await waitFor("four webhooks and four emails", () => hooks.length >= 4 && mails.length >= 4);

    const events = ["notice.withdrawal", "notice.withdrawal_reminder", "notice.new_version", "notice.licence_ending"];
    expect(hooks.every((h) => h.verified)).toBe(true);
    for (const event of events) {
      const hook = hooks.find((h) => JSON.parse(h.body).type === event)!;
      const { timestamp } = JSON.parse(hook.body) as { timestamp: string };
      // The body's timestamp is the time it was enqueued, the same on every attempt.
      expect(Math.abs(Date.parse(timestamp) - Date.now())).toBeLessThan(120_000);
      await expect(`webhook-id: ${hook.id}\n\n${hook.body.replace(timestamp, "<enqueued at>")}\n`).toMatchFileSnapshot(
        golden(`${event}.webhook.txt`),
      );
      const mail = mails.find((m) => m.raw.includes(`X-Notice-Event: ${event}\r\n`))!;
      await expect(mail.raw.replace(/^Date: .*$/m, "Date: <sent at>")).toMatchFileSnapshot(golden(`${event}.eml`));
    }
  });
});

describe("the API's answers about notices", () => {
  it("list every kind as they did, and acknowledge as they did", async () => {
    const org = await createTestOrg();
    const key = (await createTestKey(org.id)).secret;
    const episodes = randomEpisodes(2, 3536);
    const datasetId = await importTestDataset([{ version: "1.0.0", episodes }]);
    await grant(org.id, datasetId, "1.0.0");
    const sql = getDb().$client;
    const { versionId, licenceId } = await versionAndLicence(sql, org.id, datasetId);
    await writeNotices(sql, org.id, 0x11, versionId, licenceId);
    await sql`insert into notice_reminders (notice_id, number, reminded_at) values (${id(0x11)}, 1, '2026-11-27T09:00:00.5Z')`;

    const listed = await call(api.GET, "/api/v1/notices?limit=10", { key });
    expect(listed.status).toBe(200);
    await expect(`${listed.text}\n`).toMatchFileSnapshot(golden("list-notices.json.txt"));
    const paged = await call(api.GET, "/api/v1/notices?limit=2", { key });
    expect(paged.json.notices.map((n: { notice_id: string }) => n.notice_id)).toEqual([id(0x13), id(0x12)]);

    const made = await call(api.POST, `/api/v1/notices/${id(0x11)}/acknowledgements`, {
      method: "POST",
      key,
      body: { statement: "Deleted every copy.", deleted_paths: [] },
    });
    expect(made.status).toBe(201);
    const masked = made.text
      .replace(/"acknowledgement_id":"ack_\w+"/, '"acknowledgement_id":"<id>"')
      .replace(/"acknowledged_at":"[^"]+"/, '"acknowledged_at":"<at>"')
      .replace(/"hash":"[0-9a-f]{64}"/, '"hash":"<hash>"');
    await expect(`${masked}\n`).toMatchFileSnapshot(golden("acknowledgement.json.txt"));
    const after = await call(api.GET, "/api/v1/notices?limit=10", { key });
    await expect(
      `${after.text.replace(/"acknowledged_at":"[^"]+"/, '"acknowledged_at":"<at>"')}\n`,
    ).toMatchFileSnapshot(golden("list-notices-acknowledged.json.txt"));
  });
});
