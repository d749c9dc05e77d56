-- The Hugging Face Hub's read protocol (issue 39). A GET on a file of a dataset repository is a
-- disclosure of its own channel, `hub`; a repeat of it by the same key while its URL is valid
-- reuses that entry, as a repeated preview does, so the index the reuse looks in covers both.
ALTER TABLE "disclosures" DROP CONSTRAINT "disclosures_channel_check";--> statement-breakpoint
ALTER TABLE "disclosures" ADD CONSTRAINT "disclosures_channel_check" CHECK ("disclosures"."channel" in ('api', 'portal', 'preview', 'hub'));--> statement-breakpoint
CREATE INDEX "disclosures_reusable_idx" ON "disclosures" USING btree ("request_sha256","expires_at") WHERE "disclosures"."channel" in ('preview', 'hub');--> statement-breakpoint
DROP INDEX "disclosures_preview_idx";--> statement-breakpoint
-- Files rendered for a view of a version (lib/views/render.ts): a LeRobot meta/ written for the
-- episodes a view holds (a version with withdrawals, a pulled subset). Each set is keyed by the
-- digest of what it was rendered from, written once in one transaction (a key with rows is a set
-- rendered whole) and never changed; its bytes are in the object store under their own SHA-256.
-- What the rendering decided beyond the files (the rows of a renumbered data file, how LeRobot
-- opens the result) is kept with it, so that a plan never renders twice.
CREATE TABLE "rendered_views" (
	"view_key" text PRIMARY KEY NOT NULL,
	"version_id" integer NOT NULL REFERENCES "dataset_versions"("id"),
	"facts" jsonb NOT NULL,
	"rendered_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "rendered_views_key_check" CHECK ("view_key" ~ '^[0-9a-f]{64}$')
);--> statement-breakpoint
CREATE TABLE "rendered_files" (
	"view_key" text NOT NULL REFERENCES "rendered_views"("view_key"),
	"path" text COLLATE "C" NOT NULL,
	"size_bytes" bigint NOT NULL,
	"sha256" text NOT NULL,
	CONSTRAINT "rendered_files_pk" PRIMARY KEY ("view_key", "path"),
	CONSTRAINT "rendered_files_sha256_check" CHECK ("sha256" ~ '^[0-9a-f]{64}$')
);
