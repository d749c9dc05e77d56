import type { Metadata } from "next";
import { OverviewView, logHref } from "@/components/review/overview";
import { Alert } from "@/components/ui/alert";
import { buttonClass } from "@/components/ui/button";
import { FilterBar } from "@/components/ui/filter-bar";
import { PageHeader } from "@/components/ui/page-header";
import { disclosureOverview, overviewPeriod, OverviewSearch, DEFAULT_DAYS } from "@/lib/disclosures/overview";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";
import { ReplicaNotice } from "@/components/review/replica-notice";
import { reviewReadsAsOf } from "@/lib/disclosures/replica-reads";

export const metadata: Metadata = { title: "Overview" };

export default async function OverviewPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const ctx = await pageContext("review", "/review/overview");
  // Read first: whatever the page reads after it is at least as new.
  const asOf = await pageData(reviewReadsAsOf(ctx));
  const search = await pageSearch(searchParams, OverviewSearch);
  const { period, problems } = overviewPeriod(search);
  const overview = problems.length ? null : await pageData(disclosureOverview(ctx, period));
  // The form shows what was asked for, also when it could not be used; otherwise the period shown.
  const shown = problems.length
    ? { from: search.from ?? "", to: search.to ?? "", granularity: search.granularity ?? "day" }
    : period;
  return (
    <>
      <PageHeader
        title="Overview"
        description="Disclosures and disclosed episodes over a period, by organisation, dataset version and recipient. Every bar and row opens its entries in the disclosure log."
        actions={
          overview ? (
            <a className={buttonClass("secondary", "sm")} href={logHref({ from: period.from, to: period.to })}>
              Open this period in the log
            </a>
          ) : null
        }
      />
      <ReplicaNotice lag={asOf} />
      <div className="mb-6">
        <FilterBar
          label="Choose the period"
          framed
          submitLabel="Show"
          active={Boolean(search.from || search.to || search.granularity)}
          clearHref="/review/overview"
          fields={[
            { kind: "input", name: "from", label: "From (UTC)", type: "date", value: shown.from },
            { kind: "input", name: "to", label: "To (UTC, inclusive)", type: "date", value: shown.to },
            {
              kind: "select",
              name: "granularity",
              label: "Show by",
              value: ["day", "week"].includes(shown.granularity) ? shown.granularity : "day",
              options: [
                { value: "day", label: "Day" },
                { value: "week", label: "Week (ISO, from Monday)" },
              ],
            },
          ]}
        />
      </div>
      {overview ? (
        <OverviewView overview={overview} />
      ) : (
        <Alert kind="error" title="Check the period">
          {problems.join(" ")} Or{" "}
          <a href="/review/overview" className="font-medium underline">
            show the last {DEFAULT_DAYS} days
          </a>
          .
        </Alert>
      )}
    </>
  );
}
