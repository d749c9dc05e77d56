import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCli, type CliEnv } from "@/lib/testing/admin-cli";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import { createOrganization } from "@/lib/admin/organizations";
import { uniqueId } from "@/lib/testing/fixtures";
import { tellTestNotice } from "@/lib/testing/notices";
import { startWebhookReceiver, type WebhookReceiver } from "@/lib/testing/webhook-receiver";

// das-admin webhook add|list|remove|attempts and das-admin worker, as an operator runs them, on a
// database of their own (a worker takes every job of its database).

let iso: IsolatedDb;
beforeAll(async () => {
  iso = await createIsolatedDb("webhooks");
});
afterAll(() => iso?.drop());

const admin = adminCli("admin-webhooks", {
  databaseUrl: () => iso.url,
  operator: "cli-test",
  env: () => ({ NOTICE_RETRY_DELAY_S: "1" }),
});
const das = (args: string[], env: CliEnv = {}) => admin.run(args, { env: { WEBHOOKS_ALLOW_PRIVATE: "0", ...env } });

describe("das-admin webhook", () => {
  let receiver: WebhookReceiver;
  let url: string;
  beforeAll(async () => {
    receiver = await startWebhookReceiver({ path: "/hook", status: (n) => (n === 0 ? 503 : 204) });
    url = receiver.url;
  });
  afterAll(() => receiver.close());

  it("refuses a URL on 127.0.0.1 without WEBHOOKS_ALLOW_PRIVATE; adds it with; lists, delivers through the worker, removes", async () => {
    const org = await createOrganization(iso.operator, { slug: uniqueId("org") });

    const refused = await das(["webhook", "add", "--org", org.slug, url]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("resolves to 127.0.0.1");
    expect(refused.stderr).toContain("WEBHOOKS_ALLOW_PRIVATE=1");
    const [metadata, none, noAttempts] = await Promise.all([
      das(["webhook", "add", "--org", org.slug, "http://169.254.169.254/latest/meta-data/"]),
      das(["webhook", "list", "--org", org.slug]),
      das(["webhook", "attempts"]),
    ]);
    expect(metadata.code).toBe(1);
    expect(metadata.stderr).toContain("resolves to 169.254.169.254");
    expect(none.stderr).toContain("No webhook endpoints");
    expect(noAttempts.stderr).toContain("No delivery attempts yet.");

    const added = await das(["webhook", "add", "--org", org.slug, url, "--description", "ops receiver"], {
      WEBHOOKS_ALLOW_PRIVATE: "1",
    });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=\n$/);
    const secret = added.stdout.trim();
    receiver.verifyWith(secret);
    const id = /Added webhook (whk_\w+)/.exec(added.stderr)![1]!;

    // Never at rest in plaintext, never listed.
    const [row] = await iso.sql`select secret_sealed from webhook_endpoints where id = ${id}`;
    expect(row!.secret_sealed).toMatch(/^v1\./);
    expect(row!.secret_sealed).not.toContain(secret.slice(6));
    const [listed, table] = await Promise.all([das(["webhook", "list", "--json"]), das(["webhook", "list"])]);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id, organization_slug: org.slug, url, description: "ops receiver", removed_at: null }),
    ]);
    expect(listed.stdout).not.toContain(secret.slice(6));
    expect(table.stdout).toContain(id);
    const [audit] = await iso.sql`select action, actor_label from admin_audit where target_id = ${id}`;
    expect(audit).toMatchObject({ action: "webhook.add", actor_label: "cli-test (das-admin)" });

    // A notice told as the notice code tells one is delivered by `das-admin worker`.
    const { noticeId } = await tellTestNotice(iso.sql, org.id);
    const worker = admin.spawn(["worker"], { env: { WEBHOOKS_ALLOW_PRIVATE: "1" } });
    try {
      await receiver.waitFor(2, 90_000);
    } finally {
      worker.child.kill("SIGTERM");
    }
    const stopped = await worker.done;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).toContain("Stopping: finishing the work in flight.");
    const received = receiver.received;
    expect(received.length).toBe(2);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(new Set(received.map((r) => r.id)).size).toBe(1);

    const [attempts, attemptTable] = await Promise.all([
      das(["webhook", "attempts", "--org", org.slug, "--json"]),
      das(["webhook", "attempts", "--notice", noticeId]),
    ]);
    expect(JSON.parse(attempts.stdout)).toMatchObject([
      { attempt: 2, delivered: true, status_code: 204, endpoint_id: id, notice_id: noticeId, next_retry_at: null },
      { attempt: 1, delivered: false, status_code: 503, error: "answered 503", endpoint_id: id },
    ]);
    expect(attemptTable.stdout).toContain("delivered 204");
    expect(attemptTable.stdout).toContain("answered 503");

    const removed = await das(["webhook", "remove", id, "--org", org.slug]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toContain(`Removed webhook ${id}`);
    const again = await das(["webhook", "remove", id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already removed");
    const [afterRemoval, all] = await Promise.all([
      das(["webhook", "list", "--org", org.slug]),
      das(["webhook", "list", "--all", "--json"]),
    ]);
    expect(afterRemoval.stderr).toContain("No webhook endpoints");
    expect(JSON.parse(all.stdout)[0].removed_at).not.toBeNull();
  }, 240_000);
});
