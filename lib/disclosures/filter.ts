import { z } from "zod";
import type { PendingQuery, Row } from "postgres";
import type { Sql } from "../db/client";
import { DISCLOSURE_CHANNELS, type DisclosureChannel } from "../db/schema";
import { CONTROL_CHARACTERS } from "../characters";

/**
 * Which entries of the log a search, an export or `das-admin disclosures export` means: one type,
 * one parser and one WHERE clause for all three, so a range means the same everywhere.
 *
 * Time is a closed range. `from` and `to` each take a date (YYYY-MM-DD, a UTC day) or an ISO 8601
 * instant with its zone (2026-11-21T09:30:00Z, or +01:00). `from` includes its start: a date from
 * the day's first instant. `to` includes its end: a date up to the end of that whole day (before
 * the next day begins), an instant up to and including it.
 */
export type DisclosureFilter = {
  /** Entries at or after this instant. */
  from?: Date;
  /** Entries up to this end, inclusive. */
  to?: RangeEnd;
  /**
   * The organisation's slug; an unknown one matches nothing. `NO_ORGANIZATION` selects the entries
   * made without one: reviewers' and admins' previews.
   */
  organization?: string;
  datasetId?: string;
  version?: string;
  apiKeyPrefix?: string;
  userEmail?: string;
  episodeId?: string;
  contributor?: string;
  /** How the episodes left: an API download, a portal download, or a preview. */
  channel?: DisclosureChannel;
  /** Entries delivered under this licence (its id). */
  licenceId?: string;
  /** Entries delivered under a licence with this terms document (its SHA-256); entries that name no terms never match. */
  termsSha256?: string;
};

/** The organisation filter's value for entries without one (no slug can be it). */
export const NO_ORGANIZATION = "-";

/** Where a range ends: before the next day begins (a date), or at an instant, inclusive. */
export type RangeEnd = { beforeDay: Date } | { through: Date };

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const DAY_MS = 86_400_000;

/** A date or an instant as `from` and `to` take it, or null: `new Date` alone would take '1' as 2001 and '2026-02-30' as 2 March. */
export function parseTimeBound(text: string): { at: Date; wholeDay: boolean } | null {
  const day = DAY.exec(text);
  const match = day ?? INSTANT.exec(text);
  if (!match) return null;
  const [year, month, date] = match.slice(1, 4).map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, date));
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== date)
    return null;
  const at = day ? calendar : new Date(text);
  return Number.isNaN(at.getTime()) ? null : { at, wholeDay: Boolean(day) };
}

/**
 * The first instant (UTC) of month "YYYY-MM", as the log's months are named (its partitions,
 * `das-admin disclosures archive --month`), or null when it is not one.
 */
export function parseMonth(text: string): Date | null {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(text)) return null;
  return new Date(`${text}-01T00:00:00.000Z`);
}

/** `to` as the filter holds it: the end of the whole day for a date, the instant itself otherwise. */
export const rangeEnd = (bound: { at: Date; wholeDay: boolean }): RangeEnd =>
  bound.wholeDay ? { beforeDay: new Date(bound.at.getTime() + DAY_MS) } : { through: bound.at };

type Fragment = PendingQuery<Row[]>;

/** Whether a range is empty because it starts after it ends. */
export function startsAfterEnd(from: Date, to: RangeEnd): boolean {
  return "beforeDay" in to ? from.getTime() >= to.beforeDay.getTime() : from.getTime() > to.through.getTime();
}

const freeText = z.string().optional();

/** The reviewer's search as the URL carries it (and the export link repeats it): free text, checked by `disclosureFilter`. */
export const DisclosureSearch = z.object({
  org: freeText,
  key: freeText,
  user: freeText,
  dataset: freeText,
  version: freeText,
  from: freeText,
  to: freeText,
  episode: freeText,
  contributor: freeText,
  channel: freeText,
  licence: freeText,
  terms: freeText,
});
export type DisclosureSearch = z.infer<typeof DisclosureSearch>;
type SearchKey = keyof DisclosureSearch;

