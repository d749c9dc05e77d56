import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@/lib/errors";
import {
  allRecipientsOfContributor,
  buildWorld,
  downloadPlan,
  exportOracle,
  makeSequentially,
  parseCsv,
  type Made,
  type World,
} from "@/lib/testing/disclosure-fixtures";
import { withTriggersDisabled } from "@/lib/testing/isolated-db";
import { disclosureFilter } from "./filter";
import { exportRecipientsOfContributor, recipientsOfContributor } from "./recipients-of-contributor";
import {
  countDisclosures,
  disclosedEpisodes,
  getDisclosure,
  reviewFacets,
  searchDisclosures,
  type DisclosureSummary,
} from "./search";

// The reviewer's screens over a log of their own: the search (newest first, by keyset pages), an
// entry in full, the form's choices, and who received a contributor's episodes.

let w: World;
let made: Made[];
let oracle: Record<string, unknown>[];

beforeAll(async () => {
  w = await buildWorld("search");
  const plan = downloadPlan(w);
  made = [];
  // Two groups, the second a second later on the log's clock.
  for (let g = 0; g < 2; g++) made.push(...(await makeSequentially(w, plan, { clockAhead: g })));
  oracle = exportOracle(w, made);
});

afterAll(async () => {
  await w?.iso.drop();
});

/** What the search shows of an export oracle's entry. */
const summaryOf = (o: Record<string, unknown>): DisclosureSummary => ({
  id: o.id as string,
  seq: o.seq as number,
  occurred_at: new Date(o.occurred_at as string),
  organization: o.organization as string,
  organization_name: o.organization_name as string,
  api_key: o.api_key as string | null,
  user: o.user as string | null,
  reviewer_role: null,
  channel: o.channel as "api" | "portal",
  dataset_id: o.dataset_id as string,
  version: o.version as string,
  episode_count: o.episode_count as number,
  file_count: o.file_count as number,
  total_bytes: o.total_bytes as number,
});

async function allPages(
  search: Parameters<typeof disclosureFilter>[0],
  limit: number,
): Promise<{ pages: DisclosureSummary[][] }> {
  const { filter, problems } = disclosureFilter(search);
  expect(problems).toEqual([]);
  const pages: DisclosureSummary[][] = [];
  let before: number | undefined;
  for (;;) {
    const page = await searchDisclosures(w.iso.operator, { filter, before, limit });
    pages.push(page.entries);
    if (page.nextBefore === null) return { pages };
    expect(page.nextBefore).toBe(page.entries.at(-1)!.seq);
    before = page.nextBefore;
  }
}

describe("searchDisclosures", () => {
  it("lists the whole log newest first, each entry as the log recorded it", async () => {
    const { pages } = await allPages({}, 50);
    expect(pages).toHaveLength(1);
    expect(pages[0]).toEqual([...oracle].reverse().map(summaryOf));
  });

  it("pages by keyset: every entry once, in order, whatever the page size", async () => {
    for (const limit of [1, 2, 5, 11, 12, 13]) {
      const { pages } = await allPages({}, limit);
      expect(
        pages.flat().map((e) => e.seq),
        `limit ${limit}`,
      ).toEqual([...oracle].reverse().map((o) => o.seq));
      expect(
        pages.slice(0, -1).every((p) => p.length === limit),
        `limit ${limit}`,
      ).toBe(true);
      expect(pages.length, `limit ${limit}`).toBe(Math.max(1, Math.ceil(oracle.length / limit)));
    }
  });

  it("applies the filter: an organisation by slug, a dataset, a key, a user, a time range", async () => {
    const second = oracle[6]!.occurred_at as string;
    const cases: [Parameters<typeof disclosureFilter>[0], (o: Record<string, unknown>) => boolean][] = [
      [{ org: w.org2.slug }, (o) => o.organization === w.org2.slug],
      [{ dataset: w.dsB, version: "1.0.0" }, (o) => o.dataset_id === w.dsB],
      [{ key: w.keys1[1].keyPrefix }, (o) => o.api_key === w.keys1[1].keyPrefix],
      [{ user: w.user1.email.toUpperCase() }, (o) => o.user === w.user1.email],
      [{ from: second }, (o) => (o.occurred_at as string) >= second],
      [{ to: second }, (o) => (o.occurred_at as string) <= second],
      [{ org: "no-such-organisation" }, () => false],
    ];
    for (const [search, keep] of cases) {
      const { pages } = await allPages(search, 4);
      const want = oracle.filter(keep).reverse();
      expect(
        pages.flat().map((e) => e.id),
        JSON.stringify(search),
      ).toEqual(want.map((o) => o.id));
      if (search.org !== "no-such-organisation") expect(want.length, JSON.stringify(search)).toBeGreaterThan(0);
    }
  });
});

