-- The admin audit is evidence like the disclosure log (issue 34): append-only, and hash-chained so
-- that a row changed or removed behind the trigger's back (by whoever can turn it off) shows. The
-- database chains each row as it is inserted, under a lock, whoever inserts it: `seq` is its place
-- in the chain, `hash` covers the previous row's hash and the row's content
-- (admin_audit_entry_hash below; lib/admin/audit.ts's verifyAdminAudit recomputes it with an
-- expression of its own). Rows written before this migration are chained here, in id order.
ALTER TABLE "admin_audit" ADD COLUMN "seq" bigint;--> statement-breakpoint
ALTER TABLE "admin_audit" ADD COLUMN "prev_hash" text;--> statement-breakpoint
ALTER TABLE "admin_audit" ADD COLUMN "hash" text;--> statement-breakpoint
-- What a row's hash covers: every column but its id (an identity, handed out before the chain's
-- lock is taken) and its hashes, as jsonb's text (keys in a fixed order, the same on every server);
-- the time in UTC to the microsecond, whatever the session's time zone.
CREATE FUNCTION admin_audit_entry_hash(prev_hash text, a admin_audit) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT encode(sha256(convert_to(prev_hash || E'\n' || jsonb_build_object(
    'seq', a.seq,
    'occurred_at', to_char(a.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'actor_kind', a.actor_kind,
    'actor_id', a.actor_id,
    'actor_label', a.actor_label,
    'action', a.action,
    'target_id', a.target_id,
    'details', a.details)::text, 'UTF8')), 'hex')
$$;--> statement-breakpoint
DO $$
DECLARE
  r admin_audit;
  prev text := repeat('0', 64);
  n bigint := 0;
BEGIN
  FOR r IN SELECT * FROM admin_audit ORDER BY id LOOP
    n := n + 1;
    r.seq := n;
    UPDATE admin_audit SET seq = n, prev_hash = prev, hash = admin_audit_entry_hash(prev, r) WHERE id = r.id;
    prev := admin_audit_entry_hash(prev, r);
  END LOOP;
END
$$;--> statement-breakpoint
ALTER TABLE "admin_audit" ALTER COLUMN "seq" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "admin_audit" ALTER COLUMN "prev_hash" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "admin_audit" ALTER COLUMN "hash" SET NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "admin_audit_seq_key" ON "admin_audit" USING btree ("seq");--> statement-breakpoint
-- Each insert takes the chain's place under a transaction-scoped lock, so two administrators'
-- changes at once still make one chain; the lock is held to the change's commit.
CREATE FUNCTION admin_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  head admin_audit;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('das:admin_audit'));
  SELECT * INTO head FROM admin_audit ORDER BY seq DESC LIMIT 1;
  NEW.seq := coalesce(head.seq, 0) + 1;
  NEW.prev_hash := coalesce(head.hash, repeat('0', 64));
  NEW.hash := admin_audit_entry_hash(NEW.prev_hash, NEW);
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER admin_audit_chain BEFORE INSERT ON admin_audit FOR EACH ROW EXECUTE FUNCTION admin_audit_chain();--> statement-breakpoint
CREATE FUNCTION admin_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'admin_audit is append-only: % is refused', TG_OP
    USING ERRCODE = 'raise_exception', HINT = 'It is the record of every administrative change.';
END
$$;--> statement-breakpoint
CREATE TRIGGER admin_audit_append_only BEFORE UPDATE OR DELETE ON admin_audit
  FOR EACH ROW EXECUTE FUNCTION admin_audit_append_only();--> statement-breakpoint
CREATE TRIGGER admin_audit_no_truncate BEFORE TRUNCATE ON admin_audit
  FOR EACH STATEMENT EXECUTE FUNCTION admin_audit_append_only();--> statement-breakpoint
-- A licence is what its disclosures were made under: to whom, for which version, from when and
-- under which terms stay as granted (a change of terms is a new grant); its end may move and it may
-- be revoked, and the row is never removed (disclosures refer to it).
CREATE FUNCTION licences_granted_as_granted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'TRUNCATE') THEN
    RAISE EXCEPTION 'licences are kept: % is refused (revoke one instead)', TG_OP
      USING ERRCODE = 'raise_exception', HINT = 'Disclosures name the licence they were made under.';
  END IF;
  IF NEW.id IS DISTINCT FROM OLD.id OR NEW.organization_id IS DISTINCT FROM OLD.organization_id
     OR NEW.version_id IS DISTINCT FROM OLD.version_id OR NEW.granted_at IS DISTINCT FROM OLD.granted_at
     OR NEW.starts_at IS DISTINCT FROM OLD.starts_at OR NEW.terms_sha256 IS DISTINCT FROM OLD.terms_sha256 THEN
    RAISE EXCEPTION 'a licence is immutable as granted: only its end and its revocation may change'
      USING ERRCODE = 'raise_exception', HINT = 'A change of terms is a new grant.';
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER licences_granted_as_granted BEFORE UPDATE OR DELETE ON licences
  FOR EACH ROW EXECUTE FUNCTION licences_granted_as_granted();--> statement-breakpoint
CREATE TRIGGER licences_no_truncate BEFORE TRUNCATE ON licences
  FOR EACH STATEMENT EXECUTE FUNCTION licences_granted_as_granted();
