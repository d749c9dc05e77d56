import { beforeAll, describe, expect, it } from "vitest";
import type { Ctx } from "@/lib/context";
import type { UserPrincipal } from "@/lib/auth/principal";
import { issueKey, revokeKey } from "./keys";
import { grantLicence, revokeLicence } from "./licences";
import { createOrganization } from "./organizations";
import { listOrganizations } from "./list-organizations";
import { listUsers } from "./users";
import { listLicences, listVersionChoices } from "./list-licences";
import { listKeys } from "./list-keys";
import { listAdminAudit } from "./list-audit";
import { changeUserRole, disableUser } from "./users";
import { ctxOf, expireKey, touchKey, userOfRole } from "@/lib/testing/admin";
import { createTestOrg, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";

// Other suites write to the same database at the same time, so every assertion looks at this
// suite's own organisations, users and keys only.

let admin: UserPrincipal;
let ctx: Ctx;
let datasetId: string;
let otherDatasetId: string;

beforeAll(async () => {
  admin = await userOfRole("admin");
  ctx = ctxOf(admin);
  [datasetId, otherDatasetId] = await Promise.all([
    importTestDataset([
      { version: "1.0.0", episodes: randomEpisodes(2, 11) },
      { version: "1.2.0", episodes: randomEpisodes(2, 12) },
      { version: "1.10.0", episodes: randomEpisodes(3, 13) },
    ]),
    importTestDataset([{ version: "0.1.0", episodes: randomEpisodes(2, 14) }]),
  ]);
});

const target = (organizationId: string, version: string, dataset = datasetId) => ({
  organizationId,
  datasetId: dataset,
  version,
});

describe("listOrganizations", () => {
  it("counts users, active licences only, and live keys only (not revoked, not expired)", async () => {
    const org = await createOrganization(ctx, { slug: uniqueId("count"), name: "Counted Ltd" });
    const empty = await createTestOrg();
    await Promise.all([userOfRole("licensee", org.id), userOfRole("licensee", org.id), userOfRole("admin", org.id)]);
    await grantLicence(ctx, target(org.id, "1.0.0"));
    await grantLicence(ctx, target(org.id, "1.2.0"));
    await grantLicence(ctx, target(org.id, "0.1.0", otherDatasetId));
    await revokeLicence(ctx, target(org.id, "1.2.0"));
    // Live: one without expiry and one expiring tomorrow; not live: one revoked, one expired.
    const [, , revoked, expired] = await Promise.all(
      ["live", "future", "revoked", "expired"].map((name) =>
        issueKey(ctx, {
          organizationId: org.id,
          name,
          expiresAt: name === "future" ? new Date(Date.now() + 86_400_000) : null,
        }),
      ),
    );
    await revokeKey(ctx, { id: revoked!.id });
    await expireKey(expired!.id);

    const all = await listOrganizations(ctx);
    expect(all.find((o) => o.id === org.id)).toEqual({
      id: org.id,
      slug: org.slug,
      name: "Counted Ltd",
      created_at: org.createdAt.toISOString(),
      user_count: 3,
      active_licence_count: 2,
      live_key_count: 2,
    });
    expect(all.find((o) => o.id === empty.id)).toMatchObject({
      user_count: 0,
      active_licence_count: 0,
      live_key_count: 0,
    });
    const slugs = all.map((o) => o.slug);
    expect(slugs).toEqual([...slugs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });
});

describe("listUsers", () => {
  it("lists email, name, role, organisation, created and disabled, filtered by role and organisation", async () => {
    const org = await createTestOrg();
    const a = await userOfRole("licensee", org.id);
    const b = await userOfRole("licensee", org.id);
    const reviewer = await userOfRole("reviewer", org.id);
    await disableUser(operatorCtx(), { id: b.userId });

    const members = await listUsers(ctx, { organizationId: org.id });
    expect(members.map((u) => u.email)).toEqual([a.email, b.email, reviewer.email].sort());
    const rowB = members.find((u) => u.id === b.userId)!;
    expect(rowB).toMatchObject({
      role: "licensee",
      organization_id: org.id,
      organization_slug: org.slug,
      organization_name: org.name,
      name: null,
    });
    expect(Date.parse(rowB.created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(rowB.disabled_at).not.toBeNull();
    expect(members.find((u) => u.id === a.userId)!.disabled_at).toBeNull();

    expect((await listUsers(ctx, { organizationId: org.id, role: "reviewer" })).map((u) => u.id)).toEqual([
      reviewer.userId,
    ]);
    const admins = await listUsers(ctx, { role: "admin" });
    expect(admins.every((u) => u.role === "admin")).toBe(true);
    expect(admins.find((u) => u.id === admin.userId)).toMatchObject({ organization_id: null, organization_slug: null });
  });

  it("refuses an unknown role filter", async () => {
    await expect(listUsers(ctx, { role: "owner" as never })).rejects.toMatchObject({ code: "invalid_parameter" });
  });
});

describe("listLicences and listVersionChoices", () => {
  it("lists active and revoked licences with organisation, dataset, version, granted and revoked", async () => {
    const org = await createTestOrg();
    const first = await grantLicence(ctx, target(org.id, "1.0.0"));
    await revokeLicence(ctx, target(org.id, "1.0.0"));
    const again = await grantLicence(ctx, target(org.id, "1.0.0"));
    const newer = await grantLicence(ctx, target(org.id, "1.10.0"));
    const rows = await listLicences(ctx, { organizationId: org.id });
    // By dataset, newest version first (semver, so 1.10.0 before 1.0.0), newest grant first.
    expect(rows.map((l) => [l.id, l.version, l.revoked_at === null])).toEqual([
      [newer.id, "1.10.0", true],
      [again.id, "1.0.0", true],
      [first.id, "1.0.0", false],
    ]);
    expect(rows[0]).toMatchObject({
      organization_id: org.id,
      organization_slug: org.slug,
      dataset_id: datasetId,
      dataset_title: `Dataset ${datasetId}`,
    });
    expect(Date.parse(rows[2]!.revoked_at!)).toBeGreaterThanOrEqual(Date.parse(rows[2]!.granted_at));
    expect((await listLicences(ctx)).filter((l) => l.organization_id === org.id)).toEqual(rows);
  });

  it("offers every version of every dataset, newest first within each", async () => {
    const choices = await listVersionChoices(ctx);
    expect(choices.filter((c) => c.dataset_id === datasetId).map((c) => [c.version, c.episode_count])).toEqual([
      ["1.10.0", 3],
      ["1.2.0", 2],
      ["1.0.0", 2],
    ]);
    expect(choices.find((c) => c.dataset_id === otherDatasetId)).toMatchObject({
      version: "0.1.0",
      dataset_title: `Dataset ${otherDatasetId}`,
    });
  });
});

describe("listKeys", () => {
  it("gives each key's status: active, expired, revoked (revoked wins over expired)", async () => {
    const org = await createTestOrg();
    const issue = (name: string, expiresAt: Date | null = null) =>
      issueKey(ctx, { organizationId: org.id, name, expiresAt });
    const active = await issue("active");
    const future = await issue("future", new Date(Date.now() + 3_600_000));
    const expired = await issue("expired");
    const revoked = await issue("revoked");
    const both = await issue("both");
    await expireKey(expired.id);
    await revokeKey(ctx, { id: revoked.id });
    await expireKey(both.id);
    await revokeKey(ctx, { id: both.id });

    const keys = await listKeys(ctx, { organizationId: org.id });
    expect(Object.fromEntries(keys.map((k) => [k.name, k.status]))).toEqual({
      active: "active",
      future: "active",
      expired: "expired",
      revoked: "revoked",
      both: "revoked",
    });
    // Newest first.
    expect(keys.map((k) => k.name)).toEqual(["both", "revoked", "expired", "future", "active"]);
    const row = keys.find((k) => k.id === future.id)!;
    expect(row).toMatchObject({
      organization_id: org.id,
      organization_slug: org.slug,
      prefix: future.secret.slice(0, 12),
      created_by: admin.email,
      expires_at: future.expiresAt!.toISOString(),
      last_used_at: null,
      revoked_at: null,
      narrowed: false,
      scope: [],
    });
    expect(JSON.stringify(keys)).not.toContain(active.secret);

    expect((await listKeys(ctx, { organizationId: org.id, status: "active" })).map((k) => k.name).sort()).toEqual([
      "active",
      "future",
    ]);
    expect((await listKeys(ctx, { organizationId: org.id, status: "expired" })).map((k) => k.name)).toEqual([
      "expired",
    ]);
    expect((await listKeys(ctx, { organizationId: org.id, status: "revoked" })).map((k) => k.name)).toEqual([
      "both",
      "revoked",
    ]);
    await expect(listKeys(ctx, { status: "lost" as never })).rejects.toMatchObject({ code: "invalid_parameter" });
  });

  it("lists a narrowed key's scope as dataset@version, flags versions whose licence lapsed, and names who created it", async () => {
    const org = await createTestOrg();
    await grantLicence(ctx, target(org.id, "1.0.0"));
    await grantLicence(ctx, target(org.id, "1.10.0"));
    await grantLicence(ctx, target(org.id, "0.1.0", otherDatasetId));
    const narrowed = await issueKey(ctx, {
      organizationId: org.id,
      name: "narrowed",
      scope: [target(org.id, "1.0.0"), target(org.id, "0.1.0", otherDatasetId), target(org.id, "1.10.0")],
    });
    const byOperator = await issueKey(operatorCtx(), { organizationId: org.id, name: "cli" });
    await revokeLicence(ctx, target(org.id, "1.0.0"));
    const when = new Date("2026-03-04T05:06:07.000Z");
    await touchKey(narrowed.id, when);

    const keys = await listKeys(ctx, { organizationId: org.id });
    const row = keys.find((k) => k.id === narrowed.id)!;
    const ofDataset = {
      [datasetId]: [
        { dataset_id: datasetId, version: "1.10.0", licensed: true },
        { dataset_id: datasetId, version: "1.0.0", licensed: false },
      ],
      [otherDatasetId]: [{ dataset_id: otherDatasetId, version: "0.1.0", licensed: true }],
    };
    expect(row.narrowed).toBe(true);
    // By dataset id, then newest version first.
    expect(row.scope).toEqual([datasetId, otherDatasetId].sort().flatMap((id) => ofDataset[id]!));
    expect(row.last_used_at).toBe(when.toISOString());
    expect(keys.find((k) => k.id === byOperator.id)).toMatchObject({ created_by: null, narrowed: false, scope: [] });
  });
});

describe("listAdminAudit", () => {
  it("returns recent entries newest first with actor, action, target and a readable target label", async () => {
    const org = await createOrganization(ctx, { slug: uniqueId("audit"), name: "Audited" });
    const user = await userOfRole("licensee", org.id);
    await grantLicence(ctx, target(org.id, "1.2.0"));
    const key = await issueKey(ctx, {
      organizationId: org.id,
      name: "audited key",
      scope: [target(org.id, "1.2.0")],
      expiresAt: new Date("2099-01-02T00:00:00Z"),
    });
    await revokeKey(ctx, { id: key.id });
    await changeUserRole(ctx, { id: user.userId, role: "reviewer", organizationId: org.id });
    await disableUser(ctx, { id: user.userId });

    const { entries } = await listAdminAudit(ctx, { limit: 200 });
    const mine = entries.filter(
      (e) =>
        e.actor_id === admin.userId &&
        ([org.id, key.id, user.userId].includes(e.target_id) || e.details.organizationId === org.id),
    );
    expect(mine.map((e) => [e.action, e.target_label])).toEqual([
      ["user.disable", user.email],
      ["user.role", user.email],
      ["key.revoke", `${key.prefix}… “audited key” of ${org.slug}`],
      ["key.issue", `${key.prefix}… “audited key” of ${org.slug}`],
      ["licence.grant", `${datasetId}@1.2.0 for ${org.slug}`],
      ["organization.create", org.slug],
    ]);
    expect(mine[0]).toMatchObject({ actor_kind: "user", actor_label: admin.email });
    expect(mine[1]!.summary).toBe(`role reviewer in ${org.slug}`);
    expect(mine[3]!.summary).toBe(`expires 2099-01-02; narrowed to ${datasetId}@1.2.0`);
    const created = entries.find((e) => e.target_id === user.userId && e.action === "user.create")!;
    expect(created).toMatchObject({
      action: "user.create",
      target_label: user.email,
      actor_kind: "operator",
      summary: `role licensee in ${org.slug}`,
    });
    const ids = entries.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it("pages back in time with next_before and caps the page size", async () => {
    for (let i = 0; i < 3; i++) await createOrganization(ctx, { slug: uniqueId("page") });
    const first = await listAdminAudit(ctx, { limit: 2 });
    expect(first.entries).toHaveLength(2);
    expect(first.next_before).toBe(first.entries[1]!.id);
    const second = await listAdminAudit(ctx, { limit: 2, before: first.next_before! });
    expect(second.entries[0]!.id).toBeLessThan(first.entries[1]!.id);
    const whole = await listAdminAudit(ctx, { limit: 4, before: first.entries[0]!.id + 1 });
    expect(whole.entries.map((e) => e.id)).toEqual([...first.entries, ...second.entries].map((e) => e.id));
    expect((await listAdminAudit(ctx, { limit: 10_000 })).entries.length).toBeLessThanOrEqual(200);
  });
});
