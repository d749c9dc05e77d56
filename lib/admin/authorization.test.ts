import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/auth/principal";
import type { Ctx } from "@/lib/context";
import { AppError } from "@/lib/errors";
import { AUDIT_ACTIONS, type AuditAction } from "./audit-actions";
import { createOrganization, organizationBySlug, requireOrganization } from "./organizations";
import { changeUserRole, createUser, disableUser } from "./users";
import { endLicence, grantLicence, revokeLicence, versionId } from "./licences";
import { addTerms, listTerms, termsDocument } from "./terms";
import { issueKey, revokeKey } from "./keys";
import { listOrganizations } from "./list-organizations";
import { listUsers } from "./users";
import { listLicences, listVersionChoices } from "./list-licences";
import { listKeys } from "./list-keys";
import { listAdminAudit } from "./list-audit";
import { listDatasetVersions } from "./list-datasets";
import { listDatasetListings, setDatasetListing } from "./listing";
import { fingerprintStatus, setFingerprinting } from "@/lib/fingerprints/admin";
import { approveAccessRequest, listAccessRequests, rejectAccessRequest } from "./access-requests";
import {
  addWebhookEndpoint,
  listWebhookEndpoints,
  removeWebhookEndpoint,
} from "@/lib/notice-delivery/webhook-endpoints";
import { listDeliveryAttempts } from "@/lib/notice-delivery/attempts";
import { enqueueNoticeDelivery } from "@/lib/notice-delivery/enqueue";
import {
  ADMIN_CALLERS,
  CALLERS,
  actorOf,
  adminWorld,
  auditRowsBy,
  auditRowsFor,
  callers,
  pendingAccessRequest,
  ctxOf,
  type CallerName,
  PUBLIC_WEBHOOK_URL,
} from "@/lib/testing/admin";
import { createTestOrg, uniqueId } from "@/lib/testing/fixtures";
import { getDb } from "@/lib/db/client";
import { previewWithdrawal, withdrawEpisodes } from "@/lib/withdrawals/withdraw";

type World = Awaited<ReturnType<typeof adminWorld>>;