/** Every page of an entry's episodes, `limit` at a time, checking that each page continues after the last. */
async function allEpisodesOf(id: string, limit: number): Promise<string[]> {
  const all: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await disclosedEpisodes(w.iso.operator, { id, after, limit });
    expect(page.episodeIds.length).toBeLessThanOrEqual(limit);
    all.push(...page.episodeIds);
    if (page.nextAfter === null) return all;
    expect(page.episodeIds).toHaveLength(limit);
    expect(page.nextAfter).toBe(page.episodeIds.at(-1));
    after = page.nextAfter;
  }
}

/** The contributors whose episodes an oracle entry holds, from the test's own catalog. */
const contributorsOf = (i: number) => {
  const m = made[i]!;
  const catalog = w.catalog.get(`${m.body.dataset_id}@${m.body.version}`)!;
  const held = new Set(oracle[i]!.episode_ids as string[]);
  return new Set(catalog.filter((e) => held.has(e.episode_id)).map((e) => e.contributor));
};

describe("searchDisclosures: every filter and combinations, each paged by keyset", () => {
  type Keep = (o: Record<string, unknown>, i: number) => boolean;
  const cases = (): [Parameters<typeof disclosureFilter>[0], Keep][] => {
    const a100 = w.catalog.get(`${w.dsA}@1.0.0`)!;
    const episode = a100[0]!.episode_id;
    const second = oracle[6]!.occurred_at as string;
    const holds = (id: string) => (o: Record<string, unknown>) => (o.episode_ids as string[]).includes(id);
    const of = (c: string) => (_: Record<string, unknown>, i: number) => contributorsOf(i).has(c);
    return [
      [{ channel: "api" }, (o) => o.channel === "api"],
      [{ channel: "portal" }, (o) => o.channel === "portal"],
      [{ channel: "preview" }, () => false],
      [{ version: "1.1.0" }, (o) => o.version === "1.1.0"],
      [{ episode: episode }, holds(episode)],
      [{ contributor: w.contributors.x }, of(w.contributors.x)],
      [{ contributor: w.contributors.z }, of(w.contributors.z)],
      [{ contributor: "nobody-at-all" }, () => false],
      [{ org: w.org1.slug, channel: "api" }, (o) => o.organization === w.org1.slug && o.channel === "api"],
      [
        { dataset: w.dsA, version: "1.1.0", key: w.keys1[1].keyPrefix },
        (o) => o.dataset_id === w.dsA && o.version === "1.1.0" && o.api_key === w.keys1[1].keyPrefix,
      ],
      [
        { user: w.user2.email, channel: "portal", from: second },
        (o) => o.user === w.user2.email && (o.occurred_at as string) >= second,
      ],
      [
        { contributor: w.contributors.y, channel: "api" },
        (o, i) => contributorsOf(i).has(w.contributors.y) && o.channel === "api",
      ],
      [
        { contributor: w.contributors.y, org: w.org2.slug, to: second },
        (o, i) =>
          contributorsOf(i).has(w.contributors.y) &&
          o.organization === w.org2.slug &&
          (o.occurred_at as string) <= second,
      ],
      [
        { contributor: w.contributors.y, org: w.org1.slug, channel: "portal" },
        (o, i) => contributorsOf(i).has(w.contributors.y) && o.organization === w.org1.slug && o.channel === "portal",
      ],
      [{ contributor: w.contributors.x, org: "no-such-org" }, () => false],
      [
        { contributor: w.contributors.x, from: second },
        (o, i) => contributorsOf(i).has(w.contributors.x) && (o.occurred_at as string) >= second,
      ],
      [{ episode: episode, org: w.org1.slug }, (o) => holds(episode)(o) && o.organization === w.org1.slug],
      [
        { episode: episode, org: w.org2.slug, channel: "portal" },
        (o) => holds(episode)(o) && o.organization === w.org2.slug && o.channel === "portal",
      ],
      [
        { episode: episode, contributor: w.contributors.x },
        (o, i) => holds(episode)(o) && contributorsOf(i).has(w.contributors.x),
      ],
      [
        { episode: episode, contributor: w.contributors.z },
        (o, i) => holds(episode)(o) && contributorsOf(i).has(w.contributors.z),
      ],
      [
        { episode: episode, from: second, channel: "api" },
        (o) => holds(episode)(o) && (o.occurred_at as string) >= second && o.channel === "api",
      ],
      [{ org: w.org2.slug, key: w.keys1[0].keyPrefix }, () => false],
    ];
  };

  it("selects exactly what the oracle selects, newest first, on pages of 1, 2 and 5 that meet without gap or repeat", async () => {
    for (const [search, keep] of cases()) {
      const want = oracle
        .filter(keep)
        .reverse()
        .map((o) => o.id);
      for (const limit of [1, 2, 5]) {
        const { pages } = await allPages(search, limit);
        expect(
          pages.flat().map((e) => e.id),
          `${JSON.stringify(search)} by ${limit}`,
        ).toEqual(want);
      }
    }
    // The cases are not vacuous: most select something and leave something out.
    const sizes = cases().map(([, keep]) => oracle.filter(keep).length);
    expect(sizes.filter((n) => n > 0 && n < oracle.length).length).toBeGreaterThanOrEqual(12);
  });

  it("counts what it selects", async () => {
    for (const [search, keep] of cases()) {
      const { filter } = disclosureFilter(search);
      expect(await countDisclosures(w.iso.operator, filter), JSON.stringify(search)).toEqual({
        count: oracle.filter(keep).length,
        more: false,
      });
    }
  });
});

