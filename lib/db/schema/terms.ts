import { sql } from "drizzle-orm";
import { check, index, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt } from "../columns";
import { datasets } from "./catalog";

/**
 * A terms document (a data-use agreement) under which licences are granted. Its id is the SHA-256
 * of its exact text, which the database checks, and it never changes: a trigger refuses UPDATE,
 * DELETE and TRUNCATE (migration 0016), so a new wording is a new document and a licence always
 * names the very bytes it was granted under.
 */
export const termsDocuments = pgTable(
  "terms_documents",
  {
    sha256: text().primaryKey(),
    title: text().notNull(),
    /** Markdown, exactly as added. */
    body: text().notNull(),
    /** The one dataset the terms are for; null for terms that apply to any. */
    datasetId: text("dataset_id").references(() => datasets.id),
    createdAt: createdAt(),
    /** Who added it, as the admin audit names its actor. */
    createdBy: text("created_by").notNull(),
  },
  (t) => [
    check("terms_documents_sha256_of_body", sql`${t.sha256} = encode(sha256(convert_to(${t.body}, 'UTF8')), 'hex')`),
    check("terms_documents_title_present", sql`length(btrim(${t.title})) > 0`),
    index("terms_documents_dataset_idx").on(t.datasetId),
  ],
);
