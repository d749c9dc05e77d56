-- The disclosure log partitioned by month (issue 36; docs/scaling.md; decision 0137): `disclosures`,
-- its resolved episodes, the per-licence copies it delivered (`disclosure_files`, migration 0025) and
-- its two per-entry summaries become declaratively partitioned by `occurred_at`, one partition per
-- calendar month (UTC), so that an old month can leave the
-- database as a whole (archived to the object store, `das-admin disclosures archive`) and a
-- month's VACUUM, index builds and backups stay a month's size. No hash changes: an entry's hash
-- covers its content and the previous entry's hash, not where its row is stored, and `seq` stays
-- one gapless sequence across partitions (occurred_at is read under the chain's lock, so it never
-- runs backwards along seq and each month holds one range of it).
--
-- Keys. A unique index of a partitioned table must hold the partition key: the primary key becomes
-- (id, occurred_at) and the seq index (seq, occurred_at); ids and seqs stay unique on their own (an
-- id is its millisecond and 80 random bits, a seq is handed out under the chain's lock, and any
-- duplicate is what verification reports). The idempotency key, which must be unique forever per
-- key or user whatever months are archived, moves to a table of its own, written in the entry's
-- statement. The episodes, the files and the two summaries get the entry's occurred_at, so that an
-- entry and everything derived from it always land in the same month.
--
-- No default partition: a default partition would keep ALTER TABLE … DETACH PARTITION CONCURRENTLY
-- from being used (archiving) and the planner from reading the months in order. Months are made
-- ahead instead: here, the current month and the next three; then by every server's schedule
-- (lib/disclosures/months.ts), through das_create_disclosure_months, which runs as the owner.
--
-- The move: under the chain's lock and an exclusive lock of the five tables, the rows are copied
-- into the partitioned tables, the copy is compared with the original row by row (count and a sum
-- of 64-bit hashes of every row's text, per table) and the migration fails, moving nothing, if any
-- table differs; then the old tables are dropped and the keys, indexes, foreign keys and triggers
-- are made on the new ones. `migrateDatabase` walks the whole chain before this migration and
-- again after it, and refuses to move a log that does not verify (lib/db/migrate.ts).
SELECT pg_advisory_xact_lock(7203115);--> statement-breakpoint
-- Migration 0002's refusal, naming the log's table when it fires on one of its partitions (row
-- triggers are cloned to each): "UPDATE on disclosures", not on disclosures_y2026m11.
CREATE OR REPLACE FUNCTION disclosure_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the disclosure log is append-only: % on % is refused', TG_OP, coalesce(pg_partition_root(TG_RELID)::text, TG_TABLE_NAME)
    USING ERRCODE = 'raise_exception', HINT = 'Entries are never changed or removed; the hash chain would break.';
END
$$;--> statement-breakpoint
LOCK TABLE disclosures, disclosure_episodes, disclosure_contributors, disclosure_episode_entries, disclosure_files
  IN ACCESS EXCLUSIVE MODE;--> statement-breakpoint
CREATE TABLE disclosure_idempotency_keys (
  scope text NOT NULL,
  key text NOT NULL,
  disclosure_id text NOT NULL,
  request_sha256 text NOT NULL,
  CONSTRAINT disclosure_idempotency_keys_pk PRIMARY KEY (scope, key)
);--> statement-breakpoint
INSERT INTO disclosure_idempotency_keys (scope, key, disclosure_id, request_sha256)
  SELECT idempotency_scope, idempotency_key, id, request_sha256 FROM disclosures WHERE idempotency_key IS NOT NULL;--> statement-breakpoint
CREATE TRIGGER disclosure_idempotency_keys_append_only BEFORE UPDATE OR DELETE ON disclosure_idempotency_keys
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_idempotency_keys_no_truncate BEFORE TRUNCATE ON disclosure_idempotency_keys
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
ALTER TABLE disclosures RENAME TO disclosures_unpartitioned;--> statement-breakpoint
ALTER TABLE disclosure_episodes RENAME TO disclosure_episodes_unpartitioned;--> statement-breakpoint
ALTER TABLE disclosure_contributors RENAME TO disclosure_contributors_unpartitioned;--> statement-breakpoint
ALTER TABLE disclosure_episode_entries RENAME TO disclosure_episode_entries_unpartitioned;--> statement-breakpoint
ALTER TABLE disclosure_files RENAME TO disclosure_files_unpartitioned;--> statement-breakpoint
CREATE TABLE disclosures (
  id text NOT NULL,
  seq bigint NOT NULL,
  occurred_at timestamp with time zone NOT NULL,
  organization_id text,
  api_key_id text,
  user_id text,
  channel text NOT NULL,
  dataset_id text NOT NULL,
  version text NOT NULL,
  version_id integer NOT NULL,
  licence_id text,
  requested_scope jsonb NOT NULL,
  episode_count integer NOT NULL,
  file_count integer NOT NULL,
  total_bytes bigint NOT NULL,
  episodes_sha256 text NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  request_id text NOT NULL,
  idempotency_scope text,
  idempotency_key text,
  request_sha256 text NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL,
  reviewer_role text,
  names_terms boolean DEFAULT false NOT NULL,
  terms_sha256 text,
  files_sha256 text,
  CONSTRAINT disclosures_basis_check CHECK ((reviewer_role IS NULL AND organization_id IS NOT NULL AND licence_id IS NOT NULL)
    OR (reviewer_role IN ('reviewer', 'admin') AND channel = 'preview' AND user_id IS NOT NULL
        AND api_key_id IS NULL AND organization_id IS NULL AND licence_id IS NULL)),
  CONSTRAINT disclosures_channel_check CHECK (channel IN ('api', 'portal', 'preview', 'hub')),
  CONSTRAINT disclosures_recipient_check CHECK (api_key_id IS NOT NULL OR user_id IS NOT NULL),
  CONSTRAINT disclosures_seq_positive CHECK (seq > 0),
  -- Migration 0017's, validated now: every row satisfies it (copied through it below).
  CONSTRAINT disclosures_terms_check CHECK ((terms_sha256 IS NULL OR names_terms) AND (NOT names_terms OR licence_id IS NOT NULL))
) PARTITION BY RANGE (occurred_at);--> statement-breakpoint
CREATE TABLE disclosure_episodes (
  disclosure_id text NOT NULL,
  version_id integer NOT NULL,
  episode_id text COLLATE "C" NOT NULL,
  occurred_at timestamp with time zone NOT NULL
) PARTITION BY RANGE (occurred_at);--> statement-breakpoint
CREATE TABLE disclosure_contributors (
  disclosure_id text NOT NULL,
  seq bigint NOT NULL,
  contributor text NOT NULL,
  episode_count integer NOT NULL,
  organization_id text,
  channel text NOT NULL,
  occurred_at timestamp with time zone NOT NULL
) PARTITION BY RANGE (occurred_at);--> statement-breakpoint
CREATE TABLE disclosure_episode_entries (
  episode_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  organization_id text,
  channel text NOT NULL,
  occurred_at timestamp with time zone NOT NULL
) PARTITION BY RANGE (occurred_at);--> statement-breakpoint
CREATE TABLE disclosure_files (
  disclosure_id text NOT NULL,
  path text COLLATE "C" NOT NULL,
  sha256 text NOT NULL,
  occurred_at timestamp with time zone NOT NULL
) PARTITION BY RANGE (occurred_at);--> statement-breakpoint
-- The months of the log, each a partition of all five tables: `<table>_yYYYYmMM`, from the first
-- day of `first_month` (UTC) through `last_month`; a month that exists is left as it is. A partition
-- is made as a table of its own and then attached, which locks the parent only against other DDL,
-- never against appends or reads. Runs as its owner (SECURITY DEFINER), so that the service's
-- schedule can make months ahead while its role owns nothing; one caller at a time.
CREATE FUNCTION das_create_disclosure_months(first_month date, last_month date) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET lock_timeout = '10s' AS $$
DECLARE
  m date := date_trunc('month', first_month)::date;
  t text;
  part text;
  made integer := 0;
BEGIN
  IF last_month - first_month > 3660 THEN
    RAISE EXCEPTION 'das_create_disclosure_months: at most ten years at once (% to %)', first_month, last_month;
  END IF;
  PERFORM pg_advisory_xact_lock(7203117);
  WHILE m <= last_month LOOP
    FOREACH t IN ARRAY ARRAY['disclosures', 'disclosure_episodes', 'disclosure_contributors', 'disclosure_episode_entries',
        'disclosure_files'] LOOP
      part := t || to_char(m, '"_y"YYYY"m"MM');
      IF to_regclass(part) IS NULL THEN
        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, t);
        EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', t, part,
          m::timestamp AT TIME ZONE 'UTC', (m + interval '1 month')::timestamp AT TIME ZONE 'UTC');
        -- Row triggers are cloned from the parent; TRUNCATE of a partition is refused by its own.
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only()',
          part || '_no_truncate', part);
        made := made + 1;
      END IF;
    END LOOP;
    m := (m + interval '1 month')::date;
  END LOOP;
  RETURN made;