describe("disclosure_contributors, filled at append", () => {
  it("holds, for every entry, each contributor of its episodes with how many, and the entry's seq", async () => {
    const summary = await w.iso.sql<
      { disclosure_id: string; seq: string; contributor: string; episode_count: number }[]
    >`
      select disclosure_id, seq, contributor, episode_count from disclosure_contributors order by seq, contributor`;
    const want = oracle.flatMap((o, i) => {
      const m = made[i]!;
      const catalog = w.catalog.get(`${m.body.dataset_id}@${m.body.version}`)!;
      const held = new Set(o.episode_ids as string[]);
      const counts = new Map<string, number>();
      for (const e of catalog)
        if (held.has(e.episode_id)) counts.set(e.contributor, (counts.get(e.contributor) ?? 0) + 1);
      return [...counts]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([contributor, n]) => ({ disclosure_id: o.id, seq: String(o.seq), contributor, episode_count: n }));
    });
    expect(summary.map((r) => ({ ...r }))).toEqual(want);
  });

  it("is covered by each of its walks' indexes (migrations 0011–0013): a page of a contributor, alone or with an organisation or a channel, reads no row of it", async () => {
    const indexes = await w.iso.sql<{ name: string; def: string }[]>`
      select indexname as name, indexdef as def from pg_indexes where tablename = 'disclosure_contributors' and indexname <> 'disclosure_contributors_pk' order by 1`;
    expect(indexes.map((i) => i.name)).toEqual([
      "disclosure_contributors_channel_idx",
      "disclosure_contributors_contributor_idx",
      "disclosure_contributors_organization_idx",
    ]);
    const columns = ["disclosure_id", "seq", "contributor", "episode_count", "organization_id", "channel"];
    for (const { name, def } of indexes) {
      const [, key, included] = /\(([^)]*)\) INCLUDE \(([^)]*)\)$/.exec(def) ?? [];
      expect(`${key}, ${included}`.split(", ").sort(), name).toEqual([...columns].sort());
    }
  });

  it("carries each entry's organisation and channel, as the entry holds them (migration 0011)", async () => {
    const [counted] = await w.iso.sql<{ rows: number; differing: number }[]>`
      select count(*)::int as rows,
             count(*) filter (where c.organization_id is distinct from d.organization_id or c.channel <> d.channel)::int as differing
      from disclosure_contributors c join disclosures d on d.id = c.disclosure_id`;
    expect(counted!.rows).toBeGreaterThan(oracle.length);
    expect(counted!.differing).toBe(0);
  });

  it("is what das_count_disclosure_contributors() counts from the episodes, as migration 0011 and a bulk load do", async () => {
    const rows = (sql: typeof w.iso.sql) =>
      sql<Record<string, unknown>[]>`select * from disclosure_contributors order by disclosure_id, contributor`.then(
        (r) => r.map((row) => ({ ...row })),
      );
    const appended = await rows(w.iso.sql);
    const recounted = await withTriggersDisabled(w.iso.db, async (tx) => {
      // Emptied (its append-only trigger is off too), then counted again from scratch.
      await tx`delete from disclosure_contributors`;
      const [result] = await tx<{ counted: string }[]>`select das_count_disclosure_contributors() as counted`;
      const [again] = await tx<{ counted: string }[]>`select das_count_disclosure_contributors() as counted`;
      return { counted: Number(result!.counted), again: Number(again!.counted), rows: await rows(tx) };
    });
    expect(recounted.counted).toBe(appended.length);
    // Entries already counted are left alone.
    expect(recounted.again).toBe(0);
    expect(recounted.rows).toEqual(appended);
  });
});

