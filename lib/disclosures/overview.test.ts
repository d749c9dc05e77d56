import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiKeyPrincipal, Principal, UserPrincipal } from "@/lib/auth/principal";
import type { Ctx } from "@/lib/context";
import type { DownloadBody } from "@/lib/api/requests";
import { createPreview } from "@/lib/previews/create-preview";
import { at, buildWorld, clockAt, makeDownload, userPrincipal, type World } from "@/lib/testing/disclosure-fixtures";
import { rmSync } from "node:fs";
import { grantLicence } from "@/lib/admin/licences";
import { importVersion } from "@/lib/catalog/import/import-version";
import { randomEpisodes, uniqueId, writeImportDir } from "@/lib/testing/fixtures";
import { disclosureOverview, isoWeek, overviewPeriod, weekStart, wholeMonths, type OverviewPeriod } from "./overview";
import { disclosureFilter, NO_ORGANIZATION } from "./filter";
import { countDisclosures, searchDisclosures } from "./search";

// The overview's figures against direct counts over the log, on a database of its own (the whole
// log is this suite's). Entries are made on fixed UTC days around a new year, whatever day the
// suite runs: the log's clock is moved to each day (`Ctx.clock`, lib/testing's `clockAt`).

let w: World;
let reviewer: UserPrincipal;
let reviewerCtx: Ctx;
/** Episodes with video, for previews. */
let watched: string[];

/** Noon UTC of a day, for entries made "on" it. */
const noon = (day: string) => new Date(`${day}T12:00:00Z`);

/** Downloads (and a reviewer's preview) on a day, one after another. */
async function onDay(
  day: string,
  downloads: [ApiKeyPrincipal | UserPrincipal, DownloadBody][],
  previews: { principal: Principal; episodeId: string }[] = [],
) {
  const clock = clockAt(noon(day));
  for (const [principal, body] of downloads) await makeDownload(w.iso.db, principal, body, clock);
  for (const { principal, episodeId } of previews)
    await createPreview({ db: w.iso.db, principal, requestId: uniqueId("req"), clock }, { episode_id: episodeId });
}

const episodesOf = (datasetId: string, version: string) =>
  w.catalog.get(at(datasetId, version))!.map((e) => e.episode_id);

// ---- the oracle: plain counts over `disclosures` ------------------------------------------------

type Count = { entries: number; episodes: number };
const inPeriod = (p: OverviewPeriod) =>
  w.iso.sql`(d.occurred_at at time zone 'UTC')::date between ${p.from}::date and ${p.to}::date`;

async function oracle(p: OverviewPeriod) {
  const sql = w.iso.sql;
  const [totals] = await sql<(Count & { organizations: number; reviewer_previews: number; recipients: number })[]>`
    select count(*)::int as entries, coalesce(sum(episode_count), 0)::int as episodes,
           count(distinct organization_id)::int as organizations,
           count(*) filter (where organization_id is null)::int as reviewer_previews,
           count(distinct (coalesce(organization_id, '-'), coalesce(api_key_id, '-'), coalesce(user_id, '-')))::int as recipients
    from disclosures d where ${inPeriod(p)}`;
  const days = await sql<(Count & { day: string })[]>`
    select to_char((d.occurred_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, count(*)::int as entries, sum(episode_count)::int as episodes
    from disclosures d where ${inPeriod(p)} group by 1 order by 1`;
  const organizations = await sql<(Count & { organization: string | null })[]>`
    select o.slug as organization, count(*)::int as entries, sum(d.episode_count)::int as episodes
    from disclosures d left join organizations o on o.id = d.organization_id where ${inPeriod(p)} group by o.slug`;
  const versions = await sql<(Count & { dataset_id: string; version: string })[]>`
    select d.dataset_id, d.version, count(*)::int as entries, sum(d.episode_count)::int as episodes
    from disclosures d where ${inPeriod(p)} group by 1, 2`;
  const recipients = await sql<(Count & { label: string; organization: string | null })[]>`
    select coalesce(k.prefix, u.email) as label, o.slug as organization, count(*)::int as entries, sum(d.episode_count)::int as episodes
    from disclosures d left join api_keys k on k.id = d.api_key_id left join users u on u.id = d.user_id left join organizations o on o.id = d.organization_id
    where ${inPeriod(p)} group by d.organization_id, d.api_key_id, d.user_id, k.prefix, u.email, o.slug`;
  const channels = await sql<(Count & { channel: string })[]>`
    select channel, count(*)::int as entries, sum(episode_count)::int as episodes from disclosures d where ${inPeriod(p)} group by 1`;
  return { totals: totals!, days, organizations, versions, recipients, channels };
}

