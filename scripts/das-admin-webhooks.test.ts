import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, spawnCli } from "@/lib/testing/cli";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import { createOrganization } from "@/lib/admin/organizations";
import { uniqueId } from "@/lib/testing/fixtures";
import { enqueueNoticeDelivery } from "@/lib/notice-delivery/enqueue";

// das-admin webhook add|list|remove|attempts and das-admin worker, as an operator runs them, on a
// database of their own (a worker takes every job of its database).

let iso: IsolatedDb;
const scratch = mkdtempSync(path.join(tmpdir(), "das-admin-webhooks-"));
beforeAll(async () => {
  iso = await createIsolatedDb("webhooks");
});
afterAll(async () => {
  await iso?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

const baseEnv = () => ({
  ...process.env,
  DATABASE_URL: iso.url,
  APP_SECRET: inject("appSecret"),
  DAS_DATA_DIR: scratch,
  DAS_OPERATOR: "cli-test",
  NOTICE_RETRY_DELAY_S: "1",
});
const das = (args: string[], env: Record<string, string> = {}) =>
  runCli("das-admin", args, { env: { ...baseEnv(), WEBHOOKS_ALLOW_PRIVATE: "0", ...env } });

describe("das-admin webhook", () => {
  let receiver: http.Server;
  let url: string;
  const received: { id: string; verified: boolean }[] = [];
  let secret = "";
  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        let verified = false;
        try {
          new Webhook(secret).verify(Buffer.concat(chunks).toString("utf8"), req.headers as Record<string, string>);
          verified = true;
        } catch {}
        received.push({ id: String(req.headers["webhook-id"]), verified });
        res.writeHead(received.length === 1 ? 503 : 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

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
    secret = added.stdout.trim();
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

    // A notice enqueued by the notice code (here, directly) is delivered by `das-admin worker`.
    const noticeId = uniqueId("ntc");
    await enqueueNoticeDelivery(iso.operator, {
      organizationId: org.id,
      noticeId,
      eventType: "notice.withdrawal",
      payload: { notice_id: noticeId },
    });
    const worker = spawnCli("das-admin", ["worker"], { env: { ...baseEnv(), WEBHOOKS_ALLOW_PRIVATE: "1" } });
    try {
      const until = Date.now() + 90_000;
      while (received.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    } finally {
      worker.child.kill("SIGTERM");
    }
    const stopped = await worker.done;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).toContain("Stopping: finishing the work in flight.");
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