export const SEARCH_KEYS = Object.keys(DisclosureSearch.shape) as SearchKey[];

const LABELS: Record<SearchKey, string> = {
  org: "Organisation",
  key: "API key prefix",
  user: "User email",
  dataset: "Dataset",
  version: "Version",
  from: "From",
  to: "To",
  episode: "Episode id",
  contributor: "Contributor",
  channel: "Channel",
  licence: "Licence",
  terms: "Terms SHA-256",
};

const LICENCE_ID = /^lic_[0-9A-Za-z]{1,40}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The search as a filter on the log, or the problems that keep it from being one (each a sentence for the reviewer). */
export function disclosureFilter(search: DisclosureSearch): { filter: DisclosureFilter; problems: string[] } {
  const problems: string[] = [];
  const filter: DisclosureFilter = {};
  // Nothing stored contains a control character (PostgreSQL cannot even compare a NUL), so none reaches SQL.
  for (const key of SEARCH_KEYS) {
    if (search[key] && CONTROL_CHARACTERS.test(search[key]))
      problems.push(`${LABELS[key]} must not contain control characters.`);
  }
  if (problems.length) return { filter, problems };
  const text = (value: string | undefined) => (value && value.trim() ? value.trim() : undefined);
  const time = (key: "from" | "to") => {
    const value = text(search[key]);
    if (!value) return undefined;
    const bound = parseTimeBound(value);
    if (!bound) problems.push(`${LABELS[key]} must be a date like 2026-11-21 or an instant like 2026-11-21T09:30:00Z.`);
    return bound ?? undefined;
  };
  const from = time("from");
  const to = time("to");
  if (from) filter.from = from.at;
  if (to) filter.to = rangeEnd(to);
  if (filter.from && filter.to && startsAfterEnd(filter.from, filter.to)) problems.push("From must not be after To.");
  filter.organization = text(search.org);
  filter.datasetId = text(search.dataset);
  filter.version = text(search.version);
  filter.apiKeyPrefix = text(search.key);
  filter.userEmail = text(search.user);
  filter.episodeId = text(search.episode);
  filter.contributor = text(search.contributor);
  const channel = text(search.channel);
  if (channel && !(DISCLOSURE_CHANNELS as readonly string[]).includes(channel))
    problems.push(`${LABELS.channel} must be one of ${DISCLOSURE_CHANNELS.join(", ")}.`);
  else filter.channel = channel as DisclosureChannel | undefined;
  const licence = text(search.licence);
  if (licence && !LICENCE_ID.test(licence)) problems.push(`${LABELS.licence} must be a licence id like lic_AbC123.`);
  else filter.licenceId = licence;
  const terms = text(search.terms)?.toLowerCase();
  if (terms && !SHA256_HEX.test(terms))
    problems.push(`${LABELS.terms} must be the 64 hexadecimal digits of a terms document's SHA-256.`);
  else filter.termsSha256 = terms;
  return { filter, problems };
}

/**
 * The entries a filter matches, as `d`:
 * `select … from ${from} where ${where} order by ${seq} desc` (the log's order; `seq` is d.seq),
 * or `asc` with `order` "oldest" (an export): the order the reader will ask for, so that the
 * episode and contributor shapes below read their entries lazily in it.
 *
 * Every shape is "the log by seq, bounded": the columns a reviewer filters on each have an index
 * ending in seq (migrations 0009 and 0017), and a time range becomes a range of seq first (below), so a page
 * of any search reads about as many index entries as it shows. An episode or a contributor is
 * different: few entries hold one, scattered over the whole log, so walking the log until enough
 * of them turn up could read all of it. Those start from the episodes instead:
 * - a contributor from `disclosure_contributors` (filled at append), whose (contributor, seq)
 *   index is itself in the log's order, so a page stops after as many entries as it shows. Its
 *   entries are joined one by one in that order behind an `offset 0`: left to choose, the planner
 *   sometimes read all of a contributor's rows for an organisation and joined every entry before
 *   sorting, 1.9 s at 10M entries on a cold cache where the page needs 51;
 * - an episode from `disclosure_episode_entries` (filled at append), whose key (episode, seq) is
 *   likewise in the log's order: the entries holding an episode (tens of thousands for one of a
 *   version often downloaded whole) are one range of one index, and a page reads as many of them
 *   as it shows.
 * Each entry is read whole only for a row the walk yields, behind an `offset 0`, so that the
 * planner cannot turn the walk back into a walk along the log probing each entry, which its
 * estimate of a LIMIT would sometimes prefer.
 */