END
$$;--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION das_create_disclosure_months(date, date) FROM PUBLIC;--> statement-breakpoint
SELECT das_create_disclosure_months(
  coalesce((SELECT min(occurred_at) AT TIME ZONE 'UTC' FROM disclosures_unpartitioned), now() AT TIME ZONE 'UTC')::date,
  ((now() AT TIME ZONE 'UTC') + interval '3 months')::date);--> statement-breakpoint
INSERT INTO disclosures (id, seq, occurred_at, organization_id, api_key_id, user_id, channel, dataset_id, version, version_id,
    licence_id, requested_scope, episode_count, file_count, total_bytes, episodes_sha256, expires_at, request_id, idempotency_scope,
    idempotency_key, request_sha256, prev_hash, hash, reviewer_role, names_terms, terms_sha256, files_sha256)
  SELECT id, seq, occurred_at, organization_id, api_key_id, user_id, channel, dataset_id, version, version_id,
    licence_id, requested_scope, episode_count, file_count, total_bytes, episodes_sha256, expires_at, request_id, idempotency_scope,
    idempotency_key, request_sha256, prev_hash, hash, reviewer_role, names_terms, terms_sha256, files_sha256
  FROM disclosures_unpartitioned;--> statement-breakpoint
INSERT INTO disclosure_episodes (disclosure_id, version_id, episode_id, occurred_at)
  SELECT e.disclosure_id, e.version_id, e.episode_id, d.occurred_at
  FROM disclosure_episodes_unpartitioned e JOIN disclosures_unpartitioned d ON d.id = e.disclosure_id;--> statement-breakpoint