const figures = <T extends Count>(rows: readonly T[], key: (r: T) => string) =>
  Object.fromEntries(rows.map((r) => [key(r), { entries: r.entries, episodes: r.episodes }])) as Record<string, Count>;

/** Every figure of the overview (all groups listed) equals the count over the log. */
async function expectMatchesLog(p: OverviewPeriod) {
  const overview = await disclosureOverview(reviewerCtx, p, { top: 1000 });
  const truth = await oracle(p);
  expect(overview.totals).toEqual(truth.totals);
  expect(overview.totals.entries).toBeGreaterThan(0);
  // Per day: every day of the period has its bar, zero where the log has nothing.
  const perDay = figures(truth.days, (d) => d.day);
  expect(overview.series).toHaveLength(Math.round((noon(p.to).getTime() - noon(p.from).getTime()) / 86_400_000) + 1);
  for (const bucket of overview.series)
    expect(bucket, bucket.start).toMatchObject({
      end: bucket.start,
      ...(perDay[bucket.start] ?? { entries: 0, episodes: 0 }),
    });
  expect(figures(overview.organizations.top, (o) => o.organization ?? "(preview)")).toEqual(
    figures(truth.organizations, (o) => o.organization ?? "(preview)"),
  );
  expect(figures(overview.versions.top, (v) => at(v.dataset_id, v.version))).toEqual(
    figures(truth.versions, (v) => at(v.dataset_id, v.version)),
  );
  expect(figures(overview.recipients.top, (r) => `${r.organization}/${r.label}`)).toEqual(
    figures(truth.recipients, (r) => `${r.organization}/${r.label}`),
  );
  expect(figures(overview.channels, (c) => c.channel)).toEqual(figures(truth.channels, (c) => c.channel));
  for (const ranked of [overview.organizations, overview.versions, overview.recipients]) {
    expect(ranked.count).toBe(ranked.top.length);
    expect(ranked.others).toEqual({ entries: 0, episodes: 0 });
    // Largest first.
    expect(ranked.top.map((r) => r.entries)).toEqual([...ranked.top.map((r) => r.entries)].sort((a, b) => b - a));
  }
  return overview;
}

const WHOLE: OverviewPeriod = { from: "2026-12-28", to: "2027-01-13", granularity: "day" };

