-- Each entry says under which terms it was delivered (issue 25): the licence it names already, and
-- now the SHA-256 of that licence's terms document, inside the hash chain.
--
-- `names_terms` is what makes the entry's canonical text version 3 (lib/disclosures/chain.ts):
-- true for every entry made under a licence from now on, whose hash covers `terms_sha256` (null
-- when the licence has none). Every entry written before this migration reads false, as does a
-- reviewer's or admin's preview (no licence, no terms), and hashes exactly as it always did.
-- Adding a column with a constant default rewrites no row, so a log of millions migrates at once;
-- the default stays, so what does not name terms is exactly what never said anything about them.
-- Both columns are in the hash, so flipping `names_terms` or changing `terms_sha256` breaks it.
ALTER TABLE "disclosures" ADD COLUMN "names_terms" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "disclosures" ADD COLUMN "terms_sha256" text;--> statement-breakpoint
-- A terms document is immutable and never removed (migration 0016): the key is a probe of a small table.
ALTER TABLE "disclosures" ADD CONSTRAINT "disclosures_terms_sha256_terms_documents_sha256_fk" FOREIGN KEY ("terms_sha256") REFERENCES "public"."terms_documents"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Terms only with a licence, and only when the entry names them. Not validated: every existing row
-- holds the defaults just added (false, null), which satisfy it, and validating would read the whole log.
ALTER TABLE "disclosures" ADD CONSTRAINT "disclosures_terms_check" CHECK (("terms_sha256" is null or "names_terms") and (not "names_terms" or "licence_id" is not null)) NOT VALID;--> statement-breakpoint
-- The reviewer's filters by licence and by terms document walk an index ending in seq, as every
-- other filter does (migration 0009); the owner's per-licence figures read the first of them.
CREATE INDEX "disclosures_licence_idx" ON "disclosures" USING btree ("licence_id","seq");--> statement-breakpoint
CREATE INDEX "disclosures_terms_idx" ON "disclosures" USING btree ("terms_sha256","seq") WHERE "terms_sha256" is not null;
--> statement-breakpoint
-- What each licence has delivered, for its owner (lib/admin/licence-use.ts): entries, episodes and
-- bytes per licence and channel, and its last use, kept by the log's summary trigger (migration
-- 0010) like the daily summaries, so a page of licences reads one row per licence and channel
-- however many millions of entries the log holds. Not under the hash, like every summary.
CREATE TABLE disclosure_licence_totals (
  licence_id text NOT NULL,
  channel text NOT NULL,
  entries bigint NOT NULL,
  episodes bigint NOT NULL,
  bytes bigint NOT NULL,
  last_seq bigint NOT NULL,
  last_at timestamp with time zone NOT NULL,
  PRIMARY KEY (licence_id, channel)
);
--> statement-breakpoint
-- Migration 0010's trigger function and its rebuild, each with the licence totals added.
CREATE OR REPLACE FUNCTION das_disclosure_summaries_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO disclosure_daily_channels AS s (day, channel, entries, episodes)
    SELECT (occurred_at AT TIME ZONE 'UTC')::date, channel, count(*), sum(episode_count) FROM new_entries GROUP BY 1, 2
    ON CONFLICT (day, channel) DO UPDATE SET entries = s.entries + excluded.entries, episodes = s.episodes + excluded.episodes;
  INSERT INTO disclosure_daily_organizations AS s (day, organization_id, entries, episodes)
    SELECT (occurred_at AT TIME ZONE 'UTC')::date, organization_id, count(*), sum(episode_count) FROM new_entries GROUP BY 1, 2
    ON CONFLICT (day, organization_id) DO UPDATE SET entries = s.entries + excluded.entries, episodes = s.episodes + excluded.episodes;
  INSERT INTO disclosure_daily_versions AS s (day, version_id, entries, episodes)
    SELECT (occurred_at AT TIME ZONE 'UTC')::date, version_id, count(*), sum(episode_count) FROM new_entries GROUP BY 1, 2
    ON CONFLICT (day, version_id) DO UPDATE SET entries = s.entries + excluded.entries, episodes = s.episodes + excluded.episodes;
  INSERT INTO disclosure_daily_recipients AS s (day, organization_id, api_key_id, user_id, entries, episodes)
    SELECT (occurred_at AT TIME ZONE 'UTC')::date, organization_id, api_key_id, user_id, count(*), sum(episode_count) FROM new_entries GROUP BY 1, 2, 3, 4
    ON CONFLICT (day, organization_id, api_key_id, user_id) DO UPDATE SET entries = s.entries + excluded.entries, episodes = s.episodes + excluded.episodes;
  INSERT INTO disclosure_monthly_recipients AS s (month, organization_id, api_key_id, user_id, entries, episodes)
    SELECT date_trunc('month', occurred_at AT TIME ZONE 'UTC')::date, organization_id, api_key_id, user_id, count(*), sum(episode_count) FROM new_entries GROUP BY 1, 2, 3, 4
    ON CONFLICT (month, organization_id, api_key_id, user_id) DO UPDATE SET entries = s.entries + excluded.entries, episodes = s.episodes + excluded.episodes;
  INSERT INTO disclosure_licence_totals AS s (licence_id, channel, entries, episodes, bytes, last_seq, last_at)
    SELECT licence_id, channel, count(*), sum(episode_count), sum(total_bytes), max(seq), max(occurred_at) FROM new_entries WHERE licence_id IS NOT NULL GROUP BY 1, 2
    ON CONFLICT (licence_id, channel) DO UPDATE SET entries = s.entries + excluded.entries, episodes = s.episodes + excluded.episodes,
      bytes = s.bytes + excluded.bytes, last_seq = greatest(s.last_seq, excluded.last_seq), last_at = greatest(s.last_at, excluded.last_at);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION das_rebuild_disclosure_summaries() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7203115);
  TRUNCATE disclosure_daily_channels, disclosure_daily_organizations, disclosure_daily_versions, disclosure_daily_recipients, disclosure_monthly_recipients, disclosure_licence_totals;
  INSERT INTO disclosure_daily_channels (day, channel, entries, episodes)
    SELECT (occurred_at AT TIME ZONE 'UTC')::date, channel, count(*), sum(episode_count) FROM disclosures GROUP BY 1, 2;
  INSERT INTO disclosure_daily_organizations (day, organization_id, entries, episodes)
    SELECT (occurred_at AT TIME ZONE 'UTC')::date, organization_id, count(*), sum(episode_count) FROM disclosures GROUP BY 1, 2;
  INSERT INTO disclosure_daily_versions (day, version_id, entries, episodes)
    SELECT (occurred_at AT TIME ZONE 'UTC')::date, version_id, count(*), sum(episode_count) FROM disclosures GROUP BY 1, 2;
  INSERT INTO disclosure_daily_recipients (day, organization_id, api_key_id, user_id, entries, episodes)
    SELECT (occurred_at AT TIME ZONE 'UTC')::date, organization_id, api_key_id, user_id, count(*), sum(episode_count) FROM disclosures GROUP BY 1, 2, 3, 4;
  INSERT INTO disclosure_monthly_recipients (month, organization_id, api_key_id, user_id, entries, episodes)
    SELECT date_trunc('month', occurred_at AT TIME ZONE 'UTC')::date, organization_id, api_key_id, user_id, count(*), sum(episode_count) FROM disclosures GROUP BY 1, 2, 3, 4;
  INSERT INTO disclosure_licence_totals (licence_id, channel, entries, episodes, bytes, last_seq, last_at)
    SELECT licence_id, channel, count(*), sum(episode_count), sum(total_bytes), max(seq), max(occurred_at) FROM disclosures WHERE licence_id IS NOT NULL GROUP BY 1, 2;
END
$$;
--> statement-breakpoint
-- The log as it stands when this migration runs: one pass over it for the new table alone.
INSERT INTO disclosure_licence_totals (licence_id, channel, entries, episodes, bytes, last_seq, last_at)
  SELECT licence_id, channel, count(*), sum(episode_count), sum(total_bytes), max(seq), max(occurred_at) FROM disclosures WHERE licence_id IS NOT NULL GROUP BY 1, 2;