/** Each admin verb, called as an allowed caller would; `audit` is the action its one audit row names (none for reads). */
const VERBS: {
  name: string;
  audit: AuditAction | null;
  /** Rows of other actions the same call writes (an approval grants a licence too). */
  alsoWrites?: number;
  call: (ctx: Ctx, w: World) => Promise<{ targetId?: string }>;
}[] = [
  {
    name: "createOrganization",
    audit: "organization.create",
    call: async (ctx) => ({ targetId: (await createOrganization(ctx, { slug: uniqueId("org") })).id }),
  },
  {
    name: "createUser",
    audit: "user.create",
    call: async (ctx, w) => ({
      targetId: (
        await createUser(ctx, {
          email: `${uniqueId("u")}@example.com`,
          role: "licensee",
          organizationId: w.organizationId,
          password: "0123456789",
        })
      ).id,
    }),
  },
  {
    name: "changeUserRole",
    audit: "user.role",
    call: async (ctx, w) => ({ targetId: (await changeUserRole(ctx, { id: w.userId, role: "reviewer" })).id }),
  },
  {
    name: "disableUser",
    audit: "user.disable",
    call: async (ctx, w) => ({ targetId: (await disableUser(ctx, { id: w.userId })).id }),
  },
  {
    name: "grantLicence",
    audit: "licence.grant",
    call: async (ctx, w) => ({
      targetId: (
        await grantLicence(ctx, {
          organizationId: w.organizationId,
          datasetId: w.datasetId,
          version: w.unlicensedVersion,
        })
      ).id,
    }),
  },
  {
    name: "revokeLicence",
    audit: "licence.revoke",
    call: async (ctx, w) => ({
      targetId: (
        await revokeLicence(ctx, {
          organizationId: w.organizationId,
          datasetId: w.datasetId,
          version: w.licensedVersion,
        })
      ).id,
    }),
  },
  {
    name: "endLicence",
    audit: "licence.end",
    call: async (ctx, w) => ({
      targetId: (
        await endLicence(ctx, {
          organizationId: w.organizationId,
          datasetId: w.datasetId,
          version: w.licensedVersion,
          endsAt: new Date(Date.now() + 86_400_000),
        })
      ).id,
    }),
  },
  {
    name: "addTerms",
    audit: "terms.add",
    // A text of its own each time: the same text again is the document already there, and writes nothing.
    call: async (ctx) => ({
      targetId: (await addTerms(ctx, { title: "Data-use agreement", body: `# Terms\n\n${uniqueId("t")}\n` })).document
        .sha256,
    }),
  },
  {
    name: "setDatasetListing",
    audit: "dataset.listing",
    // The world's dataset starts unlisted: listing it is a change.
    call: async (ctx, w) => (
      await setDatasetListing(ctx, { datasetId: w.datasetId, listing: "listed" }), { targetId: w.datasetId }
    ),
  },
  {
    name: "setFingerprinting",
    audit: "version.fingerprint",
    // The world's versions start without fingerprinting: turning it on is a change (and enqueues its licence's copies).
    call: async (ctx, w) => (
      await setFingerprinting(ctx, { datasetId: w.datasetId, version: w.licensedVersion, on: true }),
      { targetId: `${w.datasetId}@${w.licensedVersion}` }
    ),
  },
  {
    name: "fingerprintStatus",
    audit: null,
    call: async (ctx, w) => (await fingerprintStatus(ctx, { datasetId: w.datasetId, version: w.licensedVersion }), {}),
  },
  {
    name: "approveAccessRequest",
    audit: "request.approve",
    alsoWrites: 1,
    call: async (ctx, w) => ({ targetId: (await approveAccessRequest(ctx, { id: await pendingAccessRequest(w) })).id }),
  },
  {
    name: "rejectAccessRequest",
    audit: "request.reject",
    call: async (ctx, w) => ({
      targetId: (await rejectAccessRequest(ctx, { id: await pendingAccessRequest(w), reason: "not now" })).id,
    }),
  },
  { name: "listDatasetListings", audit: null, call: async (ctx) => (await listDatasetListings(ctx), {}) },
  { name: "listAccessRequests", audit: null, call: async (ctx) => (await listAccessRequests(ctx), {}) },
  { name: "listTerms", audit: null, call: async (ctx) => (await listTerms(ctx), {}) },
  {
    name: "withdrawEpisodes",
    audit: "episodes.withdraw",
    call: async (ctx, w) => {
      const [first] = await getDb().$client<{ episode_id: string }[]>`
        select e.episode_id from episodes e join dataset_versions v on v.id = e.version_id
        where v.dataset_id = ${w.datasetId} order by e.episode_id limit 1`;
      const done = await withdrawEpisodes(ctx, { episodeIds: [first!.episode_id], reason: "authorization test" });
      return { targetId: done.withdrawal_id };
    },
  },
  {
    name: "previewWithdrawal",
    audit: null,
    // The shared world's episodes: a preview writes nothing, so they stay for every caller.
    call: async (ctx, w) => (
      await previewWithdrawal(ctx, { episodeIds: w.episodeIds, datasetId: w.datasetId, reason: "authorization test" }),
      {}
    ),
  },
  { name: "termsDocument", audit: null, call: async (ctx) => (await termsDocument(ctx, "0".repeat(64)), {}) },
  {
    name: "issueKey",
    audit: "key.issue",
    call: async (ctx, w) => ({
      targetId: (await issueKey(ctx, { organizationId: w.organizationId, name: "rbac" })).id,
    }),
  },
  {
    name: "revokeKey",
    audit: "key.revoke",
    call: async (ctx, w) => ({ targetId: (await revokeKey(ctx, { id: w.keyId })).id }),
  },
  {
    name: "addWebhookEndpoint",
    audit: "webhook.add",
    call: async (ctx, w) => ({
      targetId: (await addWebhookEndpoint(ctx, { organizationId: w.organizationId, url: PUBLIC_WEBHOOK_URL })).id,
    }),
  },
  {
    name: "removeWebhookEndpoint",
    audit: "webhook.remove",
    call: async (ctx, w) => ({ targetId: (await removeWebhookEndpoint(ctx, { id: w.webhookId })).id }),
  },
  { name: "listWebhookEndpoints", audit: null, call: async (ctx) => (await listWebhookEndpoints(ctx), {}) },
  { name: "listDeliveryAttempts", audit: null, call: async (ctx) => (await listDeliveryAttempts(ctx), {}) },
  {
    name: "enqueueNoticeDelivery",
    audit: null,
    call: async (ctx, w) => (
      await enqueueNoticeDelivery(ctx, {
        organizationId: w.organizationId,
        noticeId: uniqueId("ntc"),
        eventType: "notice.test",
        payload: {},
      }),
      {}
    ),
  },
  { name: "listOrganizations", audit: null, call: async (ctx) => (await listOrganizations(ctx), {}) },
  { name: "listUsers", audit: null, call: async (ctx) => (await listUsers(ctx), {}) },
  { name: "listLicences", audit: null, call: async (ctx) => (await listLicences(ctx), {}) },
  { name: "listVersionChoices", audit: null, call: async (ctx) => (await listVersionChoices(ctx), {}) },
  { name: "listDatasetVersions", audit: null, call: async (ctx) => (await listDatasetVersions(ctx), {}) },
  { name: "listKeys", audit: null, call: async (ctx) => (await listKeys(ctx), {}) },
  { name: "listAdminAudit", audit: null, call: async (ctx) => (await listAdminAudit(ctx), {}) },
  {
    name: "requireOrganization",
    audit: null,
    call: async (ctx, w) => (await requireOrganization(ctx, w.organizationId), {}),
  },
  {
    name: "organizationBySlug",
    audit: null,
    call: async (ctx, w) => (await organizationBySlug(ctx, w.organizationSlug), {}),
  },
  {
    name: "versionId",
    audit: null,
    call: async (ctx, w) => (await versionId(ctx, w.datasetId, w.licensedVersion), {}),
  },
];

