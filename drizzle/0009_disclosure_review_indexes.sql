-- The reviewer's queries at millions of entries (issue 12): every filter of the log has an index
-- ending in seq, so a page of any search is a bounded walk of one index, newest first.
--
-- A time range is turned into a range of seq by probing (occurred_at, seq) at both ends.
DROP INDEX "disclosures_occurred_idx";--> statement-breakpoint
CREATE INDEX "disclosures_occurred_idx" ON "disclosures" USING btree ("occurred_at","seq");--> statement-breakpoint
DROP INDEX "disclosures_api_key_idx";--> statement-breakpoint
CREATE INDEX "disclosures_api_key_idx" ON "disclosures" USING btree ("api_key_id","seq");--> statement-breakpoint
DROP INDEX "disclosures_user_idx";--> statement-breakpoint
CREATE INDEX "disclosures_user_idx" ON "disclosures" USING btree ("user_id","seq");--> statement-breakpoint
CREATE INDEX "disclosures_channel_idx" ON "disclosures" USING btree ("channel","seq");--> statement-breakpoint
CREATE INDEX "disclosures_version_idx" ON "disclosures" USING btree ("version","seq");--> statement-breakpoint
-- Which entries hold a contributor's episodes, and how many of them: written with the entry
-- (lib/disclosures/append.ts), so "who received contributor C's episodes" is one walk of
-- (contributor, seq) instead of joining every disclosed episode with the catalog at read time.
-- Part of the log: append-only like it. It is derived data, not covered by the hash chain (the
-- entry's episodes are, and the catalog never changes after import). No foreign key: every read
-- joins it with `disclosures`, so a row whose entry is gone is never shown, and an entry removed by
-- someone who bypassed the triggers stays what the chain check reports, not a failed commit here.
CREATE TABLE "disclosure_contributors" (
	"disclosure_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"contributor" text NOT NULL,
	"episode_count" integer NOT NULL,
	CONSTRAINT "disclosure_contributors_pk" PRIMARY KEY("disclosure_id","contributor")
);--> statement-breakpoint
CREATE TRIGGER disclosure_contributors_append_only BEFORE UPDATE OR DELETE ON disclosure_contributors
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_contributors_no_truncate BEFORE TRUNCATE ON disclosure_contributors
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
-- The entries written before this migration. Hash joins, not the nested loops the planner picks
-- from its estimates here: 10 s instead of 56 s per 2.5 million disclosed episodes.
SET LOCAL enable_nestloop = off;--> statement-breakpoint
INSERT INTO "disclosure_contributors" ("disclosure_id", "seq", "contributor", "episode_count")
  SELECT d.id, d.seq, e.contributor, count(*)::int
  FROM disclosure_episodes de
  JOIN episodes e ON e.version_id = de.version_id AND e.episode_id = de.episode_id
  JOIN disclosures d ON d.id = de.disclosure_id
  GROUP BY d.id, d.seq, e.contributor;--> statement-breakpoint
RESET enable_nestloop;--> statement-breakpoint
CREATE INDEX "disclosure_contributors_contributor_idx" ON "disclosure_contributors" USING btree ("contributor","seq");