export function filteredEntries(sql: Sql, f: DisclosureFilter, order: "newest" | "oldest" = "newest") {
  const direction = order === "newest" ? sql`desc` : sql`asc`;
  /** An entry read whole, for each row of the walk before it, in the walk's order. */
  const entryOf = (key: Fragment) => sql`cross join lateral (select * from disclosures e where ${key} offset 0) d`;
  if (f.episodeId) {
    return {
      from: sql`${episodeWalk(sql, f.episodeId, direction)} ${entryOf(sql`e.seq = m.seq`)}`,
      // The organisation and channel are the walk's, compared before the entry is read.
      where: sql`${entryConditions(sql, { ...f, organization: undefined, channel: undefined }, sql`m.seq`)} and ${episodeWalkConditions(sql, f)}
        ${f.contributor ? sql`and ${holdsContributor(sql, f.contributor)}` : sql``}`,
      seq: sql`m.seq`,
    };
  }
  if (f.contributor) {
    return {
      from: sql`${contributorWalk(sql, f, f.contributor, direction)} ${entryOf(sql`e.id = c.disclosure_id`)}`,
      where: entryConditions(sql, f, sql`c.seq`),
      seq: sql`c.seq`,
    };
  }
  return { from: sql`disclosures d`, where: entryConditions(sql, f, sql`d.seq`), seq: sql`d.seq` };
}

/**
 * The entries a filter matches, for counting them: `filteredEntries`, except that a contributor or
 * an episode with at most an organisation and a channel (every condition answered by the
 * contributor summary or the episode's index) reads no entry at all. On a cold cache each entry
 * read is a read from disk; counting a contributor's entries for an organisation read them all
 * only to count them.
 */
export function countedEntries(sql: Sql, f: DisclosureFilter): { from: Fragment; where: Fragment } {
  const onlyIndexed =
    !f.from && !f.to && !f.datasetId && !f.version && !f.apiKeyPrefix && !f.userEmail && !f.licenceId && !f.termsSha256;
  if (onlyIndexed && f.episodeId && !f.contributor)
    return { from: episodeWalk(sql, f.episodeId, null), where: episodeWalkConditions(sql, f) };
  if (onlyIndexed && f.contributor && !f.episodeId)
    return { from: contributorWalk(sql, f, f.contributor, sql`desc`), where: sql`true` };
  return filteredEntries(sql, f);
}

/**
 * Every entry holding an episode, as `m` (seq, organization_id, channel), in the reader's order, or
 * in none for a count: one range of the summary's key, read from its index alone (migration 0014).
 * A seq range (and a page's keyset) bounds that key's seq, which is the entry's.
 */
const episodeWalk = (sql: Sql, episodeId: string, direction: Fragment | null) =>
  sql`(select m.seq, m.organization_id, m.channel from disclosure_episode_entries m where m.episode_id = ${episodeId}
      ${direction ? sql`order by m.seq ${direction}` : sql``}) m`;

/** The organisation and channel, compared on the episode walk's own columns before any entry is read. */
const episodeWalkConditions = (sql: Sql, f: DisclosureFilter) => sql`true
  ${f.organization ? sql`and ${organizationIs(sql, sql`m.organization_id`, f.organization)}` : sql``}
  ${f.channel ? sql`and m.channel = ${f.channel}` : sql``}`;

/**
 * A contributor's entries from the summary, as `c`, in the reader's order. The organisation and
 * channel are compared on the summary's copies (migration 0011), inside its indexes, before any
 * entry is read. A seq range (and a page's keyset) bounds the summary's own seq, which is the
 * entry's, and is pushed into the walk by the planner.
 */
