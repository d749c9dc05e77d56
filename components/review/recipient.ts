import type { Recipient } from "@/lib/disclosures/recipient";
import type { CappedCount } from "@/lib/disclosures/search";
import { formatNumber } from "../ui/format";

/** Each channel's badge: API downloads, portal downloads, previews. */
export const CHANNEL_TONE = { api: "blue", portal: "brand", preview: "amber", hub: "green" } as const;

/** The organisation whose licence an entry was made under, or the role a reviewer's or admin's preview was made under. */
export const basisOf = (row: Pick<Recipient, "organization_name" | "reviewer_role">) =>
  row.organization_name ?? `${row.reviewer_role ?? "unknown"} (no licence)`;

/** A count read no further than its cap: "1,234 entries", or "more than 10,000 entries" past it. */
export const cappedCountText = (total: CappedCount, one: string, many: string) =>
  total.more
    ? `more than ${formatNumber(total.count)} ${many}`
    : `${formatNumber(total.count)} ${total.count === 1 ? one : many}`;