beforeAll(async () => {
  w = await buildWorld("overview");
  // The log's months around the new year, whenever the suite runs: an entry needs its month's
  // partition (migration 0026 makes the current month and three ahead).
  await w.iso.sql`select das_create_disclosure_months('2026-12-01', '2027-01-01')`;
  reviewer = await userPrincipal(w.iso.operator, null, "reviewer");
  reviewerCtx = { db: w.iso.db, principal: reviewer, requestId: "overview" };
  // A dataset with video, for previews (a reviewer's has no organisation; a licensee's has theirs).
  const videos = randomEpisodes(3, 901).map((e) => ({ ...e, streams: ["cam"] }));
  const videoDataset = uniqueId("ds");
  const dir = writeImportDir(videoDataset, {
    version: "1.0.0",
    episodes: videos,
    files: videos.map((e) => ({
      path: `${e.episode_id}/cam.mp4`,
      episode_id: e.episode_id,
      stream: "cam",
      size_bytes: 1234,
      sha256: "a".repeat(64),
    })),
  });
  try {
    await importVersion(w.iso.sql, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await grantLicence(w.iso.operator, { organizationId: w.org1.id, datasetId: videoDataset, version: "1.0.0" });
  watched = videos.map((e) => e.episode_id);
  const a100 = episodesOf(w.dsA, "1.0.0");
  const a110 = episodesOf(w.dsA, "1.1.0");
  // Wednesday, Thursday and Friday across the new year, the Sunday that ends that ISO week
  // (2026-W53), the Monday that starts 2027-W01, and a day of 2027-W02.
  await onDay("2026-12-30", [
    [w.keys1[0], { dataset_id: w.dsA, version: "1.0.0", episode_ids: [a100[0]!, a100[1]!] }],
    [w.user1, { dataset_id: w.dsB, version: "1.0.0" }],
  ]);
  await onDay(
    "2026-12-31",
    [[w.key2, { dataset_id: w.dsA, version: "1.1.0" }]],
    [{ principal: reviewer, episodeId: watched[0]! }],
  );
  await onDay("2027-01-01", [
    [w.keys1[1], { dataset_id: w.dsA, version: "1.1.0", episode_ids: [a110[7]!] }],
    [w.keys1[0], { dataset_id: w.dsA, version: "1.0.0" }],
  ]);
  await onDay("2027-01-03", [[w.user2, { dataset_id: w.dsB, version: "1.0.0", streams: ["joints"] }]]);
  await onDay(
    "2027-01-04",
    [[w.keys1[0], { dataset_id: w.dsB, version: "1.0.0", episode_ids: [episodesOf(w.dsB, "1.0.0")[0]!] }]],
    [{ principal: w.user1, episodeId: watched[1]! }],
  );
  await onDay("2027-01-12", [[w.key2, { dataset_id: w.dsB, version: "1.0.0" }]]);
}, 180_000);

afterAll(async () => {
  await w?.iso.drop();
});

describe("disclosureOverview", () => {
  it("gives the log's own counts: totals, per day, per organisation, per version, per recipient and per channel", async () => {
    const overview = await expectMatchesLog(WHOLE);
    expect(overview.totals).toMatchObject({ entries: 10, organizations: 2, reviewer_previews: 1 });
    // The reviewer's preview is counted under its own recipient label, not dropped.
    expect(overview.organizations.top.find((o) => o.organization === null)).toMatchObject({
      entries: 1,
      organization_name: null,
    });
    expect(overview.recipients.top.find((r) => r.label === reviewer.email)).toMatchObject({
      kind: "user",
      organization: null,
      entries: 1,
      detail: "reviewer",
    });
    expect(overview.recipients.top.find((r) => r.label === w.keys1[0].keyPrefix)).toMatchObject({
      kind: "api_key",
      organization: w.org1.slug,
      entries: 3,
    });
    expect(overview.channels.map((c) => c.channel).sort()).toEqual(["api", "portal", "preview"]);
  });

  it("leads the reviewers' previews, which have no organisation, into the log: the search for no organisation finds exactly them", async () => {
    const withoutOrganization = await w.iso.sql<
      { id: string }[]
    >`select id from disclosures where organization_id is null order by seq desc`;
    expect(withoutOrganization.length).toBe(1);
    for (const search of [
      { org: NO_ORGANIZATION, from: WHOLE.from, to: WHOLE.to },
      { org: NO_ORGANIZATION, episode: watched[0]! },
      { org: NO_ORGANIZATION, channel: "preview" },
    ]) {
      const { filter, problems } = disclosureFilter(search);
      expect(problems).toEqual([]);
      const page = await searchDisclosures(reviewerCtx, { filter, limit: 50 });
      expect(
        page.entries.map((e) => e.id),
        JSON.stringify(search),
      ).toEqual(withoutOrganization.map((r) => r.id));
      expect(await countDisclosures(reviewerCtx, filter)).toEqual({ count: 1, more: false });
    }
    // The licensee's preview of the other watched episode has an organisation: not among them.
    const { filter } = disclosureFilter({ org: NO_ORGANIZATION, episode: watched[1]! });
    expect((await searchDisclosures(reviewerCtx, { filter, limit: 50 })).entries).toEqual([]);
  });

  it("counts only the period's days, and each part of it", async () => {
    for (const p of [
      { from: "2026-12-31", to: "2027-01-01", granularity: "day" },
      { from: "2027-01-02", to: "2027-01-04", granularity: "day" },
      { from: "2027-01-12", to: "2027-01-12", granularity: "day" },
      // Whole months (the recipients' monthly summary) with and without days on either side.
      { from: "2026-12-01", to: "2027-01-31", granularity: "day" },
      { from: "2026-11-15", to: "2027-01-31", granularity: "day" },
      { from: "2026-12-01", to: "2027-01-12", granularity: "day" },
      { from: "2026-12-29", to: "2027-01-31", granularity: "day" },
      { from: "2026-11-30", to: "2027-02-01", granularity: "day" },
    ] as const) {
      await expectMatchesLog(p);
    }
    const empty = await disclosureOverview(reviewerCtx, { from: "2026-12-01", to: "2026-12-27", granularity: "day" });
    expect(empty.totals).toEqual({ entries: 0, episodes: 0, organizations: 0, recipients: 0, reviewer_previews: 0 });
    expect(empty.series).toHaveLength(27);
    expect(empty.series.every((b) => b.entries === 0 && b.episodes === 0)).toBe(true);
    expect(empty.organizations).toEqual({ top: [], count: 0, others: { entries: 0, episodes: 0 } });
  });

  it("buckets by ISO week, Monday to Sunday in UTC, across the new year, cutting the first and last week to the period", async () => {
    const overview = await disclosureOverview(reviewerCtx, {
      from: "2026-12-30",
      to: "2027-01-12",
      granularity: "week",
    });
    const truth = await oracle({ from: "2026-12-30", to: "2027-01-12", granularity: "day" });
    const sumOf = (from: string, to: string) =>
      truth.days
        .filter((d) => d.day >= from && d.day <= to)
        .reduce((n, d) => ({ entries: n.entries + d.entries, episodes: n.episodes + d.episodes }), {
          entries: 0,
          episodes: 0,
        });
    expect(overview.series).toEqual([
      { start: "2026-12-30", end: "2027-01-03", label: "2026-W53", ...sumOf("2026-12-28", "2027-01-03") },
      { start: "2027-01-04", end: "2027-01-10", label: "2027-W01", ...sumOf("2027-01-04", "2027-01-10") },
      { start: "2027-01-11", end: "2027-01-12", label: "2027-W02", ...sumOf("2027-01-11", "2027-01-17") },
    ]);
    expect(overview.series.map((b) => b.entries)).toEqual([7, 2, 1]);
    expect(overview.totals.entries).toBe(10);
  });

  it("lists the largest first and sums the rest, with how many there are", async () => {
    const all = await disclosureOverview(reviewerCtx, WHOLE, { top: 1000 });
    const two = await disclosureOverview(reviewerCtx, WHOLE, { top: 2 });
    for (const key of ["organizations", "versions", "recipients"] as const) {
      expect(two[key].top).toEqual(all[key].top.slice(0, 2));
      expect(two[key].count).toBe(all[key].count);
      const rest = all[key].top.slice(2);
      expect(two[key].others).toEqual({
        entries: rest.reduce((n, r) => n + r.entries, 0),
        episodes: rest.reduce((n, r) => n + r.episodes, 0),
      });
    }
    expect(all.recipients.count).toBeGreaterThan(2);
  });

  it("keeps up with later appends, one download at a time and many rows in one statement", async () => {
    const before = await disclosureOverview(reviewerCtx, WHOLE);
    await onDay(
      "2027-01-13",
      [[w.user1, { dataset_id: w.dsA, version: "1.0.0" }]],
      [{ principal: reviewer, episodeId: watched[2]! }],
    );
    const after = await expectMatchesLog(WHOLE);
    expect(after.totals.entries).toBe(before.totals.entries + 2);
    expect(after.totals.reviewer_previews).toBe(before.totals.reviewer_previews + 1);
    // A bulk load appends many entries in one statement (as COPY does): the statement's trigger
    // adds them all at once, several to the same day and organisation.
    await w.iso.sql.begin(async (tx) => {
      await tx`create temp table copied on commit drop as select * from disclosures`;
      await tx`update copied set id = id || '_copy', seq = seq + 1000000, idempotency_scope = null, idempotency_key = null`;
      await tx`insert into disclosures select * from copied`;
    });
    const doubled = await expectMatchesLog(WHOLE);
    expect(doubled.totals.entries).toBe(2 * after.totals.entries);
    expect(doubled.totals.episodes).toBe(2 * after.totals.episodes);
  });

  it("is the same after das_rebuild_disclosure_summaries() recomputes the summaries from the log", async () => {
    const tables = [
      "disclosure_daily_channels",
      "disclosure_daily_organizations",
      "disclosure_daily_versions",
      "disclosure_daily_recipients",
      "disclosure_monthly_recipients",
    ];
    const contents = async () =>
      Object.fromEntries(
        await Promise.all(
          tables.map(async (t) => [
            t,
            await w.iso
              .sql`select * from ${w.iso.sql(t)} order by 1, 2, 3, 4${t.endsWith("_recipients") ? w.iso.sql`, 5, 6` : w.iso.sql``}`,
          ]),
        ),
      );
    const kept = await contents();
    await w.iso.sql`select das_rebuild_disclosure_summaries()`;
    expect(await contents()).toEqual(kept);
    await expectMatchesLog(WHOLE);
    // Emptied by hand, the summaries come back from the log alone.
    await w.iso.sql`truncate ${w.iso.sql(tables)}`;
    expect((await disclosureOverview(reviewerCtx, WHOLE)).totals.entries).toBe(0);
    await w.iso.sql`select das_rebuild_disclosure_summaries()`;
    expect(await contents()).toEqual(kept);
    await expectMatchesLog(WHOLE);
  });

  it("leaves no count behind for a download whose transaction rolled back", async () => {
    const before = await disclosureOverview(reviewerCtx, WHOLE);
    await expect(
      w.iso.sql.begin(async (tx) => {
        await tx`create temp table copied on commit drop as select * from disclosures order by seq desc limit 1`;
        await tx`update copied set id = id || '_gone', seq = seq + 5000000, idempotency_scope = null, idempotency_key = null`;
        await tx`insert into disclosures select * from copied`;
        throw new Error("the download failed");
      }),
    ).rejects.toThrow("the download failed");
    expect(await disclosureOverview(reviewerCtx, WHOLE)).toEqual(before);
  });

  it("refuses a period it cannot draw, whoever calls it directly", async () => {
    for (const period of [
      { from: "2027-01-02", to: "2027-01-01", granularity: "day" },
      { from: "2020-01-01", to: "2027-01-01", granularity: "day" },
      { from: "2027-02-30", to: "2027-03-01", granularity: "day" },
      { from: "2027-01-01T00:00:00Z", to: "2027-01-02", granularity: "day" },
      { from: "2027-01-01", to: "2027-01-02", granularity: "year" },
    ]) {
      await expect(
        disclosureOverview(reviewerCtx, period as OverviewPeriod),
        JSON.stringify(period),
      ).rejects.toMatchObject({ code: "invalid_parameter", status: 400 });
    }
  });
});

describe("weeks", () => {
  it("start on Monday and are numbered as ISO 8601 numbers them", () => {
    expect(weekStart("2027-01-01")).toBe("2026-12-28");
    expect(weekStart("2027-01-03")).toBe("2026-12-28");
    expect(weekStart("2027-01-04")).toBe("2027-01-04");
    expect(isoWeek("2027-01-01")).toBe("2026-W53");
    expect(isoWeek("2027-01-04")).toBe("2027-W01");
    expect(isoWeek("2025-12-29")).toBe("2026-W01");
    expect(isoWeek("2024-12-30")).toBe("2025-W01");
    expect(isoWeek("2021-01-03")).toBe("2020-W53");
    expect(isoWeek("2026-06-15")).toBe("2026-W25");
  });

  it("agree with PostgreSQL's date_trunc('week') and ISO week number for every day of two years", async () => {
    const rows = await w.iso.sql<{ day: string; monday: string; week: string }[]>`
      select to_char(d, 'YYYY-MM-DD') as day, to_char(date_trunc('week', d), 'YYYY-MM-DD') as monday, to_char(d, 'IYYY-"W"IW') as week
      from generate_series('2026-01-01'::date, '2027-12-31'::date, '1 day') d`;
    for (const r of rows) {
      expect(weekStart(r.day), r.day).toBe(r.monday);
      expect(isoWeek(r.day), r.day).toBe(r.week);
    }
  });
});

describe("wholeMonths", () => {
  it.each([
    ["2026-12-01", "2026-12-31", { first: "2026-12-01", last: "2026-12-01" }],
    ["2026-11-15", "2027-01-31", { first: "2026-12-01", last: "2027-01-01" }],
    ["2026-12-01", "2027-01-12", { first: "2026-12-01", last: "2026-12-01" }],
    ["2026-12-29", "2027-01-31", { first: "2027-01-01", last: "2027-01-01" }],
    ["2024-02-01", "2024-02-29", { first: "2024-02-01", last: "2024-02-01" }],
    ["2026-08-25", "2026-11-22", { first: "2026-09-01", last: "2026-10-01" }],
    ["2026-12-02", "2026-12-31", null],
    ["2026-12-01", "2026-12-30", null],
    ["2026-12-15", "2027-01-14", null],
  ])("of %s to %s: %j", (from, to, months) => {
    expect(wholeMonths(from, to)).toEqual(months);
  });
});

describe("overviewPeriod", () => {
  const now = new Date("2026-11-22T18:00:00Z");
  const parse = (search: Record<string, string>) => overviewPeriod(search, now);

  it("defaults to the last 90 days by day, today included", () => {
    expect(parse({})).toEqual({ period: { from: "2026-08-25", to: "2026-11-22", granularity: "day" }, problems: [] });
    expect(parse({ from: " ", to: "", granularity: "" }).problems).toEqual([]);
  });

  it("takes dates and a granularity, and fills the missing end", () => {
    expect(parse({ from: "2026-01-01", to: "2026-03-31", granularity: "week" })).toEqual({
      period: { from: "2026-01-01", to: "2026-03-31", granularity: "week" },
      problems: [],
    });
    expect(parse({ to: "2026-03-31" }).period).toEqual({ from: "2026-01-01", to: "2026-03-31", granularity: "day" });
    expect(parse({ from: "2026-11-01" }).period).toEqual({ from: "2026-11-01", to: "2026-11-22", granularity: "day" });
    expect(parse({ from: "2026-12-01" }).period).toEqual({ from: "2026-12-01", to: "2027-02-28", granularity: "day" });
  });

  it.each([
    [{ from: "yesterday" }, "From must be a date like 2026-11-22."],
    [{ to: "2026-02-30" }, "To must be a date like 2026-11-22."],
    [{ from: "2026-11-21T09:30:00Z" }, "From must be a date like 2026-11-22: the overview counts whole UTC days."],
    [{ from: "a\u0000b" }, "From must not contain control characters."],
    [{ granularity: "year" }, "Show by must be day or week."],
    [{ granularity: "__proto__" }, "Show by must be day or week."],
    [{ from: "2026-11-02", to: "2026-11-01" }, "From must not be after To."],
    [
      { from: "2024-01-01", to: "2026-01-01" },
      "A chart by day covers at most 366 days; show by week, or choose a shorter period.",
    ],
    [
      { from: "2000-01-01", to: "2026-01-01", granularity: "week" },
      "The overview covers at most 1830 days (five years); choose a shorter period.",
    ],
  ])("explains %j", (search, problem) => {
    const { period, problems } = parse(search);
    expect(problems).toEqual([problem]);
    // The form still has a period to show.
    expect(period).toEqual({ from: "2026-08-25", to: "2026-11-22", granularity: "day" });
  });

  it("accepts a year of days and five years of weeks", () => {
    expect(parse({ from: "2025-11-22", to: "2026-11-22" }).problems).toEqual([]);
    expect(parse({ from: "2021-11-23", to: "2026-11-22", granularity: "week" }).problems).toEqual([]);
  });
});
