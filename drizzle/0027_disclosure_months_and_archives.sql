-- A month of the log closes (issue 36; decision 0138): once it has ended, the schedule walks the
-- chain through its last entry and records that as a checkpoint (mode 'month'), with what the
-- month holds: its first and last seq, the hash its first entry links to and its last entry's
-- hash. Those four values are what joins the month to its neighbours when it is no longer in the
-- database: `verify --full` steps over an archived month from the hash before it to the hash at
-- its end, and the archive is checked on its own against the same values (and against the month's
-- digest, signed with the head digests' key, in the store). Append-only, like the checkpoints.
ALTER TABLE disclosure_checkpoints DROP CONSTRAINT disclosure_checkpoints_mode_check;--> statement-breakpoint
ALTER TABLE disclosure_checkpoints ADD CONSTRAINT disclosure_checkpoints_mode_check CHECK (mode IN ('full', 'incremental', 'month'));--> statement-breakpoint
CREATE TABLE disclosure_months (
  month date PRIMARY KEY,
  entries bigint NOT NULL,
  first_seq bigint NOT NULL,
  last_seq bigint NOT NULL,
  prev_hash text NOT NULL,
  last_hash text NOT NULL,
  -- The checkpoint at its last entry (disclosure_checkpoints.id). No foreign key: the checkpoints'
  -- append-only trigger, not a key, is what refuses their TRUNCATE (migration 0008).
  checkpoint_id bigint NOT NULL,
  -- The signed month digest's key in the archive bucket; null when no signing key was configured.
  digest_key text,
  closed_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT disclosure_months_first_day CHECK (month = date_trunc('month', month)::date),
  CONSTRAINT disclosure_months_range CHECK (first_seq > 0 AND last_seq >= first_seq AND entries = last_seq - first_seq + 1)
);--> statement-breakpoint
-- What happened to each month's partitions: archived to the object store (then dropped) or
-- restored from it (attached again). The latest row of a month says where it is; its manifest in
-- the store names every object of the archive with its SHA-256.
CREATE TABLE disclosure_archives (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  month date NOT NULL REFERENCES disclosure_months (month),
  action text NOT NULL,
  bucket text NOT NULL,
  manifest_key text NOT NULL,
  manifest_sha256 text NOT NULL,
  at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT disclosure_archives_action_check CHECK (action IN ('archived', 'restored'))
);--> statement-breakpoint
CREATE INDEX disclosure_archives_month_idx ON disclosure_archives USING btree (month, id);--> statement-breakpoint
CREATE TRIGGER disclosure_months_append_only BEFORE UPDATE OR DELETE ON disclosure_months
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_months_no_truncate BEFORE TRUNCATE ON disclosure_months
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_archives_append_only BEFORE UPDATE OR DELETE ON disclosure_archives
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_archives_no_truncate BEFORE TRUNCATE ON disclosure_archives
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();
