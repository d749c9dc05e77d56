-- A contributor searched with a channel: the channel a contributor's entries rarely have (previews
-- are about 3% of the log) walked all of that contributor's summary rows to count 10,001 of them or
-- reach the end: 135,336 rows for the most frequent contributor at 10M entries, 1.6 s on a cold
-- cache for a count of 710. With the channel in the key, a page and a capped count read no more
-- than they return, like the organisation (migration 0012). Covering, for the same reason.
CREATE INDEX "disclosure_contributors_channel_idx" ON "disclosure_contributors" USING btree ("contributor","channel","seq")
  INCLUDE ("disclosure_id","organization_id","episode_count");
