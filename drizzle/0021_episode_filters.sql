-- Filters of episode lists beyond outcome and environment (task, contributor, has_recovery, a
-- duration range), for the API's episode pages, the portal's explorer and downloads by filter.
--
-- Totals. A page's `total` counts every episode matching its filter. Outcome and environment are
-- counted once at import (dataset_versions.facet_counts); the new categorical filters and their
-- combinations are sums over this table: one row per (version, outcome, environment, task,
-- contributor, has_recovery) with how many episodes share it, written by the import in its
-- transaction. A version has as many rows as distinct combinations (216 for the benchmark's
-- million episodes), so any total is a sum over a handful of rows instead of a count over the
-- version. Released versions never change; withdrawn episodes are subtracted at read time.
CREATE TABLE "episode_facets" (
	"version_id" integer NOT NULL REFERENCES "dataset_versions"("id"),
	"outcome" text NOT NULL,
	"environment" text NOT NULL,
	"task" text NOT NULL,
	"contributor" text NOT NULL,
	"has_recovery" boolean NOT NULL,
	"episodes" integer NOT NULL,
	CONSTRAINT "episode_facets_pk" PRIMARY KEY ("version_id", "outcome", "environment", "task", "contributor", "has_recovery"),
	CONSTRAINT "episode_facets_episodes_positive" CHECK ("episodes" > 0)
);--> statement-breakpoint
-- The versions imported before this table existed (hand-written: drizzle has no data migrations).
INSERT INTO "episode_facets" ("version_id", "outcome", "environment", "task", "contributor", "has_recovery", "episodes")
SELECT "version_id", "outcome", "environment", "task", "contributor", "has_recovery", count(*)::int
FROM "episodes"
GROUP BY 1, 2, 3, 4, 5, 6;
--> statement-breakpoint
-- Written only by an import, whose version insert notifies anyway; this covers a repair by hand,
-- as for the other catalog tables (migration 0004).
CREATE TRIGGER episode_facets_notify_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON episode_facets
  FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
--> statement-breakpoint
-- Pages. Like outcome's and environment's, a task's and a contributor's page is one range of an
-- index ending in episode_id, at any depth. The included columns let a duration-range total under a
-- task or a contributor count from the index alone (an index-only scan, no heap), and let
-- has_recovery be checked there too.
CREATE INDEX "episodes_task_idx" ON "episodes" USING btree ("version_id", "task", "episode_id") INCLUDE ("has_recovery", "duration_s");--> statement-breakpoint
CREATE INDEX "episodes_version_contributor_idx" ON "episodes" USING btree ("version_id", "contributor", "episode_id") INCLUDE ("has_recovery", "duration_s");--> statement-breakpoint
-- A duration range's total without other filters is one range of this index (index-only), and a
-- narrow range's page reads its few matches from it.
CREATE INDEX "episodes_duration_idx" ON "episodes" USING btree ("version_id", "duration_s") INCLUDE ("has_recovery");
