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
-- The others alike, one trigger each, named <table>_notify_cache. A released version's contents
-- (episodes, annotations, files) never change after its import's transaction; their triggers
-- cover anything that would change them anyway (a repair by hand), at one notification per statement.
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['api_key_scopes', 'licences', 'organizations', 'users', 'datasets', 'dataset_versions', 'changelog_entries', 'episodes', 'annotations', 'files'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation()', t || '_notify_cache', t);
  END LOOP;
END
$$;
