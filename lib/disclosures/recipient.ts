import type { Sql } from "../db/client";
import type { DisclosureChannel, ReviewerRole } from "../db/schema";

/** Who an entry disclosed to, as every view of the log shows it. */
export type Recipient = {
  /** The organisation whose licence the entry was made under; null for a reviewer's or admin's preview. */
  organization: string | null;
  organization_name: string | null;
  /** The key's display prefix, for API downloads and previews. */
  api_key: string | null;
  /** The user's email, for the portal's downloads and previews. */
  user: string | null;
  /** The role a reviewer or admin previewed under, without a licence; null for everything else. */
  reviewer_role: ReviewerRole | null;
  channel: DisclosureChannel;
};

/** The recipient's columns, for a query over `disclosures d` that includes `recipientJoins`. */
export const recipientColumns = (sql: Sql) =>
  sql`o.slug as organization, o.name as organization_name, k.prefix as api_key, u.email as "user", d.reviewer_role, d.channel`;

// A reviewer's or admin's preview has no organisation: left joins, so that it is listed too.
export const recipientJoins = (sql: Sql) => sql`
  left join organizations o on o.id = d.organization_id
  left join api_keys k on k.id = d.api_key_id
  left join users u on u.id = d.user_id`;
