import Link from "next/link";
import type {
  Bucket,
  DisclosureOverview,
  OrganizationFigures,
  RecipientFigures,
  VersionFigures,
} from "@/lib/disclosures/overview";
import { NO_ORGANIZATION } from "@/lib/disclosures/filter";
import { BarChart, type ChartBar } from "../charts/bar-chart";
import { RankedTable, type RankedRow } from "../charts/ranked-table";
import { Badge } from "../ui/badge";
import { Card, CardBody, CardHeader } from "../ui/card";
import { formatNumber } from "../ui/format";
import { Stat } from "../ui/stat";

/** A search of the log, as the log's page reads it: the overview's drill-down. */
export function logHref(search: Record<string, string | null | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(search)) if (value) query.set(name, value);
  return `/review/disclosures?${query.toString()}`;
}

const shortDate = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
const tick = (day: string) => shortDate.format(new Date(`${day}T00:00:00Z`));
const plural = (n: number, one: string, many: string) => `${formatNumber(n)} ${n === 1 ? one : many}`;

const CHANNEL_NAMES = { api: "API", portal: "portal", preview: "preview", hub: "Hub" } as const;

/** Reviewers' and admins' previews have no organisation: they are counted under this name. */
export const REVIEWER_PREVIEWS = "Reviewer previews";

function bars(series: Bucket[], granularity: "day" | "week", measure: "entries" | "episodes"): ChartBar[] {
  return series.map((b) => {
    const when = granularity === "week" ? `${b.label} (${b.start} to ${b.end})` : b.start;
    const value = b[measure];
    return {
      label: when,
      tick: tick(b.start),
      value,
      href: logHref({ from: b.start, to: b.end }),
      description: `${when}: ${measure === "entries" ? plural(value, "disclosure", "disclosures") : plural(value, "episode disclosed", "episodes disclosed")}`,
    };
  });
}

const link = (href: string, text: string) => (
  <Link href={href} className="text-brand-700 hover:underline">
    {text}
  </Link>
);

/** The overview of a period: its totals, the time series, and who received what. */
export function OverviewView({ overview }: { overview: DisclosureOverview }) {
  const { period, totals } = overview;
  const within = { from: period.from, to: period.to };
  const unit = period.granularity === "week" ? "week" : "day";
  const organizationRows: RankedRow[] = overview.organizations.top.map((o: OrganizationFigures) => ({
    key: o.organization ?? "(previews)",
    title: o.organization_name ?? REVIEWER_PREVIEWS,
    name: link(
      logHref({ org: o.organization ?? NO_ORGANIZATION, ...within }),
      o.organization_name ?? o.organization ?? REVIEWER_PREVIEWS,
    ),
    detail: o.organization ?? "each reviewer under Top recipients",
    entries: o.entries,
    episodes: o.episodes,
  }));
  const versionRows: RankedRow[] = overview.versions.top.map((v: VersionFigures) => ({
    key: `${v.dataset_id}@${v.version}`,
    title: `${v.dataset_id}@${v.version}`,
    name: link(logHref({ dataset: v.dataset_id, version: v.version, ...within }), `${v.dataset_id}@${v.version}`),
    entries: v.entries,
    episodes: v.episodes,
  }));
  const recipientRows: RankedRow[] = overview.recipients.top.map((r: RecipientFigures) => ({
    key: `${r.organization}/${r.kind}/${r.label}`,
    title: r.label,
    name: link(
      logHref({ [r.kind === "api_key" ? "key" : "user"]: r.label, org: r.organization, ...within }),
      r.kind === "api_key" ? `${r.label}…` : r.label,
    ),
    detail: (
      <>
        <Badge tone={r.kind === "api_key" ? "blue" : "brand"}>{r.kind === "api_key" ? "API key" : "user"}</Badge>{" "}
        {r.organization_name ?? REVIEWER_PREVIEWS}
        {r.detail ? ` · ${r.detail}` : ""}
      </>
    ),
    entries: r.entries,
    episodes: r.episodes,
  }));
  return (
    <div className="space-y-6">
      <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-5">
        <Stat
          label="Disclosures"
          value={formatNumber(totals.entries)}
          hint={
            overview.channels.length
              ? overview.channels.map((c) => `${formatNumber(c.entries)} ${CHANNEL_NAMES[c.channel]}`).join(" · ")
              : "entries in the log"
          }
        />
        <Stat label="Episodes disclosed" value={formatNumber(totals.episodes)} hint="summed over entries" />
        <Stat label="Organisations" value={formatNumber(totals.organizations)} />
        <Stat label="Recipients" value={formatNumber(totals.recipients)} hint="API keys and users" />
        <Stat label="Reviewer previews" value={formatNumber(totals.reviewer_previews)} hint="without a licence" />
      </dl>
      <Card>
        <CardHeader
          title="Over time"
          description={`Per ${unit}${period.granularity === "week" ? " (ISO weeks, Monday to Sunday)" : ""}, UTC. Select a bar to open its entries in the log.`}
        />
        <CardBody className="grid gap-8 lg:grid-cols-2">
          <BarChart
            id="chart-entries"
            title={`Disclosures per ${unit}`}
            unit="Disclosures"
            bars={bars(overview.series, period.granularity, "entries")}
          />
          <BarChart
            id="chart-episodes"
            title={`Episodes disclosed per ${unit}`}
            unit="Episodes"
            bars={bars(overview.series, period.granularity, "episodes")}
          />
        </CardBody>
      </Card>
      <div className="grid gap-6 lg:grid-cols-2">
        <Card className="min-w-0">
          <CardHeader title="By organisation" description="Top recipients by organisation, most disclosures first." />
          <RankedTable
            caption="Disclosures by organisation"
            heading="Organisation"
            rows={organizationRows}
            others={{ ...overview.organizations.others, count: overview.organizations.count }}
            othersLabel={(n) => `${plural(n, "more organisation", "more organisations")}`}
          />
        </Card>
        <Card className="min-w-0">
          <CardHeader title="By dataset version" description="Most disclosures first." />
          <RankedTable
            caption="Disclosures by dataset version"
            heading="Version"
            rows={versionRows}
            others={{ ...overview.versions.others, count: overview.versions.count }}
            othersLabel={(n) => `${plural(n, "more version", "more versions")}`}
          />
        </Card>
      </div>
      <Card>
        <div id="recipients">
          <CardHeader
            title="Top recipients"
            description="The API keys and users that received the most disclosures in the period."
          />
        </div>
        <RankedTable
          caption="Top recipients: API keys and users"
          heading="Recipient"
          rows={recipientRows}
          others={{ ...overview.recipients.others, count: overview.recipients.count }}
          othersLabel={(n) => `${plural(n, "more recipient", "more recipients")}`}
        />
      </Card>
    </div>
  );
}