INSERT INTO disclosure_contributors (disclosure_id, seq, contributor, episode_count, organization_id, channel, occurred_at)
  SELECT c.disclosure_id, c.seq, c.contributor, c.episode_count, c.organization_id, c.channel, d.occurred_at
  FROM disclosure_contributors_unpartitioned c JOIN disclosures_unpartitioned d ON d.id = c.disclosure_id;--> statement-breakpoint
INSERT INTO disclosure_episode_entries (episode_id, seq, organization_id, channel, occurred_at)
  SELECT x.episode_id, x.seq, x.organization_id, x.channel, d.occurred_at
  FROM disclosure_episode_entries_unpartitioned x JOIN disclosures_unpartitioned d ON d.seq = x.seq;--> statement-breakpoint
INSERT INTO disclosure_files (disclosure_id, path, sha256, occurred_at)
  SELECT f.disclosure_id, f.path, f.sha256, d.occurred_at
  FROM disclosure_files_unpartitioned f JOIN disclosures_unpartitioned d ON d.id = f.disclosure_id;--> statement-breakpoint
-- Every row copied, and copied exactly: per table the count and a sum of a 64-bit hash of each
-- row's text (its columns before this migration), compared between the original and the copy. A
-- row of episodes, files or summaries without its entry (only a tampered log has one) is not copied,
-- and so fails this too: such a log is repaired before it is moved.
DO $$
DECLARE
  differing text;
BEGIN
  SELECT string_agg(name, ', ') INTO differing FROM (
    SELECT 'disclosures' AS name
    WHERE (SELECT (count(*), sum(hashtextextended(o::text, 0)::numeric)) FROM disclosures_unpartitioned o)
      IS DISTINCT FROM (SELECT (count(*), sum(hashtextextended(ROW(n.id, n.seq, n.occurred_at, n.organization_id, n.api_key_id, n.user_id,
        n.channel, n.dataset_id, n.version, n.version_id, n.licence_id, n.requested_scope, n.episode_count, n.file_count, n.total_bytes,
        n.episodes_sha256, n.expires_at, n.request_id, n.idempotency_scope, n.idempotency_key, n.request_sha256, n.prev_hash, n.hash,
        n.reviewer_role, n.names_terms, n.terms_sha256, n.files_sha256)::text, 0)::numeric)) FROM disclosures n)
    UNION ALL
    SELECT 'disclosure_episodes'
    WHERE (SELECT (count(*), sum(hashtextextended(o::text, 0)::numeric)) FROM disclosure_episodes_unpartitioned o)
      IS DISTINCT FROM (SELECT (count(*), sum(hashtextextended(ROW(n.disclosure_id, n.version_id, n.episode_id)::text, 0)::numeric))
        FROM disclosure_episodes n)
    UNION ALL
    SELECT 'disclosure_contributors'
    WHERE (SELECT (count(*), sum(hashtextextended(o::text, 0)::numeric)) FROM disclosure_contributors_unpartitioned o)
      IS DISTINCT FROM (SELECT (count(*), sum(hashtextextended(ROW(n.disclosure_id, n.seq, n.contributor, n.episode_count,
        n.organization_id, n.channel)::text, 0)::numeric)) FROM disclosure_contributors n)
    UNION ALL
    SELECT 'disclosure_episode_entries'
    WHERE (SELECT (count(*), sum(hashtextextended(o::text, 0)::numeric)) FROM disclosure_episode_entries_unpartitioned o)
      IS DISTINCT FROM (SELECT (count(*), sum(hashtextextended(ROW(n.episode_id, n.seq, n.organization_id, n.channel)::text, 0)::numeric))
        FROM disclosure_episode_entries n)
    UNION ALL
    SELECT 'disclosure_files'
    WHERE (SELECT (count(*), sum(hashtextextended(o::text, 0)::numeric)) FROM disclosure_files_unpartitioned o)
      IS DISTINCT FROM (SELECT (count(*), sum(hashtextextended(ROW(n.disclosure_id, n.path, n.sha256)::text, 0)::numeric))
        FROM disclosure_files n)
  ) d;
  IF differing IS NOT NULL THEN
    RAISE EXCEPTION 'moving the disclosure log into monthly partitions: the copy of % differs from the original; nothing was moved', differing
      USING HINT = 'A row of episodes, files or summaries without its entry is not copied: look for such rows.';
  END IF;
