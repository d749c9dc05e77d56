-- Leak tracing (issue 37): a version with fingerprinting on delivers to each licence its own copy of
-- every file (a keyed mark in its float cells, or a trailer of its own), made ahead of use by a job
-- and stored under its own key; the log records the sha256 of the bytes that left.
-- Read with the version (lib/catalog/access.ts): a version without it costs no query more.
ALTER TABLE "dataset_versions" ADD COLUMN "fingerprinted" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- One licence's copy of one file, immutable once made: what trace looks a leaked file's sha256 and
-- token up in. A licence is for one version, so (licence, path) names it.
CREATE TABLE "licence_copies" (
	"licence_id" text NOT NULL REFERENCES "licences"("id"),
	"version_id" integer NOT NULL REFERENCES "dataset_versions"("id"),
	"path" text COLLATE "C" NOT NULL,
	"object_key" text NOT NULL,
	"sha256" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	-- The licence's 16-byte token for the file (hex), which the copy carries where it can (a parquet
	-- key/value entry, a video's trailing box, a text file's trailing whitespace).
	"token" text NOT NULL,
	-- mark: a frame parquet file's float cells moved; token: a parquet file with nothing to mark;
	-- box and text: the original with a trailer of the licence's own.
	"method" text NOT NULL,
	"marked_cells" bigint,
	"made_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "licence_copies_pk" PRIMARY KEY ("licence_id", "path"),
	CONSTRAINT "licence_copies_method_check" CHECK ("method" in ('mark', 'token', 'box', 'text')),
	CONSTRAINT "licence_copies_size_check" CHECK ("size_bytes" >= 0)
);--> statement-breakpoint
CREATE INDEX "licence_copies_sha256_idx" ON "licence_copies" USING btree ("sha256");--> statement-breakpoint
CREATE INDEX "licence_copies_token_idx" ON "licence_copies" USING btree ("token");--> statement-breakpoint
CREATE INDEX "licence_copies_version_idx" ON "licence_copies" USING btree ("version_id", "path");--> statement-breakpoint
-- A copy that only adds a trailer gets its sha256 from the original's SHA-256 state kept here (the
-- original hashed once, up to where every copy departs from it), never by reading the original
-- again for each licence.
CREATE TABLE "original_file_states" (
	"version_id" integer NOT NULL REFERENCES "dataset_versions"("id"),
	"path" text COLLATE "C" NOT NULL,
	-- Where every copy departs from the original: its size, or one less for text ending in a line break.
	"keep_bytes" bigint NOT NULL,
	"last_byte" integer,
	-- lib/marks/sha256.ts's state after keep_bytes: eight words, the whole blocks hashed, the rest.
	"state_words" text NOT NULL,
	"state_length" bigint NOT NULL,
	"state_tail" text NOT NULL,
	CONSTRAINT "original_file_states_pk" PRIMARY KEY ("version_id", "path")
);--> statement-breakpoint
CREATE FUNCTION licence_copies_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'licence copies are immutable once made: % on % is refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'raise_exception', HINT = 'A copy''s sha256 is what the log and trace rely on.';
END
$$;--> statement-breakpoint
CREATE TRIGGER licence_copies_append_only BEFORE UPDATE OR DELETE ON licence_copies
  FOR EACH ROW EXECUTE FUNCTION licence_copies_append_only();--> statement-breakpoint
CREATE TRIGGER licence_copies_no_truncate BEFORE TRUNCATE ON licence_copies
  FOR EACH STATEMENT EXECUTE FUNCTION licence_copies_append_only();--> statement-breakpoint
-- An entry that delivered per-licence copies names the SHA-256 over its files' paths and sha256s
-- (lib/disclosures/chain.ts, version 4), and each file is a row here, written in the entry's
-- transaction: which downloads delivered the bytes with this sha256 is one index range.
ALTER TABLE "disclosures" ADD COLUMN "files_sha256" text;--> statement-breakpoint
CREATE TABLE "disclosure_files" (
	"disclosure_id" text NOT NULL,
	"path" text COLLATE "C" NOT NULL,
	"sha256" text NOT NULL,
	CONSTRAINT "disclosure_files_pk" PRIMARY KEY ("disclosure_id", "path")
);--> statement-breakpoint
-- No foreign key, as for disclosure_episodes (migration 0015): the rows are written in the entry's
-- transaction just before it, every read joins the entry, and the chain's walk compares them with
-- the entry's hashed files_sha256.
CREATE INDEX "disclosure_files_sha256_idx" ON "disclosure_files" USING btree ("sha256", "disclosure_id");--> statement-breakpoint
CREATE TRIGGER disclosure_files_append_only BEFORE UPDATE OR DELETE ON disclosure_files
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_files_no_truncate BEFORE TRUNCATE ON disclosure_files
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();
