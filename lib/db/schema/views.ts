import { bigint, check, index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { byteOrderText, timestamptz } from "../columns";
import { datasetVersions } from "./catalog";

/**
 * Files rendered for a view of a version (lib/views/render.ts), keyed by the digest of what they
 * were rendered from; written once, whole, in one transaction, and never changed but for `used_at`
 * (migration 0024). Their bytes are in the object store under their SHA-256 (lib/views/render.ts
 * says where). A view unused for longer than the retention is collected (lib/views/collect.ts,
 * migration 0028): it is rendered again if it is asked for after that.
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
    /** When a reader last used it, to the hour (touched only when an hour old): what collection goes by. */
    usedAt: timestamptz("used_at").notNull().default(sql`now()`),
  },
  (t) => [
    check("rendered_views_key_check", sql`${t.viewKey} ~ '^[0-9a-f]{64}$'`),
    index("rendered_views_used_at_idx").on(t.usedAt),
  ],
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
    index("rendered_files_sha256_idx").on(t.sha256),
  ],
);

/**
 * The ledger of the objects rendering put in the store (`_rendered/<sha256>`), written in the
 * transaction that writes the rows naming them: an object no rendered_files row names is deleted
 * from the store, then from here, by collection (migration 0028).
 */
export const renderedObjects = pgTable(
  "rendered_objects",
  {
    sha256: text().primaryKey(),
    storedAt: timestamptz("stored_at").notNull().default(sql`now()`),
  },
  (t) => [check("rendered_objects_sha256_check", sql`${t.sha256} ~ '^[0-9a-f]{64}$'`)],
);