describe("disclosure_episode_entries, filled at append", () => {
  it("holds, for every episode an entry disclosed, the entry's seq, organisation and channel", async () => {
    const summary = await w.iso.sql<
      { episode_id: string; seq: string; organization: string | null; channel: string }[]
    >`
      select m.episode_id, m.seq, o.slug as organization, m.channel
      from disclosure_episode_entries m left join organizations o on o.id = m.organization_id
      order by m.seq, m.episode_id`;
    const want = oracle.flatMap((o) =>
      [...(o.episode_ids as string[])]
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        .map((episode_id) => ({
          episode_id,
          seq: String(o.seq),
          organization: o.organization ?? null,
          channel: o.channel,
        })),
    );
    expect(want.length).toBeGreaterThan(oracle.length);
    expect(summary.map((r) => ({ ...r }))).toEqual(want);
  });

  it("is keyed (episode, seq) with the organisation and channel in the key's index: an episode's page and its count read no row (migrations 0014, 0026)", async () => {
    const indexes = await w.iso.sql<
      { name: string; def: string }[]
    >`select indexname as name, indexdef as def from pg_indexes where tablename = 'disclosure_episode_entries'`;
    expect(indexes.map((i) => i.name)).toEqual(["disclosure_episode_entries_pk"]);
    // The month (occurred_at) ends the key since the log is partitioned by it (migration 0026).
    expect(indexes[0]!.def).toMatch(/\(episode_id, seq, occurred_at\) INCLUDE \(organization_id, channel\)$/);
  });

  it("is what das_index_disclosure_episodes() adds from the episodes, as migration 0014 and a bulk load do", async () => {
    const rows = (sql: typeof w.iso.sql) =>
      sql<Record<string, unknown>[]>`select * from disclosure_episode_entries order by episode_id, seq`.then((r) =>
        r.map((row) => ({ ...row })),
      );
    const appended = await rows(w.iso.sql);
    const refilled = await withTriggersDisabled(w.iso.db, async (tx) => {
      // The entries after the first two are taken out, as if appended by a bulk load after them.
      await tx`delete from disclosure_episode_entries where seq > 2`;
      const [added] = await tx<{ n: string }[]>`select das_index_disclosure_episodes() as n`;
      const [again] = await tx<{ n: string }[]>`select das_index_disclosure_episodes() as n`;
      return { added: Number(added!.n), again: Number(again!.n), rows: await rows(tx) };
    });
    expect(refilled.added).toBe(appended.filter((r) => Number(r.seq) > 2).length);
    expect(refilled.added).toBeGreaterThan(0);
    // Entries already held are left alone.
    expect(refilled.again).toBe(0);
    expect(refilled.rows).toEqual(appended);
  });
});

