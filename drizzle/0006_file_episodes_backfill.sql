-- Versions imported before file_episodes existed: each file of an episode holds that episode
-- alone, from 0 to the episode's duration (hand-written: drizzle has no data migrations).
INSERT INTO "file_episodes" ("version_id", "path", "episode_id", "start_s", "end_s")
SELECT f."version_id", f."path", f."episode_id", 0, e."duration_s"
FROM "files" f
JOIN "episodes" e ON e."version_id" = f."version_id" AND e."episode_id" = f."episode_id"
WHERE f."episode_id" IS NOT NULL
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- Manifests and downloads read which episodes a file holds from file_episodes, so it notifies the
-- API's caches like the other catalog tables (migration 0004): written only by an import, whose
-- version insert notifies anyway, this covers a repair by hand (hand-written: drizzle has no triggers).
CREATE TRIGGER file_episodes_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON file_episodes
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
