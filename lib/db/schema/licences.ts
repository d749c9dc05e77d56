import { index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { createdAt, timestamptz } from "../columns";
import { datasetVersions } from "./catalog";
import { organizations } from "./organizations";

/**
 * A licence is granted to an organisation for one dataset version. Revocation keeps the row: the
 * disclosure log refers to the licence under which each download was made.
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
  },
  (t) => [
    uniqueIndex("licences_active_key").on(t.organizationId, t.versionId).where(sql`${t.revokedAt} is null`),
    index("licences_version_idx").on(t.versionId),
  ],
);
