import type { Metadata } from "next";
import Link from "next/link";
import { z } from "zod";
import { EpisodeExplorer } from "@/components/episodes/episode-explorer";
import { Alert } from "@/components/ui/alert";
import { LinkButton } from "@/components/ui/button";
import { formatNumber } from "@/components/ui/format";
import { FilterBar, type FilterField } from "@/components/ui/filter-bar";
import { PageHeader } from "@/components/ui/page-header";
import { EpisodeFilterQuery, MAX_LIMIT } from "@/lib/api/requests";
import { getDataset } from "@/lib/catalog/list-datasets";
import { episodeFilterOf, isFiltered, type EpisodeFilter } from "@/lib/catalog/episode-filter";
import { episodeFilterChoices, listEpisodes, type EpisodePage, type FilterChoice } from "@/lib/catalog/list-episodes";
import { versionStatistics, type Count } from "@/lib/catalog/version-statistics";
import { AppError } from "@/lib/errors";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";
import { requestDownload } from "./actions";
import { filterProblemOf } from "./filter-problem";

type Props = { params: Promise<{ id: string; version: string }>; searchParams: Promise<SearchParams> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { id, version } = await params;
  return { title: `${id} ${version} episodes` };
}

const PAGE_SIZES = [25, 50, 100, 250];

// The filter form sends an empty value for "any" (and for a duration left blank); otherwise the
// API's own rules for each filter. A page size the form does not offer falls back to 50.
const anyOr = <T extends z.ZodType>(schema: T) =>
  z
    .literal("")
    .transform(() => undefined)
    .or(schema)
    .optional();
const Search = z.object({
  outcome: anyOr(EpisodeFilterQuery.outcome),
  environment: anyOr(EpisodeFilterQuery.environment),
  task: anyOr(EpisodeFilterQuery.task),
  contributor: anyOr(EpisodeFilterQuery.contributor),
  has_recovery: anyOr(EpisodeFilterQuery.has_recovery),
  min_duration_s: anyOr(EpisodeFilterQuery.min_duration_s),
  max_duration_s: anyOr(EpisodeFilterQuery.max_duration_s),
  cursor: z
    .literal("")
    .transform(() => undefined)
    .or(z.string())
    .optional(),
  limit: z.coerce
    .number()
    .refine((n) => PAGE_SIZES.includes(n))
    .optional()
    .catch(undefined),
});

/** A filter chosen from the version's own values, each with how many episodes have it. */
const countedChoice = (
  filter: EpisodeFilter,
  name: "outcome" | "environment" | "task" | "contributor",
  label: string,
  counts: (Count | FilterChoice)[],
): FilterField => ({
  kind: "select",
  name,
  label,
  any: `Any ${label.toLowerCase()}`,
  value: filter[name] ?? "",
  options: counts.map((c) => ({ value: c.value, label: `${c.value} (${formatNumber(c.count)})` })),
});

/** A bound of the duration range, typed in seconds; its placeholder the version's own bound. */
const seconds = (
  filter: EpisodeFilter,
  name: "min_duration_s" | "max_duration_s",
  label: string,
  placeholder: number,
): FilterField => ({
  kind: "input",
  type: "number",
  name,
  label,
  value: filter[name] === undefined ? "" : String(filter[name]),
  placeholder: String(placeholder),
  min: 0,
  step: "any",
  narrow: true,
});