const contributorWalk = (sql: Sql, f: DisclosureFilter, contributor: string, direction: Fragment) =>
  sql`(select c.* from disclosure_contributors c where c.contributor = ${contributor}
      ${f.organization ? sql`and ${organizationIs(sql, sql`c.organization_id`, f.organization)}` : sql``}
      ${f.channel ? sql`and c.channel = ${f.channel}` : sql``}
      order by c.seq ${direction}) c`;

const organizationIs = (sql: Sql, column: Fragment, slug: string) =>
  slug === NO_ORGANIZATION
    ? sql`${column} is null`
    : sql`${column} = (select id from organizations where slug = ${slug})`;

const holdsContributor = (sql: Sql, contributor: string) =>
  sql`exists (select 1 from disclosure_contributors c where c.disclosure_id = d.id and c.contributor = ${contributor})`;

/**
 * The conditions on an entry's own columns. With `seq` (d.seq, or a column equal to it), a time
 * range also bounds it; without, the range is on the time alone (for a relation of instants alone, as
 * the tests of the range's edges use).
 */
export function entryConditions(sql: Sql, f: DisclosureFilter, seq: Fragment | null) {
  const bounded = (bound: Fragment) => (seq ? sql`and ${bound}` : sql``);
  return sql`true
    ${f.from ? sql`${bounded(sql`${seq} >= (${firstSeqFrom(sql, f.from)})`)} and d.occurred_at >= ${f.from}` : sql``}
    ${f.to ? sql`${bounded(sql`${seq} <= (${lastSeqUpTo(sql, f.to)})`)} and ${"beforeDay" in f.to ? sql`d.occurred_at < ${f.to.beforeDay}` : sql`d.occurred_at <= ${f.to.through}`}` : sql``}
    ${f.organization ? sql`and ${organizationIs(sql, sql`d.organization_id`, f.organization)}` : sql``}
    ${f.datasetId ? sql`and d.dataset_id = ${f.datasetId}` : sql``}
    ${f.version ? sql`and d.version = ${f.version}` : sql``}
    ${f.apiKeyPrefix ? sql`and d.api_key_id = any(array(select id from api_keys where prefix = ${f.apiKeyPrefix}))` : sql``}
    ${f.userEmail ? sql`and d.user_id = (select id from users where email = ${f.userEmail.toLowerCase()})` : sql``}
    ${f.channel ? sql`and d.channel = ${f.channel}` : sql``}
    ${f.licenceId ? sql`and d.licence_id = ${f.licenceId}` : sql``}
    ${f.termsSha256 ? sql`and d.terms_sha256 = ${f.termsSha256}` : sql``}`;
}

/*
 * A time range as a range of seq. `occurred_at` never decreases along seq (lib/disclosures/append.ts
 * reads the clock under the chain's lock), so the entries from an instant on are those from the
 * first such entry's seq on: one probe of the (occurred_at, seq) index for each end, and the range
 * then bounds every index ending in seq. The time itself stays in the WHERE clause as well, so no
 * entry outside the range is ever included; the seq bound, which rests on that order, is what makes
 * it fast.
 */
const firstSeqFrom = (sql: Sql, from: Date) =>
  sql`select seq from disclosures where occurred_at >= ${from} order by occurred_at, seq limit 1`;

const lastSeqUpTo = (sql: Sql, to: RangeEnd) =>
  "beforeDay" in to
    ? sql`select seq from disclosures where occurred_at < ${to.beforeDay} order by occurred_at desc, seq desc limit 1`
    : sql`select seq from disclosures where occurred_at <= ${to.through} order by occurred_at desc, seq desc limit 1`;

/** The search's own query string, e.g. for export links and the next page. */
export function searchQuery(search: DisclosureSearch, extra: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const key of SEARCH_KEYS) if (search[key]?.trim()) q.set(key, search[key]!.trim());
  for (const [k, v] of Object.entries(extra)) if (v) q.set(k, v);
  return q.toString();
}
