import { z } from "zod";
import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { CONTROL_CHARACTERS } from "../catalog/identifiers";
import type { DisclosureFilter } from "./export";

const freeText = z.string().optional();

/** The reviewer search as it appears in the URL: free text, checked by `reviewFilter`. */
export const ReviewSearch = z.object({
  org: freeText,
  key: freeText,
  user: freeText,
  dataset: freeText,
  version: freeText,
  from: freeText,
  to: freeText,
  episode: freeText,
  contributor: freeText,
});
export type ReviewSearch = z.infer<typeof ReviewSearch>;
type ReviewSearchKey = keyof ReviewSearch;

export const REVIEW_SEARCH_KEYS = Object.keys(ReviewSearch.shape) as ReviewSearchKey[];

const LABELS: Record<ReviewSearchKey, string> = {
  org: "Organisation", key: "API key prefix", user: "User email", dataset: "Dataset", version: "Version",
  from: "From", to: "To", episode: "Episode id", contributor: "Contributor",
};

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The URL's search as a filter on the log. Dates are whole UTC days, `to` inclusive. An unknown
 * organisation matches nothing (rather than being ignored and matching everything).
 */
export async function reviewFilter(ctx: Ctx, search: ReviewSearch): Promise<{ filter: DisclosureFilter; problems: string[] }> {
  const problems: string[] = [];
  const filter: DisclosureFilter = {};
  // Nothing stored contains a control character (PostgreSQL cannot even compare a NUL), so none reaches SQL.
  for (const key of REVIEW_SEARCH_KEYS) {
    if (search[key] && CONTROL_CHARACTERS.test(search[key])) problems.push(`${LABELS[key]} must not contain control characters.`);
  }
  if (problems.length) return { filter, problems };
  const text = (value: string | undefined) => (value && value.trim() ? value.trim() : undefined);
  const day = (value: string | undefined, name: string, offsetDays = 0) => {
    const v = text(value);
    if (!v) return undefined;
    if (!DAY.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`))) {
      problems.push(`${name} must be a date like 2026-11-21.`);
      return undefined;
    }
    return new Date(Date.parse(`${v}T00:00:00Z`) + offsetDays * 86_400_000);
  };
  filter.from = day(search.from, "From");
  filter.to = day(search.to, "To", 1);
  if (filter.from && filter.to && filter.from >= filter.to) problems.push("From must not be after To.");
  filter.datasetId = text(search.dataset);
  filter.version = text(search.version);
  filter.apiKeyPrefix = text(search.key);
  filter.userEmail = text(search.user);
  filter.episodeId = text(search.episode);
  filter.contributor = text(search.contributor);
  const org = text(search.org);
  if (org) {
    const [found] = await sqlOf(ctx.db)<{ id: string }[]>`select id from organizations where slug = ${org}`;
    filter.organizationId = found?.id ?? "org_none";
  }
  return { filter, problems };
}

/** The search's own query string, e.g. for export links and the next page. */
export function searchQuery(search: ReviewSearch, extra: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const key of REVIEW_SEARCH_KEYS) if (search[key]?.trim()) q.set(key, search[key]!.trim());
  for (const [k, v] of Object.entries(extra)) if (v) q.set(k, v);
  return q.toString();
}
