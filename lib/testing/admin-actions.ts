import type { ActionResult } from "@/lib/http/portal";
import type { Area } from "@/lib/portal/access";
import type { AuditAction } from "@/lib/admin/audit-actions";
import { PUBLIC_WEBHOOK_URL } from "./admin";
import { createOrganizationAction } from "@/app/(portal)/admin/organizations/actions";
import { changeUserRoleAction, createUserAction, disableUserAction } from "@/app/(portal)/admin/users/actions";
import { endLicenceAction, grantLicenceAction, revokeLicenceAction } from "@/app/(portal)/admin/licences/actions";
import { issueKeyAction, revokeKeyAction } from "@/app/(portal)/admin/keys/actions";
import { addTermsAction } from "@/app/(portal)/admin/terms/actions";
import { setListingAction } from "@/app/(portal)/admin/datasets/actions";
import { approveRequestAction, rejectRequestAction } from "@/app/(portal)/admin/requests/actions";
import { previewWithdrawalAction, withdrawAction } from "@/app/(portal)/admin/withdrawals/actions";
import { addWebhookAction, removeWebhookAction } from "@/app/(portal)/admin/webhooks/actions";

/** What an action's example input may refer to: things a test has just made. */
export type AdminActionWorld = {
  organizationId: string;
  datasetId: string;
  /** A version of the dataset the organisation holds an active licence for (to revoke). */
  licensedVersion: string;
  /** A version of the same dataset it holds no licence for (to grant). */
  unlicensedVersion: string;
  /** A live key of the organisation, for revoking. */
  keyId: string;
  /** An active licensee of the organisation, for changing or disabling. */
  userId: string;
  /** A string unique to this call (for slugs and emails). */
  unique: string;
  /** A pending access request of the organisation's licensee for the unlicensed version (the dataset is listed). */
  pendingRequestId: string;
  /** Episodes of the licensed version, withdrawn by nobody yet. */
  episodeIds: string[];
  /** An active webhook endpoint of the organisation, for removing. */
  webhookId: string;
};

export type AdminActionEntry = {
  name: string;
  area: Area;
  action: (input: unknown) => Promise<ActionResult<unknown>>;
  /** The admin_audit `action` one successful call writes; null for an action that only reads (a preview). */
  audit: AuditAction | null;
  /** The other rows the same call writes (an approval also grants a licence). */
  alsoAudits?: AuditAction[];
  /** An input the action accepts for an allowed caller, so a refusal can only be the role's doing. */
  exampleInput: (world: AdminActionWorld) => unknown;
};

/**
 * Every server action of the admin pages with the area it checks (lib/portal/access.ts). The
 * RBAC matrix iterates this list, so a new admin action that is missing here is untested:
 * app/(portal)/actions-rbac.test.ts fails when an actions file exports something this list lacks.
 */
export const ADMIN_ACTIONS: readonly AdminActionEntry[] = [
  {
    name: "createOrganizationAction",
    area: "admin",
    action: createOrganizationAction,
    audit: "organization.create",
    exampleInput: (w) => ({ slug: `org-${w.unique}`, name: `Org ${w.unique}` }),
  },
  {
    name: "createUserAction",
    area: "admin",
    action: createUserAction,
    audit: "user.create",
    exampleInput: (w) => ({
      email: `user-${w.unique}@example.com`,
      role: "licensee",
      organizationId: w.organizationId,
      password: "long enough password",
    }),
  },
  {
    name: "changeUserRoleAction",
    area: "admin",
    action: changeUserRoleAction,
    audit: "user.role",
    exampleInput: (w) => ({ id: w.userId, role: "reviewer", organizationId: null }),
  },
  {
    name: "disableUserAction",
    area: "admin",
    action: disableUserAction,
    audit: "user.disable",
    exampleInput: (w) => ({ id: w.userId }),
  },
  {
    name: "grantLicenceAction",
    area: "admin",
    action: grantLicenceAction,
    audit: "licence.grant",
    exampleInput: (w) => ({
      organizationId: w.organizationId,
      datasetId: w.datasetId,
      version: w.unlicensedVersion,
      startsAt: null,
      endsAt: "2099-12-31",
      termsSha256: null,
    }),
  },
  {
    name: "endLicenceAction",
    area: "admin",
    action: endLicenceAction,
    audit: "licence.end",
    exampleInput: (w) => ({
      organizationId: w.organizationId,
      datasetId: w.datasetId,
      version: w.licensedVersion,
      endsAt: "2099-12-31",
    }),
  },
  {
    name: "revokeLicenceAction",
    area: "admin",
    action: revokeLicenceAction,
    audit: "licence.revoke",
    exampleInput: (w) => ({ organizationId: w.organizationId, datasetId: w.datasetId, version: w.licensedVersion }),
  },
  {
    name: "addTermsAction",
    area: "admin",
    action: addTermsAction,
    audit: "terms.add",
    exampleInput: (w) => ({
      title: `Terms ${w.unique}`,
      body: `# Terms ${w.unique}\n\nUse with care.`,
      datasetId: null,
    }),
  },
  {
    name: "setListingAction",
    area: "admin",
    action: setListingAction,
    audit: "dataset.listing",
    // The world's dataset is listed already (for its pending request): unlisting it is the change.
    exampleInput: (w) => ({ datasetId: w.datasetId, listing: "unlisted" }),
  },
  {
    name: "approveRequestAction",
    area: "admin",
    action: approveRequestAction,
    audit: "request.approve",
    alsoAudits: ["licence.grant"],
    exampleInput: (w) => ({ id: w.pendingRequestId, startsAt: null, endsAt: "2099-12-31" }),
  },
  {
    name: "rejectRequestAction",
    area: "admin",
    action: rejectRequestAction,
    audit: "request.reject",
    exampleInput: (w) => ({ id: w.pendingRequestId, reason: `Not for ${w.unique}` }),
  },
  {
    name: "previewWithdrawalAction",
    area: "admin",
    action: previewWithdrawalAction,
    audit: null,
    exampleInput: (w) => ({ by: "episodes", datasetId: w.datasetId, episodeIds: w.episodeIds, reason: "rbac preview" }),
  },
  {
    name: "withdrawAction",
    area: "admin",
    action: withdrawAction,
    audit: "episodes.withdraw",
    exampleInput: (w) => ({
      by: "episodes",
      datasetId: w.datasetId,
      episodeIds: w.episodeIds,
      reason: `consent withdrawn ${w.unique}`,
      expectedEpisodes: w.episodeIds.length,
    }),
  },
  {
    name: "addWebhookAction",
    area: "admin",
    action: addWebhookAction,
    audit: "webhook.add",
    exampleInput: (w) => ({
      organizationId: w.organizationId,
      url: `${PUBLIC_WEBHOOK_URL}/${w.unique}`,
      description: `hook ${w.unique}`,
    }),
  },
  {
    name: "removeWebhookAction",
    area: "admin",
    action: removeWebhookAction,
    audit: "webhook.remove",
    exampleInput: (w) => ({ id: w.webhookId }),
  },
  {
    name: "issueKeyAction",
    area: "admin",
    action: issueKeyAction,
    audit: "key.issue",
    exampleInput: (w) => ({ organizationId: w.organizationId, name: `key ${w.unique}`, expiresInDays: 30, scope: [] }),
  },
  {
    name: "revokeKeyAction",
    area: "admin",
    action: revokeKeyAction,
    audit: "key.revoke",
    exampleInput: (w) => ({ id: w.keyId }),
  },
];