export default async function EpisodeExplorerPage({ params, searchParams }: Props) {
  const { id, version } = await params;
  const ctx = await pageContext("catalog", `/datasets/${id}/${version}`);
  const search = await pageSearch(searchParams, Search);
  const [dataset, stats, choices] = await pageData(
    Promise.all([
      getDataset(ctx, id),
      versionStatistics(ctx, { datasetId: id, version }),
      episodeFilterChoices(ctx, { datasetId: id, version }),
    ]),
  );
  const filter = episodeFilterOf(search);
  const limit = search.limit ?? 50;
  let page: EpisodePage | undefined;
  let cursorProblem: string | undefined;
  let filterProblem: string | undefined;
  try {
    page = await listEpisodes(ctx, {
      datasetId: id,
      version,
      ...filter,
      limit: Math.min(limit, MAX_LIMIT),
      cursor: search.cursor,
    });
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_cursor") cursorProblem = error.message;
    else {
      const problem = filterProblemOf(error, filter);
      if (problem === null) throw error;
      filterProblem = problem;
    }
  }
  const query = (extra: Record<string, string | undefined>) => {
    const q = new URLSearchParams();
    const current = Object.fromEntries(Object.entries(filter).map(([k, v]) => [k, String(v)]));
    for (const [k, v] of Object.entries({ ...current, limit: limit === 50 ? undefined : String(limit), ...extra }))
      if (v) q.set(k, v);
    const text = q.toString();
    return `/datasets/${id}/${version}${text ? `?${text}` : ""}`;
  };
  return (
    <>
      <PageHeader
        crumbs={[
          { label: "Datasets", href: "/datasets" },
          { label: dataset.title, href: `/datasets/${id}` },
          { label: version },
        ]}
        title={`Episodes of ${dataset.title} ${version}`}
        description="Filter, select and request a download. Filters live in the address bar, so a link to this page shows the same episodes."
      />
      <FilterBar
        label="Filter episodes"
        framed
        active={isFiltered(filter)}
        fields={[
          countedChoice(filter, "outcome", "Outcome", stats.outcomes),
          countedChoice(filter, "environment", "Environment", stats.environments),
          countedChoice(filter, "task", "Task", choices.tasks),
          countedChoice(filter, "contributor", "Contributor", choices.contributors),
          {
            kind: "select",
            name: "has_recovery",
            label: "Recovery",
            any: "With or without",
            value: filter.has_recovery === undefined ? "" : String(filter.has_recovery),
            options: [
              { value: "true", label: `With a recovery (${formatNumber(choices.recoveries.with)})` },
              { value: "false", label: `Without (${formatNumber(choices.recoveries.without)})` },
            ],
          },
          seconds(filter, "min_duration_s", "Min. seconds", Math.floor(choices.duration.min)),
          seconds(filter, "max_duration_s", "Max. seconds", Math.ceil(choices.duration.max)),
          {
            kind: "select",
            name: "limit",
            label: "Per page",
            value: String(limit),
            narrow: true,
            options: PAGE_SIZES.map((size) => ({ value: String(size), label: String(size) })),
          },
        ]}
      />
      {filterProblem ? (
        <Alert kind="warning" title="These filters cannot match any episode" className="mt-4">
          {filterProblem}.{" "}
          <Link className="font-medium underline" href={`/datasets/${id}/${version}`}>
            Clear the filters
          </Link>
          .
        </Alert>
      ) : cursorProblem || !page ? (
        <Alert kind="warning" title="This page link is out of date" className="mt-4">
          {cursorProblem}{" "}
          <Link className="font-medium underline" href={query({})}>
            Start from the first page
          </Link>
          .
        </Alert>
      ) : (
        <>
          <p className="mt-4 text-sm text-slate-600" aria-live="polite">
            <span className="font-semibold text-slate-900">{formatNumber(page.total)}</span> of{" "}
            {formatNumber(stats.episode_count)} episodes match
            {search.cursor ? " · showing a later page" : ""}.
          </p>
          <EpisodeExplorer
            key={`${JSON.stringify(filter)}|${search.cursor ?? ""}`}
            datasetId={id}
            version={version}
            episodes={page.episodes}
            total={page.total}
            filter={filter}
            streams={stats.streams}
            requestDownload={requestDownload}
          />
          <nav aria-label="Pages" className="mt-4 flex items-center justify-between gap-3">
            {search.cursor ? (
              <LinkButton variant="secondary" size="sm" href={query({})}>
                ← First page
              </LinkButton>
            ) : (
              <span />
            )}
            {page.next_cursor ? (
              <LinkButton variant="secondary" size="sm" href={query({ cursor: page.next_cursor })}>
                Next page →
              </LinkButton>
            ) : null}
          </nav>
        </>
      )}
    </>
  );
}
