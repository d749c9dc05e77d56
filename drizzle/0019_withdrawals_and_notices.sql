-- Consent withdrawal (issue 26). A withdrawal takes episodes out of every version that holds them,
-- from its commit on; the organisations that received any of them are told by one notice each,
-- computed from the disclosure log; each recipient acknowledges what it deleted. All four tables
-- are append-only, like the log: a withdrawal is never undone by editing it (a later import with
-- the operator's explicit consent brings an episode back as part of a new version), a notice is
-- what was said, and an acknowledgement is what the recipient stated.
CREATE TABLE "withdrawals" (
	"id" text PRIMARY KEY NOT NULL,
	"withdrawn_at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor_kind" text NOT NULL,
	"actor_id" text NOT NULL,
	"actor_label" text NOT NULL,
	"reason" text NOT NULL,
	-- The contributor named on the command line, or null when episodes were named one by one.
	"contributor" text,
	"episode_count" integer NOT NULL,
	CONSTRAINT "withdrawals_reason_present" CHECK (length(btrim("reason")) > 0),
	CONSTRAINT "withdrawals_episode_count_positive" CHECK ("episode_count" > 0)
);--> statement-breakpoint
-- Which episodes, in which versions. An episode is withdrawn from a version once: the primary key
-- is what every read looks a (version, episode) up by.
CREATE TABLE "withdrawn_episodes" (
	"version_id" integer NOT NULL REFERENCES "dataset_versions"("id"),
	"episode_id" text COLLATE "C" NOT NULL,
	"withdrawal_id" text NOT NULL REFERENCES "withdrawals"("id"),
	CONSTRAINT "withdrawn_episodes_pk" PRIMARY KEY ("version_id", "episode_id")
);--> statement-breakpoint
CREATE INDEX "withdrawn_episodes_withdrawal_idx" ON "withdrawn_episodes" USING btree ("withdrawal_id", "episode_id");--> statement-breakpoint
CREATE INDEX "withdrawn_episodes_episode_idx" ON "withdrawn_episodes" USING btree ("episode_id");--> statement-breakpoint
-- One notice per (organisation, event): the unique key makes computing them again a no-op.
-- `episode_ids` are the organisation's own withdrawn episodes; `deliveries` the log entries that
-- carried them: [{download_id, seq, occurred_at, channel, dataset_id, version, episode_ids}].
CREATE TABLE "notices" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL REFERENCES "organizations"("id"),
	"kind" text NOT NULL,
	"withdrawal_id" text NOT NULL REFERENCES "withdrawals"("id"),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"episode_ids" text[] NOT NULL,
	"deliveries" jsonb NOT NULL,
	CONSTRAINT "notices_kind_check" CHECK ("kind" in ('withdrawal')),
	CONSTRAINT "notices_event_key" UNIQUE ("organization_id", "withdrawal_id")
);--> statement-breakpoint
CREATE INDEX "notices_organization_idx" ON "notices" USING btree ("organization_id", "created_at", "id");--> statement-breakpoint
CREATE INDEX "notices_withdrawal_idx" ON "notices" USING btree ("withdrawal_id");--> statement-breakpoint
-- Acknowledgements chain like the log: each hash covers the previous one and the canonical JSON of
-- the acknowledgement (lib/notices/acknowledgement-chain.ts), so editing or removing one breaks
-- every hash after it.
CREATE TABLE "notice_acknowledgements" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"id" text NOT NULL UNIQUE,
	"notice_id" text NOT NULL REFERENCES "notices"("id"),
	"organization_id" text NOT NULL REFERENCES "organizations"("id"),
	"acknowledged_at" timestamp with time zone NOT NULL,
	"api_key_id" text,
	"user_id" text,
	"statement" text NOT NULL,
	"deleted_paths" text[] NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	CONSTRAINT "notice_acknowledgements_seq_positive" CHECK ("seq" > 0)
);--> statement-breakpoint
CREATE INDEX "notice_acknowledgements_notice_idx" ON "notice_acknowledgements" USING btree ("notice_id", "seq");--> statement-breakpoint
CREATE FUNCTION withdrawal_records_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'withdrawals, notices and acknowledgements are append-only: % on % is refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'raise_exception', HINT = 'They are the record of what was withdrawn, who was told and what they stated.';
END
$$;--> statement-breakpoint
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['withdrawals', 'withdrawn_episodes', 'notices', 'notice_acknowledgements'] LOOP
    EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION withdrawal_records_append_only()', t || '_append_only', t);
    EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION withdrawal_records_append_only()', t || '_no_truncate', t);
  END LOOP;
END
$$;--> statement-breakpoint
-- Every instance's API cache holds episode pages, manifests, totals and where each episode is: a
-- withdrawal flushes them all when it commits, as a change of licences does (migration 0004).
CREATE TRIGGER withdrawn_episodes_notify_cache AFTER INSERT ON withdrawn_episodes
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
