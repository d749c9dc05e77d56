-- "Who received episode E" at ten million entries (issue 12). An episode id recurs in every
-- version that kept it and in every download of a whole version: the most received were held by
-- 40,000 entries. Migration 0011 found them from the episode index (their ids) and then probed
-- `disclosures_id_seq` once per id for its seq, organisation and channel, to put them in the log's
-- order before a page could be cut: 40,000 probes scattered over the whole log, which on a cold
-- cache took up to 1.9 s for a page of 50.
--
-- This summary holds, for every disclosed episode, the entry's seq, organisation and channel, keyed
-- (episode_id, seq) with the other two in the key's index: the entries holding an episode are one
-- range of one index, already in the log's order, so a page reads as many index entries as it
-- shows (a time range bounds the seq inside it), and a count with an organisation or a channel
-- reads no table row. Like the contributor summary it is derived (from `disclosure_episodes` and
-- the entry), append-only, and filled at append (lib/disclosures/append.ts).
--
-- The two indexes that served the old walk go: nothing else looks an episode up across entries, or
-- an entry up by id for its seq (the primary key finds an entry by id).
CREATE TABLE "disclosure_episode_entries" (
	"episode_id" text COLLATE "C" NOT NULL,
	"seq" bigint NOT NULL,
	"organization_id" text,
	"channel" text NOT NULL,
	CONSTRAINT "disclosure_episode_entries_pk" PRIMARY KEY("episode_id","seq") INCLUDE ("organization_id","channel")
);--> statement-breakpoint
CREATE TRIGGER disclosure_episode_entries_append_only BEFORE UPDATE OR DELETE ON disclosure_episode_entries
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_episode_entries_no_truncate BEFORE TRUNCATE ON disclosure_episode_entries
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
-- Adds the episodes of every entry after the last one the summary holds (all of them here; a bulk
-- load that bypasses appendDisclosure calls it after loading). Entries are appended in seq order,
-- so "after the last one held" is exactly "not yet held". Hash joins for the same reason as
-- das_count_disclosure_contributors (migration 0011): the whole log, not a few rows.
CREATE FUNCTION das_index_disclosure_episodes() RETURNS bigint
LANGUAGE plpgsql SET enable_nestloop = off SET work_mem = '256MB' AS $$
DECLARE
  added bigint;
BEGIN
  INSERT INTO disclosure_episode_entries (episode_id, seq, organization_id, channel)
    SELECT de.episode_id, d.seq, d.organization_id, d.channel
    FROM disclosure_episodes de
    JOIN disclosures d ON d.id = de.disclosure_id
    WHERE d.seq > coalesce((SELECT max(seq) FROM disclosure_episode_entries), 0);
  GET DIAGNOSTICS added = ROW_COUNT;
  RETURN added;
END
$$;--> statement-breakpoint
SELECT das_index_disclosure_episodes();--> statement-breakpoint
DROP INDEX "disclosure_episodes_episode_idx";--> statement-breakpoint
DROP INDEX "disclosures_id_seq";
