-- Every app instance keeps keys, licences, the catalog and immutable response bodies in memory
-- (lib/cache). Whatever changes a table those answers depend on notifies channel `das_cache`, so
-- that every instance drops what it holds at once, whoever the writer is: the portal, das-admin in
-- another process, an import, a psql session. NOTIFY is delivered when the writing transaction
-- commits (never for one that rolls back), and identical notifications of one transaction are
-- delivered once. The payload is the table's name, for the logs; every notification flushes all.
CREATE FUNCTION notify_cache_invalidation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('das_cache', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Statement-level (one notification per statement, however many rows): the tables of who may
-- read what, and of what there is to read.
CREATE TRIGGER api_keys_notify_cache AFTER INSERT OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
-- An update of a key notifies only when it changes more than `last_used_at`, which is written once
-- a minute per key in use and changes no answer; flushing on it would empty every cache every minute.
CREATE TRIGGER api_keys_update_notify_cache AFTER UPDATE ON api_keys
  FOR EACH ROW WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
  EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
CREATE TRIGGER api_key_scopes_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_key_scopes
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
CREATE TRIGGER licences_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON licences
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
CREATE TRIGGER organizations_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
CREATE TRIGGER users_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
CREATE TRIGGER datasets_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON datasets
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
CREATE TRIGGER dataset_versions_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dataset_versions
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
CREATE TRIGGER changelog_entries_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON changelog_entries
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
-- A released version's contents never change after its import's transaction; these cover anything
-- that would change them anyway (a repair by hand), at one notification per statement.
CREATE TRIGGER episodes_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON episodes
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
CREATE TRIGGER annotations_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON annotations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
CREATE TRIGGER files_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON files
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