describe("countDisclosures: counted no further than the cap", () => {
  it("is exact up to the cap and says 'more' past it", async () => {
    const all = oracle.length;
    expect(await countDisclosures(w.iso.operator, {})).toEqual({ count: all, more: false });
    expect(await countDisclosures(w.iso.operator, {}, all)).toEqual({ count: all, more: false });
    expect(await countDisclosures(w.iso.operator, {}, all - 1)).toEqual({ count: all - 1, more: true });
    expect(await countDisclosures(w.iso.operator, {}, 3)).toEqual({ count: 3, more: true });
    const api = oracle.filter((o) => o.channel === "api").length;
    expect(await countDisclosures(w.iso.operator, { channel: "api" }, api - 1)).toEqual({ count: api - 1, more: true });
    expect(await countDisclosures(w.iso.operator, { contributor: w.contributors.y }, 1)).toEqual({
      count: 1,
      more: true,
    });
  });
});

describe("recipientsOfContributor: pages and a capped total", () => {
  it("pages by keyset without gap or repeat, newest first, with the licence and how many of the contributor's episodes", async () => {
    for (const contributor of Object.values(w.contributors)) {
      const want = oracle
        .map((o, i) => ({ o, i }))
        .filter(({ i }) => contributorsOf(i).has(contributor))
        .reverse();
      const whole = await allRecipientsOfContributor(w.iso.operator, contributor, 100);
      expect(whole.map((r) => r.download_id)).toEqual(want.map(({ o }) => o.id));
      expect(whole.map((r) => r.licence_id)).toEqual(want.map(({ o }) => o.licence_id));
      const catalogOfEntry = (i: number) => w.catalog.get(`${made[i]!.body.dataset_id}@${made[i]!.body.version}`)!;
      expect(whole.map((r) => r.episode_count)).toEqual(
        want.map(
          ({ o, i }) =>
            catalogOfEntry(i).filter(
              (e) => e.contributor === contributor && (o.episode_ids as string[]).includes(e.episode_id),
            ).length,
        ),
      );
      for (const limit of [1, 2, 3])
        expect(await allRecipientsOfContributor(w.iso.operator, contributor, limit), `by ${limit}`).toEqual(whole);
      const first = await recipientsOfContributor(w.iso.operator, { contributor, limit: 1 });
      expect(first.total).toEqual({ count: want.length, more: false });
      // The summary adds up every entry, not the page's one.
      const downloads = whole.filter((r) => r.channel !== "preview");
      expect(first.summary).toEqual({
        downloads: downloads.length,
        previews: whole.length - downloads.length,
        organizations: new Set(whole.flatMap((r) => (r.organization ? [r.organization] : []))).size,
        episodes_downloaded: downloads.reduce((sum, r) => sum + r.episode_count, 0),
      });
      expect(first.summary!.downloads).toBeGreaterThan(0);
      const capped = await recipientsOfContributor(w.iso.operator, {
        contributor,
        limit: 1,
        countCap: want.length - 1,
      });
      expect(capped.total).toEqual({ count: want.length - 1, more: true });
      // Past the cap the sums would cover only the newest entries: none is given rather than a wrong one.
      expect(capped.summary).toBeNull();
    }
  });

  it("pages a contributor nobody received as empty, with a total of none", async () => {
    expect(await recipientsOfContributor(w.iso.operator, { contributor: "nobody-at-all", limit: 5 })).toEqual({
      rows: [],
      nextBefore: null,
      total: { count: 0, more: false },
      summary: { downloads: 0, previews: 0, organizations: 0, episodes_downloaded: 0 },
    });
  });
});

