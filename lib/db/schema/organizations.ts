import { check, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { createdAt, timestamptz } from "../columns";

export const organizations = pgTable("organizations", {
  id: text().primaryKey(),
  slug: text().notNull().unique(),
  name: text().notNull(),
  createdAt: createdAt(),
});

export const USER_ROLES = ["admin", "reviewer", "licensee"] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const users = pgTable(
  "users",
  {
    id: text().primaryKey(),
    /** Stored lower-cased; sign-in compares lower-cased input. */
    email: text().notNull(),
    name: text(),
    role: text().$type<UserRole>().notNull(),
    organizationId: text("organization_id").references(() => organizations.id),
    /** argon2id; null for users who only sign in through OIDC. */
    passwordHash: text("password_hash"),
    createdAt: createdAt(),
    disabledAt: timestamptz("disabled_at"),
    /**
     * A portal session is valid only while its token carries this number: signing out, disabling the
     * account and changing its role or organisation increment it, ending every session at once.
     */
    sessionVersion: integer("session_version").notNull().default(0),
  },
  (t) => [
    uniqueIndex("users_email_key").on(t.email),
    index("users_organization_idx").on(t.organizationId),
    check("users_role_check", sql`${t.role} in ('admin', 'reviewer', 'licensee')`),
    check("users_licensee_has_org", sql`${t.role} <> 'licensee' or ${t.organizationId} is not null`),
  ],
);
