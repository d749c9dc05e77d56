import { bigint, check, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { byteOrderText, timestamptz } from "../columns";
import { datasetVersions } from "./catalog";

/**
 * Files rendered for a view of a version (lib/views/render.ts), keyed by the digest of what they
 * were rendered from; written once, whole, in one transaction, and never changed (migration
 * 0024). Their bytes are in the object store under their SHA-256 (lib/views/render.ts says where).
 */
export const renderedViews = pgTable(
  "rendered_views",
  {
    viewKey: text("view_key").primaryKey(),
    versionId: integer("version_id")
      .notNull()
      .references(() => datasetVersions.id),
    /** What the rendering decided beyond its files (lib/views/render.ts's RenderFacts). */
    facts: jsonb().notNull(),
    renderedAt: timestamptz("rendered_at").notNull().default(sql`now()`),
  },
  (t) => [check("rendered_views_key_check", sql`${t.viewKey} ~ '^[0-9a-f]{64}$'`)],
);

export const renderedFiles = pgTable(
  "rendered_files",
  {
    viewKey: text("view_key")
      .notNull()
      .references(() => renderedViews.viewKey),
    path: byteOrderText("path").notNull(),
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
    sha256: text().notNull(),
  },
  (t) => [
    primaryKey({ name: "rendered_files_pk", columns: [t.viewKey, t.path] }),
    check("rendered_files_sha256_check", sql`${t.sha256} ~ '^[0-9a-f]{64}$'`),
  ],
);
