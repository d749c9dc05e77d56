import type { Tone } from "../ui/badge";

/** How each admin_audit action reads in the portal; an action not listed here shows its raw name. */
export const AUDIT_ACTIONS: Record<string, { label: string; tone: Tone }> = {
  "organization.create": { label: "Created organisation", tone: "brand" },
  "user.create": { label: "Created user", tone: "blue" },
  "user.role": { label: "Changed role", tone: "amber" },
  "user.disable": { label: "Disabled user", tone: "red" },
  "licence.grant": { label: "Granted licence", tone: "green" },
  "licence.revoke": { label: "Revoked licence", tone: "red" },
  "key.issue": { label: "Issued key", tone: "green" },
  "key.revoke": { label: "Revoked key", tone: "red" },
};

export const auditAction = (action: string) => AUDIT_ACTIONS[action] ?? { label: action, tone: "neutral" as const };