let who: Record<CallerName, Principal>;
let shared: World;

beforeAll(async () => {
  const org = await createTestOrg();
  [who, shared] = await Promise.all([callers(org.id), adminWorld()]);
});

it("every audited action of the table is written by one admin verb, and no verb writes another", () => {
  expect(VERBS.flatMap((v) => (v.audit ? [v.audit] : [])).sort()).toEqual([...AUDIT_ACTIONS].sort());
});

describe.each(VERBS)("$name", (verb) => {
  it.each(ADMIN_CALLERS.map((c) => [c]))(
    "is allowed for %s, and a change writes one audit row naming the actor",
    async (caller) => {
      const world = verb.audit ? await adminWorld() : shared;
      const actorId = actorOf(who[caller]).actor_id;
      const before = (await auditRowsBy(actorId)).length;
      const { targetId } = await verb.call(ctxOf(who[caller]), world);
      // The tests of this file run one at a time, so the actor's rows grow by exactly this call's.
      expect((await auditRowsBy(actorId)).length - before).toBe(verb.audit ? 1 + (verb.alsoWrites ?? 0) : 0);
      if (!verb.audit) return;
      // A revoke's target already has the row of its grant or issue; the call itself adds one.
      const rows = (await auditRowsFor(targetId!)).filter((r) => r.action === verb.audit);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ action: verb.audit, target_id: targetId, ...actorOf(who[caller]) });
    },
  );

  it.each(CALLERS.filter((c) => !ADMIN_CALLERS.includes(c)).map((c) => [c]))(
    "is refused for %s with 403 forbidden, changing nothing",
    async (caller) => {
      const error = await verb.call(ctxOf(who[caller]), shared).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ code: "forbidden", status: 403 });
      const principal = who[caller];
      if (principal.kind === "user") expect(await auditRowsBy(principal.userId)).toEqual([]);
    },
  );
});

describe("refusals leave the world as it was", () => {
  it("a refused revoke leaves the licence and the key usable", async () => {
    const world = await adminWorld();
    for (const caller of ["reviewer", "licensee", "api_key"] as const) {
      await expect(revokeKey(ctxOf(who[caller]), { id: world.keyId })).rejects.toMatchObject({ code: "forbidden" });
      await expect(
        revokeLicence(ctxOf(who[caller]), {
          organizationId: world.organizationId,
          datasetId: world.datasetId,
          version: world.licensedVersion,
        }),
      ).rejects.toMatchObject({ code: "forbidden" });
    }
    const keys = await listKeys(ctxOf(who.admin), { organizationId: world.organizationId });
    expect(keys.map((k) => k.status)).toEqual(["active"]);
    const licences = await listLicences(ctxOf(who.admin), { organizationId: world.organizationId });
    expect(licences.map((l) => [l.version, l.revoked_at])).toEqual([[world.licensedVersion, null]]);
    expect(await auditRowsFor(world.keyId)).toHaveLength(1); // only its issue
  });
});
