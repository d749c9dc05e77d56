-- Versions imported before file_episodes existed: each file of an episode holds that episode
-- alone, from 0 to the episode's duration (hand-written: drizzle has no data migrations).
INSERT INTO "file_episodes" ("version_id", "path", "episode_id", "start_s", "end_s")
SELECT f."version_id", f."path", f."episode_id", 0, e."duration_s"
FROM "files" f
JOIN "episodes" e ON e."version_id" = f."version_id" AND e."episode_id" = f."episode_id"
WHERE f."episode_id" IS NOT NULL
ON CONFLICT DO NOTHING;