END
$$;--> statement-breakpoint
DROP TABLE disclosures_unpartitioned, disclosure_episodes_unpartitioned, disclosure_contributors_unpartitioned,
  disclosure_episode_entries_unpartitioned, disclosure_files_unpartitioned;--> statement-breakpoint
ALTER TABLE disclosures ADD CONSTRAINT disclosures_pkey PRIMARY KEY (id, occurred_at);--> statement-breakpoint
CREATE UNIQUE INDEX disclosures_seq_key ON disclosures USING btree (seq, occurred_at);--> statement-breakpoint
CREATE INDEX disclosures_occurred_idx ON disclosures USING btree (occurred_at, seq);--> statement-breakpoint
CREATE INDEX disclosures_api_key_idx ON disclosures USING btree (api_key_id, seq);--> statement-breakpoint
CREATE INDEX disclosures_channel_idx ON disclosures USING btree (channel, seq);--> statement-breakpoint
CREATE INDEX disclosures_dataset_idx ON disclosures USING btree (dataset_id, version, seq);--> statement-breakpoint
CREATE INDEX disclosures_licence_idx ON disclosures USING btree (licence_id, seq);--> statement-breakpoint
CREATE INDEX disclosures_organization_channel_idx ON disclosures USING btree (organization_id, channel, seq);--> statement-breakpoint
CREATE INDEX disclosures_organization_dataset_idx ON disclosures USING btree (organization_id, dataset_id, seq);--> statement-breakpoint
CREATE INDEX disclosures_organization_idx ON disclosures USING btree (organization_id, seq);--> statement-breakpoint
CREATE INDEX disclosures_reusable_idx ON disclosures USING btree (request_sha256, expires_at) WHERE channel IN ('preview', 'hub');--> statement-breakpoint
CREATE INDEX disclosures_terms_idx ON disclosures USING btree (terms_sha256, seq) WHERE terms_sha256 IS NOT NULL;--> statement-breakpoint
CREATE INDEX disclosures_user_idx ON disclosures USING btree (user_id, seq);--> statement-breakpoint
CREATE INDEX disclosures_version_idx ON disclosures USING btree (version, seq);--> statement-breakpoint
ALTER TABLE disclosures ADD CONSTRAINT disclosures_api_key_id_api_keys_id_fk FOREIGN KEY (api_key_id) REFERENCES api_keys(id);--> statement-breakpoint
ALTER TABLE disclosures ADD CONSTRAINT disclosures_licence_id_licences_id_fk FOREIGN KEY (licence_id) REFERENCES licences(id);--> statement-breakpoint
ALTER TABLE disclosures ADD CONSTRAINT disclosures_organization_id_organizations_id_fk FOREIGN KEY (organization_id) REFERENCES organizations(id);--> statement-breakpoint
ALTER TABLE disclosures ADD CONSTRAINT disclosures_terms_sha256_terms_documents_sha256_fk FOREIGN KEY (terms_sha256) REFERENCES terms_documents(sha256);--> statement-breakpoint
ALTER TABLE disclosures ADD CONSTRAINT disclosures_user_id_users_id_fk FOREIGN KEY (user_id) REFERENCES users(id);--> statement-breakpoint
ALTER TABLE disclosures ADD CONSTRAINT disclosures_version_id_dataset_versions_id_fk FOREIGN KEY (version_id) REFERENCES dataset_versions(id);--> statement-breakpoint
ALTER TABLE disclosure_episodes ADD CONSTRAINT disclosure_episodes_pk PRIMARY KEY (disclosure_id, episode_id, occurred_at);--> statement-breakpoint
ALTER TABLE disclosure_contributors ADD CONSTRAINT disclosure_contributors_pk PRIMARY KEY (disclosure_id, contributor, occurred_at);--> statement-breakpoint
CREATE INDEX disclosure_contributors_contributor_idx ON disclosure_contributors USING btree (contributor, seq)
  INCLUDE (disclosure_id, organization_id, channel, episode_count);--> statement-breakpoint
