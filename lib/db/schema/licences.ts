import { check, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { createdAt, timestamptz } from "../columns";
import { datasetVersions } from "./catalog";
import { organizations } from "./organizations";
import { termsDocuments } from "./terms";

/**
 * A licence is granted to an organisation for one dataset version. Revocation keeps the row: the
 * disclosure log refers to the licence under which each download was made. A licence is usable from
 * `starts_at` until `ends_at` (none: no end), decided by the clock at each request
 * (lib/catalog/access.ts), so nothing has to run when a term begins or ends.
 */
export const licences = pgTable(
  "licences",
  {
    id: text().primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    versionId: integer("version_id")
      .notNull()
      .references(() => datasetVersions.id),
    grantedAt: createdAt("granted_at"),
    revokedAt: timestamptz("revoked_at"),
    startsAt: timestamptz("starts_at").notNull().defaultNow(),
    endsAt: timestamptz("ends_at"),
    /** The terms document the licence was granted under; null for licences granted without one. */
    termsSha256: text("terms_sha256").references(() => termsDocuments.sha256),
  },
  (t) => [
    uniqueIndex("licences_active_key").on(t.organizationId, t.versionId).where(sql`${t.revokedAt} is null`),
    index("licences_version_idx").on(t.versionId),
    check("licences_term_check", sql`${t.endsAt} is null or ${t.endsAt} > ${t.startsAt}`),
  ],
);
