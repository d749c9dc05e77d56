import type { Recipient } from "@/lib/disclosures/recipient";

/** Each channel's badge: API downloads, portal downloads, previews. */
export const CHANNEL_TONE = { api: "blue", portal: "brand", preview: "amber" } as const;

/** The organisation whose licence an entry was made under, or the role a reviewer's or admin's preview was made under. */
export const basisOf = (row: Pick<Recipient, "organization_name" | "reviewer_role">) => row.organization_name ?? `${row.reviewer_role ?? "unknown"} (no licence)`;
