import type { Ctx } from "../context";
import { addWebhookEndpoint } from "../admin/webhook-endpoints";
import { getDb } from "../db/client";
import type { ApiKeyPrincipal, OperatorPrincipal, Principal, UserPrincipal } from "../auth/principal";
import { authenticateApiKey } from "../auth/api-keys";
import type { UserRole } from "../db/schema";
import type { AuditAction } from "../admin/audit-actions";
import { createUser } from "../admin/users";
import { issueKey } from "../admin/keys";
import { addTerms } from "../admin/terms";
import { setDatasetListing } from "../admin/listing";
import { requestAccess } from "../catalog/access-requests";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "./fixtures";

/** Who may call what, as the admin tests see it: every kind of caller the verbs can meet. */
export type CallerName = "operator" | "admin" | "reviewer" | "licensee" | "api_key";
export const CALLERS: readonly CallerName[] = ["operator", "admin", "reviewer", "licensee", "api_key"];
export const ADMIN_CALLERS: readonly CallerName[] = ["operator", "admin"];

export const ctxOf = (principal: Principal): Ctx => ({ db: getDb(), principal, requestId: uniqueId("req") });

/** A real user of the role (the audit and `created_by` refer to users by id), as a signed-in principal. */
export async function userOfRole(role: UserRole, organizationId: string | null = null): Promise<UserPrincipal> {
  const email = `${uniqueId(role)}@example.com`;
  const user = await createUser(operatorCtx(), { email, role, organizationId, password: "a long test password" });
  return { kind: "user", userId: user.id, email: user.email, role, organizationId };
}

/** A fresh key of the organisation, authenticated as a request would be. */
export async function apiKeyCaller(organizationId: string): Promise<ApiKeyPrincipal> {
  const key = await issueKey(operatorCtx(), { organizationId, name: "caller key" });
  return authenticateApiKey(getDb(), key.secret);
}

/** One principal of each kind; the licensee and the key belong to `organizationId`. */
export async function callers(organizationId: string): Promise<Record<CallerName, Principal>> {
  const operator: OperatorPrincipal = { kind: "operator", name: uniqueId("operator"), organizationId: null };
  const [admin, reviewer, licensee, apiKey] = await Promise.all([
    userOfRole("admin"),
    userOfRole("reviewer"),
    userOfRole("licensee", organizationId),
    apiKeyCaller(organizationId),
  ]);
  return { operator, admin, reviewer, licensee, api_key: apiKey };
}

/** An organisation with one licensed and one unlicensed version of a fresh dataset, a live key and an active licensee. */
export async function adminWorld(): Promise<{
  organizationId: string;
  organizationSlug: string;
  datasetId: string;
  licensedVersion: string;
  unlicensedVersion: string;
  keyId: string;
  userId: string;
  webhookId: string;
  episodeIds: string[];
}> {
  const org = await createTestOrg();
  const licensedEpisodes = randomEpisodes(3, 1);
  const datasetId = await importTestDataset([
    { version: "1.0.0", episodes: licensedEpisodes },
    { version: "1.1.0", episodes: randomEpisodes(3, 2) },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  const key = await issueKey(operatorCtx(), { organizationId: org.id, name: "world key" });
  const user = await userOfRole("licensee", org.id);
  // A public address (TEST-NET-3): registration checks the address and never connects.
  const webhook = await addWebhookEndpoint(operatorCtx(), { organizationId: org.id, url: PUBLIC_WEBHOOK_URL });
  return {
    organizationId: org.id,
    organizationSlug: org.slug,
    datasetId,
    licensedVersion: "1.0.0",
    unlicensedVersion: "1.1.0",
    keyId: key.id,
    userId: user.userId,
    webhookId: webhook.id,
    episodeIds: licensedEpisodes.map((e) => e.episode_id),
  };
}

/** A webhook URL on a public address that nothing answers (TEST-NET-3), for verbs that only register it. */
export const PUBLIC_WEBHOOK_URL = "https://203.0.113.10/das-notices";

/**
 * The world's dataset listed, with terms of its own, and a pending access request of its licensee
 * for the unlicensed version: the one there is, or a new one.
 */
export async function pendingAccessRequest(w: {
  organizationId: string;
  datasetId: string;
  unlicensedVersion: string;
  userId: string;
}): Promise<string> {
  const [pending] = await getDb().$client<{ id: string }[]>`
    select r.id from access_requests r join dataset_versions v on v.id = r.version_id
    where r.organization_id = ${w.organizationId} and v.dataset_id = ${w.datasetId}
      and v.version = ${w.unlicensedVersion} and r.status = 'pending'`;
  if (pending) return pending.id;
  await setDatasetListing(operatorCtx(), { datasetId: w.datasetId, listing: "listed" });
  const terms = await addTerms(operatorCtx(), {
    title: "Terms of the world",
    body: `# Terms\n\nfor ${w.datasetId}`,
    datasetId: w.datasetId,
  });
  const licensee: UserPrincipal = {
    kind: "user",
    userId: w.userId,
    email: "",
    role: "licensee",
    organizationId: w.organizationId,
  };
  const made = await requestAccess(ctxOf(licensee), {
    datasetId: w.datasetId,
    version: w.unlicensedVersion,
    purpose: "a test of the admin's decision",
    termsSha256: terms.document.sha256,
  });
  return made.id;
}

export type AuditRow = {
  action: AuditAction;
  actor_kind: string;
  actor_id: string;
  actor_label: string;
  target_id: string;
  details: Record<string, unknown>;
};

/** The admin_audit rows about one target. */
export async function auditRowsFor(targetId: string): Promise<AuditRow[]> {
  return getDb().$client<AuditRow[]>`
    select action, actor_kind, actor_id, actor_label, target_id, details from admin_audit where target_id = ${targetId} order by id`;
}

/** The admin_audit rows written by one actor (a user id or an operator's name). */
export async function auditRowsBy(actorId: string): Promise<AuditRow[]> {
  return getDb().$client<AuditRow[]>`
    select action, actor_kind, actor_id, actor_label, target_id, details from admin_audit where actor_id = ${actorId} order by id`;
}

/** The actor columns an audit row written by this principal must carry. */
export function actorOf(principal: Principal): Pick<AuditRow, "actor_kind" | "actor_id" | "actor_label"> {
  if (principal.kind === "user")
    return { actor_kind: "user", actor_id: principal.userId, actor_label: principal.email };
  if (principal.kind === "operator")
    return { actor_kind: "operator", actor_id: principal.name, actor_label: `${principal.name} (das-admin)` };
  throw new Error("API keys never act as admins");
}

/** Moves a key's expiry into the past, which issuing refuses to do. */
export async function expireKey(keyId: string, at = new Date(Date.now() - 60_000)): Promise<void> {
  await getDb().$client`update api_keys set expires_at = ${at} where id = ${keyId}`;
}

/** Sets a key's last use, which authentication writes off the request's path. */
export async function touchKey(keyId: string, at: Date): Promise<void> {
  await getDb().$client`update api_keys set last_used_at = ${at} where id = ${keyId}`;
}
