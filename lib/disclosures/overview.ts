import type { PendingQuery, Row } from "postgres";
import { z } from "zod";
import { readsOf, type Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import type { DisclosureChannel } from "../db/schema";
import { AppError } from "../errors";
import { requireReviewer } from "../auth/authorize";
import { CONTROL_CHARACTERS } from "../characters";
import { parseTimeBound } from "./filter";

/**
 * The reviewer's overview of the log: entries and disclosed episodes (the sum of each entry's
 * `episode_count`) over a period of whole UTC days, by day or ISO week, by organisation, by dataset
 * version and by recipient. Read from the daily summaries that a trigger keeps beside the log
 * (migration 0010), never from the log itself: a period costs the same at ten million entries as
 * at ten.
 */

export const GRANULARITIES = ["day", "week"] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** A period of whole UTC days, both ends included, as YYYY-MM-DD. */
export type OverviewPeriod = { from: string; to: string; granularity: Granularity };

/** The period the overview shows when none is asked for: the last 90 days, today included. */
export const DEFAULT_DAYS = 90;
/** The longest period each granularity draws: a bar per day for a year, a bar per week for five. */
export const MAX_DAYS: Record<Granularity, number> = { day: 366, week: 5 * 366 };
/** How many organisations, versions and recipients each breakdown lists; the rest are summed. */
export const TOP = 10;

const DAY_MS = 86_400_000;
const isoDay = (d: Date) => d.toISOString().slice(0, 10);
const dayOf = (text: string) => new Date(`${text}T00:00:00Z`);
const addDays = (text: string, days: number) => isoDay(new Date(dayOf(text).getTime() + days * DAY_MS));
const daysBetween = (from: string, to: string) => Math.round((dayOf(to).getTime() - dayOf(from).getTime()) / DAY_MS);

/** The Monday that starts the ISO week of a day (weeks are UTC, Monday to Sunday). */
export function weekStart(day: string): string {
  const weekday = (dayOf(day).getUTCDay() + 6) % 7;
  return addDays(day, -weekday);
}

/** ISO 8601 week of a day, e.g. 2026-W53 for 2027-01-01: the year of its week's Thursday. */
export function isoWeek(day: string): string {
  const thursday = addDays(weekStart(day), 3);
  const year = Number(thursday.slice(0, 4));
  const week = Math.floor(daysBetween(`${year}-01-01`, thursday) / 7) + 1;
  return `${year}-W${String(week).padStart(2, "0")}`;
}

type Fragment = PendingQuery<Row[]>;

const freeText = z.string().optional();

/** The overview's query as the URL carries it: free text, checked by `overviewPeriod`. */
export const OverviewSearch = z.object({ from: freeText, to: freeText, granularity: freeText });
export type OverviewSearch = z.infer<typeof OverviewSearch>;

/**
 * The period a search asks for, or the problems that keep it from being one (each a sentence for the
 * reviewer); with problems, the default period, so that a page still has something to show in its form.
 * `from` and `to` are dates as the log's search takes them; the summaries count whole days, so an
 * instant is refused rather than silently widened to its day.
 */
export function overviewPeriod(
  search: OverviewSearch,
  now: Date = new Date(),
): { period: OverviewPeriod; problems: string[] } {
  const today = isoDay(now);
  const fallback: OverviewPeriod = { from: addDays(today, -(DEFAULT_DAYS - 1)), to: today, granularity: "day" };
  const problems: string[] = [];
  const text = (value: string | undefined) => (value && value.trim() ? value.trim() : undefined);
  const date = (label: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    if (CONTROL_CHARACTERS.test(value)) {
      problems.push(`${label} must not contain control characters.`);
      return undefined;
    }
    const bound = parseTimeBound(value);
    if (!bound) problems.push(`${label} must be a date like ${today}.`);
    else if (!bound.wholeDay)
      problems.push(`${label} must be a date like ${today}: the overview counts whole UTC days.`);
    return bound?.wholeDay ? isoDay(bound.at) : undefined;
  };
  const from = date("From", text(search.from));
  const to = date("To", text(search.to));
  const granularityText = text(search.granularity) ?? "day";
  const granularity = (GRANULARITIES as readonly string[]).includes(granularityText)
    ? (granularityText as Granularity)
    : undefined;
  if (!granularity) problems.push("Show by must be day or week.");
  if (problems.length) return { period: fallback, problems };
  // One end alone: the other is DEFAULT_DAYS away, or today.
  const end = to ?? (from && from > today ? addDays(from, DEFAULT_DAYS - 1) : today);
  const period: OverviewPeriod = {
    from: from ?? addDays(end, -(DEFAULT_DAYS - 1)),
    to: end,
    granularity: granularity!,
  };
  const problem = periodProblem(period);
  return problem ? { period: fallback, problems: [problem] } : { period, problems };
}

function periodProblem(period: OverviewPeriod): string | null {
  if (period.from > period.to) return "From must not be after To.";
  const days = daysBetween(period.from, period.to) + 1;
  if (days > MAX_DAYS[period.granularity]) {
    return period.granularity === "day"
      ? `A chart by day covers at most ${MAX_DAYS.day} days; show by week, or choose a shorter period.`
      : `The overview covers at most ${MAX_DAYS.week} days (five years); choose a shorter period.`;
  }
  return null;
}

export type Figures = { entries: number; episodes: number };

/** One bar of the time series: a day, or an ISO week cut to the period; buckets without entries are there, with zeros. */
export type Bucket = Figures & { start: string; end: string; label: string };

export type OrganizationFigures = Figures & {
  /** The organisation's slug and name; null for reviewers' and admins' previews, made without one. */
  organization: string | null;
  organization_name: string | null;
};

export type VersionFigures = Figures & { dataset_id: string; version: string };

export type RecipientFigures = Figures & {
  kind: "api_key" | "user";
  /** The key's display prefix, or the user's email. */
  label: string;
  /** The key's name, or the user's role today. */
  detail: string | null;
  organization: string | null;
  organization_name: string | null;
};

/** The first `TOP` of a breakdown, how many there are in all, and what the rest add up to. */
export type Ranked<T> = { top: T[]; count: number; others: Figures };

export type DisclosureOverview = {
  period: OverviewPeriod;
  totals: Figures & { organizations: number; recipients: number; reviewer_previews: number };
  channels: (Figures & { channel: DisclosureChannel })[];
  series: Bucket[];
  organizations: Ranked<OrganizationFigures>;
  versions: Ranked<VersionFigures>;
  recipients: Ranked<RecipientFigures>;
};

export async function disclosureOverview(
  ctx: Ctx,
  period: OverviewPeriod,
  options: { top?: number } = {},
): Promise<DisclosureOverview> {
  requireReviewer(ctx);
  if (
    !(GRANULARITIES as readonly string[]).includes(period.granularity) ||
    ![period.from, period.to].every((d) => parseTimeBound(d)?.wholeDay)
  ) {
    throw new AppError("invalid_parameter", "The overview's period is two dates (YYYY-MM-DD) and day or week.");
  }
  const problem = periodProblem(period);
  if (problem) throw new AppError("invalid_parameter", problem);
  const top = options.top ?? TOP;
  const sql = sqlOf(readsOf(ctx));
  const inPeriod = sql`day between ${period.from}::date and ${period.to}::date`;
  const [[counted], channels, buckets, organizations, versions, recipients] = await Promise.all([
    sql<{ organizations: number; reviewer_previews: number }[]>`
      select count(distinct organization_id)::float8 as organizations,
             coalesce(sum(entries) filter (where organization_id is null), 0)::float8 as reviewer_previews
      from disclosure_daily_organizations where ${inPeriod}`,
    sql<(Figures & { channel: DisclosureChannel })[]>`
      select channel, sum(entries)::float8 as entries, sum(episodes)::float8 as episodes
      from disclosure_daily_channels where ${inPeriod} group by channel order by channel`,
    sql<(Figures & { start: string })[]>`
      select to_char(${period.granularity === "week" ? sql`date_trunc('week', day)::date` : sql`day`}, 'YYYY-MM-DD') as start,
             sum(entries)::float8 as entries, sum(episodes)::float8 as episodes
      from disclosure_daily_channels where ${inPeriod} group by 1`,
    ranked<OrganizationFigures>(
      sql,
      top,
      sql`select organization_id, sum(entries) as entries, sum(episodes) as episodes from disclosure_daily_organizations where ${inPeriod} group by organization_id`,
      sql`o.slug as organization, o.name as organization_name`,
      sql`left join organizations o on o.id = s.organization_id`,
      sql`o.name nulls last`,
    ),
    ranked<VersionFigures>(
      sql,
      top,
      sql`select version_id, sum(entries) as entries, sum(episodes) as episodes from disclosure_daily_versions where ${inPeriod} group by version_id`,
      sql`v.dataset_id, v.version`,
      sql`join dataset_versions v on v.id = s.version_id`,
      sql`v.dataset_id, v.major desc, v.minor desc, v.patch desc`,
    ),
    ranked<RecipientFigures>(
      sql,
      top,
      sql`select organization_id, api_key_id, user_id, sum(entries) as entries, sum(episodes) as episodes
          from (${recipientRows(sql, period)}) r group by organization_id, api_key_id, user_id`,
      sql`case when s.api_key_id is not null then 'api_key' else 'user' end as kind, coalesce(k.prefix, u.email) as label,
          coalesce(k.name, u.role) as detail, o.slug as organization, o.name as organization_name`,
      sql`left join api_keys k on k.id = s.api_key_id left join users u on u.id = s.user_id left join organizations o on o.id = s.organization_id`,
      sql`label`,
    ),
  ]);
  const sum = (rows: readonly Figures[]): Figures => ({
    entries: rows.reduce((n, r) => n + r.entries, 0),
    episodes: rows.reduce((n, r) => n + r.episodes, 0),
  });
  return {
    period,
    totals: {
      ...sum(channels),
      organizations: counted!.organizations,
      recipients: recipients.count,
      reviewer_previews: counted!.reviewer_previews,
    },
    channels: [...channels],
    series: series(period, new Map(buckets.map((b) => [b.start, b]))),
    organizations,
    versions,
    recipients,
  };
}

/**
 * A breakdown's groups, largest first (by entries, then episodes, then `order`): the first `top`
 * with their labels, how many groups there are, and the rest summed.
 */
async function ranked<T extends Figures>(
  sql: Sql,
  top: number,
  groups: Fragment,
  labels: Fragment,
  joins: Fragment,
  order: Fragment,
): Promise<Ranked<T>> {
  const rows = await sql<(T & { groups: number; all_entries: number; all_episodes: number })[]>`
    with g as (${groups}),
    t as (select sum(entries) as entries, sum(episodes) as episodes, count(*) as groups from g)
    select ${labels}, s.entries::float8 as entries, s.episodes::float8 as episodes,
           t.groups::float8 as groups, t.entries::float8 as all_entries, t.episodes::float8 as all_episodes
    from g s cross join t ${joins}
    order by s.entries desc, s.episodes desc, ${order}
    limit ${top}`;
  const shown = rows.map(({ groups: _g, all_entries: _e, all_episodes: _p, ...row }) => row as unknown as T);
  const whole = rows[0]
    ? { count: rows[0].groups, entries: rows[0].all_entries, episodes: rows[0].all_episodes }
    : { count: 0, entries: 0, episodes: 0 };
  return {
    top: shown,
    count: whole.count,
    others: {
      entries: whole.entries - shown.reduce((n, r) => n + r.entries, 0),
      episodes: whole.episodes - shown.reduce((n, r) => n + r.episodes, 0),
    },
  };
}

/**
 * The recipients' summary rows of a period: its whole calendar months from the monthly table, the
 * days of the partial months at either end from the daily one. A year reads twelve rows per
 * recipient and at most two months of days, not 365 rows per recipient.
 */
function recipientRows(sql: Sql, period: OverviewPeriod): Fragment {
  const daily = (from: string, to: string) =>
    sql`select organization_id, api_key_id, user_id, entries, episodes from disclosure_daily_recipients where day between ${from}::date and ${to}::date`;
  const months = wholeMonths(period.from, period.to);
  if (!months) return daily(period.from, period.to);
  // An empty range (from after to) selects nothing, which is what a period starting on the 1st needs.
  return sql`
    select organization_id, api_key_id, user_id, entries, episodes from disclosure_monthly_recipients
      where month between ${months.first}::date and ${months.last}::date
    union all ${daily(period.from, addDays(months.first, -1))}
    union all ${daily(monthAfter(months.last), period.to)}`;
}

const monthAfter = (month: string) => {
  const [year, m] = month.split("-").map(Number) as [number, number];
  return isoDay(new Date(Date.UTC(year, m, 1)));
};

/** The first days of the first and last calendar months wholly inside from..to, or null when none is. */
export function wholeMonths(from: string, to: string): { first: string; last: string } | null {
  const first = from.endsWith("-01") ? from : monthAfter(`${from.slice(0, 7)}-01`);
  const toMonth = `${to.slice(0, 7)}-01`;
  const last = addDays(to, 1).endsWith("-01") ? toMonth : previousMonth(toMonth);
  return first <= last ? { first, last } : null;
}

const previousMonth = (month: string) => {
  const [year, m] = month.split("-").map(Number) as [number, number];
  return isoDay(new Date(Date.UTC(year, m - 2, 1)));
};

/** Every bucket of the period, in order, with the summaries' figures or zeros. */
function series(period: OverviewPeriod, figures: Map<string, Figures & { start: string }>): Bucket[] {
  const buckets: Bucket[] = [];
  const step = period.granularity === "week" ? 7 : 1;
  for (
    let start = period.granularity === "week" ? weekStart(period.from) : period.from;
    start <= period.to;
    start = addDays(start, step)
  ) {
    const found = figures.get(start);
    const end = addDays(start, step - 1);
    buckets.push({
      // A week that begins before the period or ends after it is cut to the period, as its figures are.
      start: start < period.from ? period.from : start,
      end: end > period.to ? period.to : end,
      label: period.granularity === "week" ? isoWeek(start) : start,
      entries: found?.entries ?? 0,
      episodes: found?.episodes ?? 0,
    });
  }
  return buckets;
}
