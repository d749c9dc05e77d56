import { check, index, integer, pgTable, text, unique, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { createdAt, timestamptz } from "../columns";
import { datasetVersions } from "./catalog";
import { licences } from "./licences";
import { organizations, users } from "./organizations";
import { termsDocuments } from "./terms";

/**
 * Who accepted which terms document, for which organisation, and when. Evidence, so append-only:
 * a trigger refuses UPDATE, DELETE and TRUNCATE (migration 0018).
 */
export const termsAcceptances = pgTable("terms_acceptances", {
  id: text().primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id),
  organizationId: text("organization_id")
    .notNull()
    .references(() => organizations.id),
  termsSha256: text("terms_sha256")
    .notNull()
    .references(() => termsDocuments.sha256),
  acceptedAt: createdAt("accepted_at"),
});

export const ACCESS_REQUEST_STATUSES = ["pending", "approved", "rejected"] as const;
export type AccessRequestStatus = (typeof ACCESS_REQUEST_STATUSES)[number];

/**
 * A licensee's request for a licence to one version of a listed dataset, made with the acceptance
 * of the terms that apply. Decided once (a trigger refuses any other change and every delete):
 * approved, naming the licence it created under the accepted terms, or rejected with a reason the
 * requester reads.
 */
export const accessRequests = pgTable(
  "access_requests",
  {
    id: text().primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    versionId: integer("version_id")
      .notNull()
      .references(() => datasetVersions.id),
    purpose: text().notNull(),
    acceptanceId: text("acceptance_id")
      .notNull()
      .references(() => termsAcceptances.id),
    status: text().$type<AccessRequestStatus>().notNull().default("pending"),
    createdAt: createdAt(),
    decidedAt: timestamptz("decided_at"),
    /** Who decided, as the admin audit names its actor. */
    decidedBy: text("decided_by"),
    rejectionReason: text("rejection_reason"),
    licenceId: text("licence_id").references(() => licences.id),
  },
  (t) => [
    unique("access_requests_acceptance_key").on(t.acceptanceId),
    unique("access_requests_licence_key").on(t.licenceId),
    check("access_requests_purpose_present", sql`length(btrim(${t.purpose})) > 0`),
    uniqueIndex("access_requests_pending_key").on(t.organizationId, t.versionId).where(sql`${t.status} = 'pending'`),
    index("access_requests_status_idx").on(t.status, t.createdAt),
    index("access_requests_organization_idx").on(t.organizationId, t.createdAt),
  ],
);
