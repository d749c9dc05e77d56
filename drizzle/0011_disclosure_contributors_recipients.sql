-- The reviewer's combined searches at millions of entries (issue 12). Measured at 3M entries, a
-- search by contributor and organisation took up to 2.7 s: it walked every entry holding the
-- contributor's episodes, newest first, and read each entry to compare its organisation, so a busy
-- contributor with a rare organisation read tens of thousands of rows to show none.
--
-- The contributor summary now carries the entry's organisation and channel (both hashed in the
-- entry; copied here as `seq` is), so those two filters are answered inside its indexes:
-- (contributor, organization_id, seq) walks exactly the matching entries, and (contributor, seq)
-- covers every column a walk compares, so a contributor with a channel, or with a time range,
-- reads index entries only and the entries themselves only for the rows a page shows.
--
-- The summary is derived data (from the entry's episodes and the catalog, which never change
-- after import), so it is rebuilt rather than altered in place: dropping it is not an update or
-- a delete of the log, and the rebuild counts every entry as appendDisclosure would have.
DROP TABLE "disclosure_contributors";--> statement-breakpoint
CREATE TABLE "disclosure_contributors" (
	"disclosure_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"contributor" text NOT NULL,
	"episode_count" integer NOT NULL,
	"organization_id" text,
	"channel" text NOT NULL,
	CONSTRAINT "disclosure_contributors_pk" PRIMARY KEY("disclosure_id","contributor")
);--> statement-breakpoint
CREATE TRIGGER disclosure_contributors_append_only BEFORE UPDATE OR DELETE ON disclosure_contributors
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_contributors_no_truncate BEFORE TRUNCATE ON disclosure_contributors
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
-- Counts the contributors of every entry that has none counted yet (all of them here; a bulk load
-- that bypasses appendDisclosure calls it after loading). Hash joins, not the nested loops the
-- planner picks from its estimates: 10 s instead of 56 s per 2.5 million disclosed episodes; and
-- memory enough that the catalog's side of the join is one hash table rather than many batches.
CREATE FUNCTION das_count_disclosure_contributors() RETURNS bigint
LANGUAGE plpgsql SET enable_nestloop = off SET work_mem = '256MB' AS $$
DECLARE
  counted bigint;
BEGIN
  INSERT INTO disclosure_contributors (disclosure_id, seq, contributor, episode_count, organization_id, channel)
    SELECT d.id, d.seq, e.contributor, count(*)::int, d.organization_id, d.channel
    FROM disclosure_episodes de
    JOIN episodes e ON e.version_id = de.version_id AND e.episode_id = de.episode_id
    JOIN disclosures d ON d.id = de.disclosure_id
    WHERE NOT EXISTS (SELECT 1 FROM disclosure_contributors c WHERE c.disclosure_id = d.id)
    GROUP BY d.id, d.seq, e.contributor, d.organization_id, d.channel;
  GET DIAGNOSTICS counted = ROW_COUNT;
  RETURN counted;
END
$$;--> statement-breakpoint
SELECT das_count_disclosure_contributors();--> statement-breakpoint
CREATE INDEX "disclosure_contributors_contributor_idx" ON "disclosure_contributors" USING btree ("contributor","seq")
  INCLUDE ("disclosure_id","organization_id","channel","episode_count");--> statement-breakpoint
CREATE INDEX "disclosure_contributors_organization_idx" ON "disclosure_contributors" USING btree ("contributor","organization_id","seq");--> statement-breakpoint
-- An organisation's entries of one channel: a rare organisation with the common channel, or the
-- reverse, no longer walks one index checking the other column entry by entry.
CREATE INDEX "disclosures_organization_channel_idx" ON "disclosures" USING btree ("organization_id","channel","seq");
--> statement-breakpoint
-- An organisation's entries from one dataset, the reviewer's "what did Acme receive of this
-- dataset": the same reason.
CREATE INDEX "disclosures_organization_dataset_idx" ON "disclosures" USING btree ("organization_id","dataset_id","seq");--> statement-breakpoint
-- "Who received episode E": an episode id recurs in every version that kept it and in every
-- download of a whole version, tens of thousands of entries at ten million. Its index now holds
-- each entry's id, and a second index maps an id to its seq (and organisation and channel, the
-- filters that most often come with an episode), so that all of them are put in order and
-- filtered from two indexes alone and only the entries a page shows are read
-- (lib/disclosures/filter.ts).
DROP INDEX "disclosure_episodes_episode_idx";--> statement-breakpoint
CREATE INDEX "disclosure_episodes_episode_idx" ON "disclosure_episodes" USING btree ("episode_id","version_id") INCLUDE ("disclosure_id");--> statement-breakpoint
CREATE UNIQUE INDEX "disclosures_id_seq" ON "disclosures" USING btree ("id") INCLUDE ("seq","organization_id","channel");
