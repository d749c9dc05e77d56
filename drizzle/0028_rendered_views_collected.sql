-- Rendered meta/ is collected (issue 39; decision 0147). Every withdrawal, fingerprinted licence
-- or camera subset makes a new view key, and the rendered_views rows and store objects of the old
-- ones stayed for ever. A view now records when it was last used (`used_at`, touched at most once
-- an hour by the readers, so a Hub read does not write each time); one unused for longer than the
-- retention is deleted with its rows. `rendered_objects` is the ledger of what rendering put under
-- `_rendered/<sha256>` in the store: an object no rendered_files row names any more is deleted from
-- the store and then from the ledger, under the advisory lock a render holds (shared) while it puts
-- objects and writes their rows, so an object is never deleted between a render's put and its rows.
ALTER TABLE "rendered_views" ADD COLUMN "used_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
CREATE INDEX "rendered_views_used_at_idx" ON "rendered_views" USING btree ("used_at");--> statement-breakpoint
CREATE INDEX "rendered_files_sha256_idx" ON "rendered_files" USING btree ("sha256");--> statement-breakpoint
CREATE TABLE "rendered_objects" (
	"sha256" text PRIMARY KEY NOT NULL,
	"stored_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "rendered_objects_sha256_check" CHECK ("sha256" ~ '^[0-9a-f]{64}$')
);--> statement-breakpoint
-- Every object rendered before this migration is in the ledger: each is named by a row (nothing was deleted yet).
INSERT INTO "rendered_objects" ("sha256") SELECT DISTINCT "sha256" FROM "rendered_files";
