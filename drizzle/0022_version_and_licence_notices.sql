-- Notices beyond withdrawals (issue 26): a new version of a dataset, told to every organisation
-- holding a current licence for an earlier one, and a licence's end, told to its holder 30 and 7
-- days before; and the reminders of withdrawal notices still not acknowledged. Notices stay
-- append-only (migration 0019): a reminder is a row of its own, never an edit of the notice.
ALTER TABLE "notices" ALTER COLUMN "withdrawal_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "notices" ALTER COLUMN "episode_ids" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "notices" ALTER COLUMN "deliveries" DROP NOT NULL;--> statement-breakpoint
-- new_version: the version released; licence_ending: the licence's version.
ALTER TABLE "notices" ADD COLUMN "version_id" integer REFERENCES "dataset_versions"("id");--> statement-breakpoint
ALTER TABLE "notices" ADD COLUMN "licence_id" text REFERENCES "licences"("id");--> statement-breakpoint
-- licence_ending: which warning (30 or 7 days before), and the end it warned of: a licence whose
-- end is moved is warned again of its new end.
ALTER TABLE "notices" ADD COLUMN "threshold_days" integer;--> statement-breakpoint
ALTER TABLE "notices" ADD COLUMN "ends_at" timestamp with time zone;--> statement-breakpoint
-- What the notice says beyond its kind, as the API shows it (the dataset, versions, dates).
ALTER TABLE "notices" ADD COLUMN "details" jsonb;--> statement-breakpoint
ALTER TABLE "notices" DROP CONSTRAINT "notices_kind_check";--> statement-breakpoint
ALTER TABLE "notices" ADD CONSTRAINT "notices_kind_check" CHECK (
	("kind" = 'withdrawal' AND "withdrawal_id" IS NOT NULL AND "episode_ids" IS NOT NULL AND "deliveries" IS NOT NULL)
	OR ("kind" = 'new_version' AND "version_id" IS NOT NULL AND "details" IS NOT NULL)
	OR ("kind" = 'licence_ending' AND "licence_id" IS NOT NULL AND "version_id" IS NOT NULL AND "threshold_days" IN (30, 7)
		AND "ends_at" IS NOT NULL AND "details" IS NOT NULL)
);--> statement-breakpoint
-- The keys that make each notice exactly once, whoever computes it and however often: one per
-- organisation and new version; one per licence, warning and end.
CREATE UNIQUE INDEX "notices_new_version_key" ON "notices" USING btree ("organization_id", "version_id") WHERE "kind" = 'new_version';--> statement-breakpoint
CREATE UNIQUE INDEX "notices_licence_ending_key" ON "notices" USING btree ("licence_id", "threshold_days", "ends_at") WHERE "kind" = 'licence_ending';--> statement-breakpoint
-- Where the schedule looks for licences about to end.
CREATE INDEX "licences_ending_idx" ON "licences" USING btree ("ends_at") WHERE "revoked_at" IS NULL AND "ends_at" IS NOT NULL;--> statement-breakpoint
-- Where the schedule looks for withdrawal notices still outstanding.
CREATE INDEX "notices_withdrawal_created_idx" ON "notices" USING btree ("created_at") WHERE "kind" = 'withdrawal';--> statement-breakpoint
-- Each reminder of a withdrawal notice not yet acknowledged, numbered from 1: the unique key makes
-- a reminder exactly once however many workers run the schedule. Reviewers read when they went out.
CREATE TABLE "notice_reminders" (
	"notice_id" text NOT NULL REFERENCES "notices"("id"),
	"number" integer NOT NULL,
	"reminded_at" timestamp with time zone NOT NULL,
	CONSTRAINT "notice_reminders_pk" PRIMARY KEY ("notice_id", "number"),
	CONSTRAINT "notice_reminders_number_positive" CHECK ("number" > 0)
);--> statement-breakpoint
CREATE TRIGGER notice_reminders_append_only BEFORE UPDATE OR DELETE ON notice_reminders
  FOR EACH ROW EXECUTE FUNCTION withdrawal_records_append_only();--> statement-breakpoint
CREATE TRIGGER notice_reminders_no_truncate BEFORE TRUNCATE ON notice_reminders
  FOR EACH STATEMENT EXECUTE FUNCTION withdrawal_records_append_only();
