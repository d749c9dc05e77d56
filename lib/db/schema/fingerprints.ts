import { bigint, check, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { byteOrderText, createdAt, timestamptz } from "../columns";
import { datasetVersions } from "./catalog";
import { licences } from "./licences";

/** How a licence's copy of a file differs from the original (lib/marks). */
export const COPY_METHODS = ["mark", "token", "box", "text"] as const;
export type CopyMethod = (typeof COPY_METHODS)[number];

/**
 * One licence's copy of one file of a fingerprinted version (migration 0025): made ahead of use by
 * a job (lib/fingerprints/copies.ts), stored under its own key, immutable once made (a trigger).
 * Downloads, previews and manifests of the version hand the caller's licence these; trace looks a
 * leaked file's sha256 and token up here.
 */
export const licenceCopies = pgTable(
  "licence_copies",
  {
    licenceId: text("licence_id")
      .notNull()
      .references(() => licences.id),
    versionId: integer("version_id")
      .notNull()
      .references(() => datasetVersions.id),
    path: byteOrderText("path").notNull(),
    objectKey: text("object_key").notNull(),
    sha256: text().notNull(),
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
    /** The licence's token for the file (32 hex digits), which the copy carries where it can. */
    token: text().notNull(),
    method: text().$type<CopyMethod>().notNull(),
    /** Cells the mark moved (method `mark`). */
    markedCells: bigint("marked_cells", { mode: "number" }),
    madeAt: createdAt("made_at"),
  },
  (t) => [
    primaryKey({ name: "licence_copies_pk", columns: [t.licenceId, t.path] }),
    index("licence_copies_sha256_idx").on(t.sha256),
    index("licence_copies_token_idx").on(t.token),
    index("licence_copies_version_idx").on(t.versionId, t.path),
    check("licence_copies_method_check", sql`${t.method} in ('mark', 'token', 'box', 'text')`),
    check("licence_copies_size_check", sql`${t.sizeBytes} >= 0`),
  ],
);

/**
 * An original's SHA-256 state up to where every copy with a trailer departs from it
 * (lib/marks/sha256.ts): such a copy's sha256 is computed from it and the copy's own trailer.
 */
export const originalFileStates = pgTable(
  "original_file_states",
  {
    versionId: integer("version_id")
      .notNull()
      .references(() => datasetVersions.id),
    path: byteOrderText("path").notNull(),
    keepBytes: bigint("keep_bytes", { mode: "number" }).notNull(),
    lastByte: integer("last_byte"),
    stateWords: text("state_words").notNull(),
    stateLength: bigint("state_length", { mode: "number" }).notNull(),
    stateTail: text("state_tail").notNull(),
  },
  (t) => [primaryKey({ name: "original_file_states_pk", columns: [t.versionId, t.path] })],
);

/**
 * The files an entry of the log delivered as per-licence copies, with the sha256 of the bytes that
 * left; the entry's `files_sha256` covers them in the hash chain. Append-only like the log, and
 * partitioned with it by the entry's month (migration 0026): archived and restored with it.
 */
export const disclosureFiles = pgTable(
  "disclosure_files",
  {
    disclosureId: text("disclosure_id").notNull(),
    path: byteOrderText("path").notNull(),
    sha256: text().notNull(),
    /** The entry's: its month's partition (migration 0026). */
    occurredAt: timestamptz("occurred_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "disclosure_files_pk", columns: [t.disclosureId, t.path, t.occurredAt] }),
    index("disclosure_files_sha256_idx").on(t.sha256, t.disclosureId),
  ],
);
