/**
 * Every action the admin audit trail records: one per admin verb that changes something. The
 * verbs write these names, the portal labels each of them (components/admin/audit-labels.ts must
 * name them all) and the tests expect them; a plain module, so client components can import it.
 */
export const AUDIT_ACTIONS = [
  "organization.create",
  "user.create",
  "user.role",
  "user.disable",
  "licence.grant",
  "licence.revoke",
  "licence.end",
  "terms.add",
  "dataset.listing",
  "version.fingerprint",
  "request.approve",
  "request.reject",
  "key.issue",
  "key.revoke",
  "webhook.add",
  "webhook.remove",
  "episodes.withdraw",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];