CREATE INDEX disclosure_contributors_organization_idx ON disclosure_contributors USING btree (contributor, organization_id, seq)
  INCLUDE (disclosure_id, channel, episode_count);--> statement-breakpoint
CREATE INDEX disclosure_contributors_channel_idx ON disclosure_contributors USING btree (contributor, channel, seq)
  INCLUDE (disclosure_id, organization_id, episode_count);--> statement-breakpoint
ALTER TABLE disclosure_episode_entries ADD CONSTRAINT disclosure_episode_entries_pk PRIMARY KEY (episode_id, seq, occurred_at)
  INCLUDE (organization_id, channel);--> statement-breakpoint
ALTER TABLE disclosure_files ADD CONSTRAINT disclosure_files_pk PRIMARY KEY (disclosure_id, path, occurred_at);--> statement-breakpoint
CREATE INDEX disclosure_files_sha256_idx ON disclosure_files USING btree (sha256, disclosure_id);--> statement-breakpoint
CREATE TRIGGER disclosures_append_only BEFORE UPDATE OR DELETE ON disclosures
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosures_no_truncate BEFORE TRUNCATE ON disclosures
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosures_summaries AFTER INSERT ON disclosures
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION das_disclosure_summaries_add();--> statement-breakpoint
CREATE TRIGGER disclosure_episodes_append_only BEFORE UPDATE OR DELETE ON disclosure_episodes
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_episodes_no_truncate BEFORE TRUNCATE ON disclosure_episodes
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_contributors_append_only BEFORE UPDATE OR DELETE ON disclosure_contributors
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_contributors_no_truncate BEFORE TRUNCATE ON disclosure_contributors
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_episode_entries_append_only BEFORE UPDATE OR DELETE ON disclosure_episode_entries
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_episode_entries_no_truncate BEFORE TRUNCATE ON disclosure_episode_entries
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_files_append_only BEFORE UPDATE OR DELETE ON disclosure_files
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_files_no_truncate BEFORE TRUNCATE ON disclosure_files
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
-- Migrations 0011 and 0014's functions for bulk loads, with the entry's occurred_at in each row.
CREATE OR REPLACE FUNCTION das_count_disclosure_contributors() RETURNS bigint
LANGUAGE plpgsql SET enable_nestloop = off SET work_mem = '256MB' AS $$
DECLARE
  counted bigint;
BEGIN
  INSERT INTO disclosure_contributors (disclosure_id, seq, contributor, episode_count, organization_id, channel, occurred_at)
    SELECT d.id, d.seq, e.contributor, count(*)::int, d.organization_id, d.channel, d.occurred_at
    FROM disclosure_episodes de
    JOIN episodes e ON e.version_id = de.version_id AND e.episode_id = de.episode_id
    JOIN disclosures d ON d.id = de.disclosure_id AND d.occurred_at = de.occurred_at
    WHERE NOT EXISTS (SELECT 1 FROM disclosure_contributors c WHERE c.disclosure_id = d.id)
    GROUP BY d.id, d.seq, e.contributor, d.organization_id, d.channel, d.occurred_at;
  GET DIAGNOSTICS counted = ROW_COUNT;
  RETURN counted;
END
$$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION das_index_disclosure_episodes() RETURNS bigint
LANGUAGE plpgsql SET enable_nestloop = off SET work_mem = '256MB' AS $$
DECLARE
  added bigint;
BEGIN
  INSERT INTO disclosure_episode_entries (episode_id, seq, organization_id, channel, occurred_at)
    SELECT de.episode_id, d.seq, d.organization_id, d.channel, d.occurred_at
    FROM disclosure_episodes de
    JOIN disclosures d ON d.id = de.disclosure_id AND d.occurred_at = de.occurred_at
    WHERE d.seq > coalesce((SELECT max(seq) FROM disclosure_episode_entries), 0);
  GET DIAGNOSTICS added = ROW_COUNT;
  RETURN added;
END
$$;
