-- Daily summaries of the disclosure log, for the reviewer's overview (lib/disclosures/overview.ts):
-- entries and disclosed episodes (the sum of `episode_count`) per UTC day and one dimension each.
-- Separate narrow tables rather than one per day × every dimension, which would be about as large
-- as the log itself. Each holds at most (days × values of its dimension) rows, so a period's
-- figures read thousands of rows however many millions of entries the log holds.
--
-- The log is append-only (migration 0002), so inserts are the only change to follow. One
-- statement-level trigger with a transition table keeps every summary current: a bulk COPY of
-- millions of entries costs one aggregate per table, an ordinary download one small upsert per
-- table, in the same transaction as the entry (a rolled-back download leaves no count behind).
-- Appends are serialised by the chain's advisory lock (lib/disclosures/append.ts), so the upserts
-- of two downloads never contend; ON CONFLICT keeps them correct for any other writer too.
-- NULLS NOT DISTINCT (PostgreSQL 15) lets a reviewer's preview, which has no organisation
-- (migration 0007), be counted under its own key rather than dropped.

-- Per day and channel (api, portal, preview): the period's totals and the time series.
CREATE TABLE disclosure_daily_channels (
  day date NOT NULL,
  channel text NOT NULL,
  entries bigint NOT NULL,
  episodes bigint NOT NULL,
  PRIMARY KEY (day, channel)
);
--> statement-breakpoint
-- Per day and organisation; organization_id null for reviewers' and admins' previews.
CREATE TABLE disclosure_daily_organizations (
  day date NOT NULL,
  organization_id text,
  entries bigint NOT NULL,
  episodes bigint NOT NULL,
  CONSTRAINT disclosure_daily_organizations_key UNIQUE NULLS NOT DISTINCT (day, organization_id)
);
--> statement-breakpoint
-- Per day and dataset version (version_id names dataset and version, dataset_versions).
CREATE TABLE disclosure_daily_versions (
  day date NOT NULL,
  version_id integer NOT NULL,
  entries bigint NOT NULL,
  episodes bigint NOT NULL,
  PRIMARY KEY (day, version_id)
);
--> statement-breakpoint
-- Per day and recipient: the API key or the user an entry disclosed to, under its organisation
-- (null for a reviewer's preview). Exactly one of key and user is set in practice; the log's own
-- check asks for at least one, and the key is the pair, so any entry has a row.
CREATE TABLE disclosure_daily_recipients (
  day date NOT NULL,
  organization_id text,
  api_key_id text,
  user_id text,
  entries bigint NOT NULL,
  episodes bigint NOT NULL,
  CONSTRAINT disclosure_daily_recipients_key UNIQUE NULLS NOT DISTINCT (day, organization_id, api_key_id, user_id)
);
--> statement-breakpoint
-- The same per calendar month (its first day): recipients are the largest dimension (a thousand
-- keys and more users, many active each day), and a period's whole months are read from here, only
-- its partial months at either end from the daily table.
CREATE TABLE disclosure_monthly_recipients (
  month date NOT NULL,
  organization_id text,
  api_key_id text,
  user_id text,
  entries bigint NOT NULL,
  episodes bigint NOT NULL,
  CONSTRAINT disclosure_monthly_recipients_key UNIQUE NULLS NOT DISTINCT (month, organization_id, api_key_id, user_id)
);
--> statement-breakpoint
-- The trigger: the statement's new entries (its transition table), added to every summary.
-- The same aggregates over the whole log are das_rebuild_disclosure_summaries() below; the
-- tests compare both with direct counts over the log.
CREATE FUNCTION das_disclosure_summaries_add() RETURNS trigger LANGUAGE plpgsql AS $$
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
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER disclosures_summaries AFTER INSERT ON disclosures
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION das_disclosure_summaries_add();
--> statement-breakpoint
-- Recomputes every summary from the whole log: for a log loaded with the trigger disabled (a
-- benchmark's bulk load may do so and call this once at the end), or to check the summaries
-- against the log. Under the chain's lock (lib/disclosures/append.ts, CHAIN_LOCK), so no download
-- appends between emptying the summaries and counting again.
CREATE FUNCTION das_rebuild_disclosure_summaries() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7203115);
  TRUNCATE disclosure_daily_channels, disclosure_daily_organizations, disclosure_daily_versions, disclosure_daily_recipients, disclosure_monthly_recipients;
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
END
$$;
--> statement-breakpoint
-- The log as it stands when this migration runs.
SELECT das_rebuild_disclosure_summaries();
