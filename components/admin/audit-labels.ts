import type { AuditAction } from "@/lib/admin/audit-actions";
import type { Tone } from "../ui/badge";

/** How each admin_audit action reads in the portal: every action of the table has its label. */
export const AUDIT_LABELS: Record<AuditAction, { label: string; tone: Tone }> = {
  "organization.create": { label: "Created organisation", tone: "brand" },
  "user.create": { label: "Created user", tone: "blue" },
  "user.role": { label: "Changed role", tone: "amber" },
  "user.disable": { label: "Disabled user", tone: "red" },
  "licence.grant": { label: "Granted licence", tone: "green" },
  "licence.revoke": { label: "Revoked licence", tone: "red" },
  "licence.end": { label: "Changed licence end", tone: "amber" },
  "terms.add": { label: "Added terms", tone: "blue" },
  "dataset.listing": { label: "Changed listing", tone: "amber" },
  "version.fingerprint": { label: "Changed fingerprinting", tone: "amber" },
  "request.approve": { label: "Approved request", tone: "green" },
  "request.reject": { label: "Rejected request", tone: "red" },
  "key.issue": { label: "Issued key", tone: "green" },
  "key.revoke": { label: "Revoked key", tone: "red" },
  "webhook.add": { label: "Added webhook", tone: "green" },
  "webhook.remove": { label: "Removed webhook", tone: "red" },
  "episodes.withdraw": { label: "Withdrew episodes", tone: "red" },
};

/** An action's label; a name outside the table (a row older than it) shows as written. */
export const auditAction = (action: string) =>
  AUDIT_LABELS[action as AuditAction] ?? { label: action, tone: "neutral" as const };
