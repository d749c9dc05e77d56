import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyChain } from "@/lib/disclosures/verify";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import { BENCH_SHAPE, generateDisclosureLog, type GeneratedLog } from "./disclosure-log";

// The benchmark's generator at a small size: its log must be one the product itself accepts.
const SHAPE = {
  ...BENCH_SHAPE,
  entries: 2_000,
  versions: 10,
  episodes: 4_000,
  contributors: 200,
  organizations: 8,
  keys: 40,
  wholeVersionEvery: 200,
};

let iso: IsolatedDb;
let generated: GeneratedLog;
beforeAll(async () => {
  iso = await createIsolatedDb("benchlog");
  generated = await generateDisclosureLog(iso.sql, SHAPE);
});
afterAll(() => iso?.drop());

describe("the bench:review log generator", () => {
  it("writes a chain the product's verifyChain accepts, ending at the hash it reports", async () => {
    expect(await verifyChain(iso.operator)).toEqual({
      intact: true,
      count: SHAPE.entries,
      headHash: generated.headHash,
    });
  });

  it("writes the catalog and the recipients it was asked for", async () => {
    const [counts] = await iso.sql<
      {
        versions: number;
        episodes: number;
        contributors: number;
        organizations: number;
        keys: number;
        reviewers: number;
      }[]
    >`
      select (select count(*)::int from dataset_versions) as versions, (select count(*)::int from episodes) as episodes,
             (select count(distinct contributor)::int from episodes) as contributors, (select count(*)::int from organizations) as organizations,
             (select count(*)::int from api_keys where key_hash ~ '^[0-9a-f]{64}$') as keys, (select count(*)::int from users where role = 'reviewer') as reviewers`;
    expect(counts!.versions).toBe(SHAPE.versions);
    expect(Math.abs(counts!.episodes - SHAPE.episodes)).toBeLessThan(SHAPE.episodes * 0.05);
    // Skewed, but most of the 200 contributors recorded something.
    expect(counts!.contributors).toBeGreaterThan(SHAPE.contributors * 0.5);
    expect(counts!.organizations).toBe(SHAPE.organizations);
    expect(counts!.keys).toBe(SHAPE.keys);
    expect(counts!.reviewers).toBe(SHAPE.reviewers);
  });

  it("mixes small downloads, rare whole versions and a few previews, in time order", async () => {
    const [mix] = await iso.sql<
      {
        entries: number;
        small: number;
        over50: number;
        whole: number;
        api: number;
        portal: number;
        preview: number;
        reviewer_previews: number;
        episode_rows: number;
        backwards: number;
        days: number;
      }[]
    >`
      select count(*)::int as entries,
             count(*) filter (where episode_count between 1 and 50 and requested_scope ? 'episode_ids')::int as small,
             count(*) filter (where episode_count > 50 and requested_scope ? 'episode_ids')::int as over50,
             count(*) filter (where requested_scope ? 'include_version_files')::int as whole,
             count(*) filter (where channel = 'api')::int as api, count(*) filter (where channel = 'portal')::int as portal,
             count(*) filter (where channel = 'preview')::int as preview,
             count(*) filter (where reviewer_role = 'reviewer')::int as reviewer_previews,
             (select count(*)::int from disclosure_episodes) as episode_rows,
             (select count(*)::int from (select occurred_at < lag(occurred_at) over (order by seq) as back from disclosures) x where back) as backwards,
             extract(day from max(occurred_at) - min(occurred_at))::int as days
      from disclosures`;
    expect(mix!.entries).toBe(SHAPE.entries);
    expect(mix!.over50).toBe(0);
    expect(mix!.small + mix!.whole).toBe(SHAPE.entries);
    expect(mix!.small).toBeGreaterThan(SHAPE.entries * 0.95);
    expect(mix!.whole).toBe(generated.wholeVersionEntries);
    expect(mix!.whole).toBeGreaterThan(0);
    expect(mix!.api).toBeGreaterThan(mix!.portal);
    expect(mix!.portal).toBeGreaterThan(mix!.preview);
    expect(mix!.preview).toBeGreaterThan(0);
    expect(mix!.reviewer_previews).toBe(generated.reviewerPreviews);
    expect(mix!.episode_rows).toBe(generated.disclosedEpisodes);
    expect(mix!.backwards).toBe(0);
    expect(mix!.days).toBeGreaterThan(SHAPE.years * 365 - 2);
  });

  it("makes ids as the service does, beginning with the millisecond of their entry, so that they sort along seq", async () => {
    const [ids] = await iso.sql<{ malformed: number; not_their_time: number; backwards: number }[]>`
      select count(*) filter (where id !~ '^(dl|pv)_[0-9a-f]{12}[0-9A-Za-z]{14}$')::int as malformed,
             count(*) filter (where ('x' || lpad(substr(id, 4, 12), 16, '0'))::bit(64)::bigint <> (extract(epoch from occurred_at) * 1000)::bigint)::int as not_their_time,
             (select count(*)::int from (select substr(id, 4, 12) < lag(substr(id, 4, 12)) over (order by seq) as back from disclosures) x where back) as backwards
      from disclosures`;
    expect(ids).toEqual({ malformed: 0, not_their_time: 0, backwards: 0 });
  });

  it("fills the episode summary as appendDisclosure would: a row per disclosed episode with its entry's seq, organisation and channel", async () => {
    const [counted] = await iso.sql<{ episodes: number; rows: number; unmatched: number }[]>`
      select (select count(*)::int from disclosure_episodes) as episodes,
             (select count(*)::int from disclosure_episode_entries) as rows,
             (select count(*)::int from disclosure_episodes de join disclosures d on d.id = de.disclosure_id
              where not exists (select 1 from disclosure_episode_entries m where m.episode_id = de.episode_id and m.seq = d.seq
                                  and m.organization_id is not distinct from d.organization_id and m.channel = d.channel)) as unmatched`;
    expect(counted!.rows).toBeGreaterThan(0);
    expect(counted).toEqual({ episodes: counted!.rows, rows: counted!.rows, unmatched: 0 });
  });

  it("rebuilt every key and index it dropped for the load", async () => {
    const indexes = await iso.sql<{ name: string }[]>`
      select indexname as name from pg_indexes where tablename in ('disclosures', 'disclosure_episodes', 'disclosure_contributors', 'disclosure_episode_entries')`;
    expect(indexes.map((i) => i.name)).toEqual(
      expect.arrayContaining([
        "disclosures_pkey",
        "disclosures_seq_key",
        "disclosures_organization_idx",
        "disclosure_episodes_pk",
        "disclosure_contributors_contributor_idx",
        "disclosure_episode_entries_pk",
      ]),
    );
    // Built on the log's tables, so on every month's partition (migration 0026), not on the parents alone.
    const [invalid] = await iso.sql<{ n: number }[]>`select count(*)::int as n from pg_index where not indisvalid`;
    expect(invalid!.n).toBe(0);
    // Still append-only.
    await expect(iso.sql`delete from disclosures where seq = 1`).rejects.toThrow(/append-only/);
  });
});