describe("getDisclosure", () => {
  it("shows an entry in full: recipient, scope, episodes, hashes, and that it still hashes to its hash", async () => {
    for (const [i, m] of made.entries()) {
      const o = oracle[i]!;
      const entry = await getDisclosure(w.iso.operator, m.download.download_id);
      expect(entry).toMatchObject({
        ...summaryOf(o),
        licence_id: o.licence_id,
        request_id: o.request_id,
        expires_at: new Date(o.expires_at as string),
        requested_scope: o.requested_scope,
        hash: o.hash,
        prev_hash: i === 0 ? "0".repeat(64) : oracle[i - 1]!.hash,
        hash_matches: true,
      });
      expect(entry).not.toHaveProperty("episode_ids");
      expect(await allEpisodesOf(m.download.download_id, 2)).toEqual(o.episode_ids);
    }
  });

  it("says when an entry no longer hashes to its recorded hash", async () => {
    const id = made[3]!.download.download_id;
    const entry = await withTriggersDisabled(w.iso.db, async (tx, operator) => {
      await tx`update disclosures set total_bytes = total_bytes + 1 where id = ${id}`;
      return getDisclosure(operator, id);
    });
    expect(entry.hash_matches).toBe(false);
    expect(entry.total_bytes).toBe((oracle[3]!.total_bytes as number) + 1);
  });

  it.each([["dl_doesnotexist"], ["not-a-download-id"], ["dl_"], [`dl_${"a".repeat(41)}`]])(
    "answers not_found for %j",
    async (id) => {
      const error = await getDisclosure(w.iso.operator, id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ code: "not_found", status: 404 });
    },
  );
});

describe("reviewFacets", () => {
  it("offers the organisations by name and the datasets by id", async () => {
    const facets = await reviewFacets(w.iso.operator);
    expect(facets.organizations).toEqual(
      [w.org1, w.org2].map((o) => ({ slug: o.slug, name: o.name })).sort((a, b) => (a.name < b.name ? -1 : 1)),
    );
    expect(facets.datasets).toEqual([w.dsA, w.dsB].sort());
  });
});

describe("exportRecipientsOfContributor", () => {
  it("streams the same list the page shows, as JSON Lines and as CSV", async () => {
    for (const contributor of Object.values(w.contributors)) {
      const rows = await allRecipientsOfContributor(w.iso.operator, contributor);
      expect(rows.length).toBeGreaterThan(0);
      let jsonl = "";
      for await (const line of exportRecipientsOfContributor(w.iso.operator, contributor, "jsonl")) jsonl += line;
      expect(
        jsonl
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      ).toEqual(rows);
      let csv = "";
      for await (const line of exportRecipientsOfContributor(w.iso.operator, contributor, "csv")) csv += line;
      const [header, ...records] = parseCsv(csv);
      expect(header).toEqual([
        "contributor",
        "seq",
        "occurred_at",
        "organization",
        "organization_name",
        "api_key",
        "user",
        "reviewer_role",
        "channel",
        "dataset_id",
        "version",
        "licence_id",
        "episode_count",
        "download_id",
      ]);
      expect(records.map((r) => r[13])).toEqual(rows.map((r) => r.download_id));
      expect(records.map((r) => r[11])).toEqual(rows.map((r) => r.licence_id));
      expect(records.every((r) => r[0] === contributor)).toBe(true);
    }
  });

  it("writes only the header for a contributor nobody received", async () => {
    let csv = "";
    for await (const line of exportRecipientsOfContributor(w.iso.operator, "nobody-at-all", "csv")) csv += line;
    expect(parseCsv(csv)).toHaveLength(1);
    let jsonl = "";
    for await (const line of exportRecipientsOfContributor(w.iso.operator, "nobody-at-all", "jsonl")) jsonl += line;
    expect(jsonl).toBe("");
  });
});
