import type { ReactNode } from "react";
import type { Metadata } from "next";
import Link from "next/link";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDate, formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { listDatasets } from "@/lib/catalog/list-datasets";
import { listLicences, type LicenceRecord } from "@/lib/catalog/list-licences";
import { listedDatasets } from "@/lib/catalog/listing";
import { listVersions } from "@/lib/catalog/list-versions";
import { endingText, licenceEnding } from "@/lib/catalog/licence-ending";
import { pageContext } from "@/lib/http/portal";

export const metadata: Metadata = { title: "Datasets" };

export default async function DatasetsPage() {
  const ctx = await pageContext("catalog", "/datasets");
  const [{ datasets }, listed, { licences }] = await Promise.all([
    listDatasets(ctx, { limit: 500 }),
    listedDatasets(ctx),
    listLicences(ctx, { limit: 500 }),
  ]);
  const versions = await Promise.all(datasets.map((d) => listVersions(ctx, { datasetId: d.dataset_id, limit: 500 })));
  const now = new Date();
  const ending = licences.flatMap((l) => {
    const soon = licenceEnding(l.ends_at, now);
    return soon ? [{ licence: l, soon }] : [];
  });
  const licensed = new Set(datasets.map((d) => d.dataset_id));
  // Listed datasets the organisation holds nothing of yet: their facts, and the way to ask for them.
  const requestable = listed.filter((d) => !licensed.has(d.dataset_id));
  return (
    <>
      <PageHeader
        title="Datasets"
        description="The datasets your organisation holds a licence for. Open one to see its versions, charts and episodes."
      />
      {ending.length ? (
        <Alert kind="warning" title="Licences ending soon" className="mb-4">
          <ul>
            {ending.map(({ licence, soon }) => (
              <li key={`${licence.dataset_id}@${licence.version}`}>
                Your licence to {licence.dataset_id}@{licence.version} {endingText(soon)}. Ask your administrator to
                extend it if you still need it.
              </li>
            ))}
          </ul>
        </Alert>
      ) : null}
      {datasets.length === 0 ? (
        <EmptyState title="No licensed datasets yet">
          Your organisation does not hold a licence for any dataset version. An administrator can grant one.
        </EmptyState>
      ) : (
        <ul className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {datasets.map((dataset, i) => {
            const all = versions[i]!.versions;
            const latest = all.find((v) => v.version === dataset.latest_licensed_version)!;
            return (
              <li key={dataset.dataset_id}>
                <DatasetCard
                  dataset={dataset}
                  Heading="h2"
                  badge={<Badge tone="brand">v{dataset.latest_licensed_version}</Badge>}
                  facts={[
                    ["Episodes", formatNumber(latest.episode_count)],
                    ["Licensed", `${dataset.licensed_versions.length} of ${all.length}`],
                    ["Updated", formatDate(dataset.updated_at)],
                  ]}
                />
              </li>
            );
          })}
        </ul>
      )}
      {licences.length ? <LicencesSection licences={licences} now={now} /> : null}
      {requestable.length ? (
        <section aria-labelledby="listed-heading" className="mt-10">
          <h2 id="listed-heading" className="text-base font-semibold text-slate-900">
            More datasets you can request
          </h2>
          <p className="mt-1 mb-4 text-sm text-slate-600">
            Listed datasets your organisation holds no licence for. See their versions and charts, and request a licence
            under their terms.
          </p>
          <ul className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
            {requestable.map((dataset) => (
              <li key={dataset.dataset_id}>
                <DatasetCard
                  dataset={dataset}
                  Heading="h3"
                  badge={<Badge tone="neutral">not licensed</Badge>}
                  facts={[
                    ["Episodes", formatNumber(dataset.versions[0]!.episode_count)],
                    ["Versions", String(dataset.versions.length)],
                    ["Updated", formatDate(dataset.updated_at)],
                  ]}
                />
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}

/** A dataset's card: its title and badge, id, description and three facts, linking to its page. */
function DatasetCard({
  dataset,
  Heading,
  badge,
  facts,
}: {
  dataset: { dataset_id: string; title: string; description: string };
  Heading: "h2" | "h3";
  badge: ReactNode;
  facts: [label: string, value: string][];
}) {
  return (
    <Link
      href={`/datasets/${dataset.dataset_id}`}
      className="flex h-full flex-col rounded-lg bg-white p-5 shadow-sm ring-1 ring-slate-200 transition hover:shadow-md hover:ring-brand-300"
    >
      <div className="flex items-start justify-between gap-3">
        <Heading className="font-semibold text-slate-900">{dataset.title}</Heading>
        {badge}
      </div>
      <p className="mt-1 font-mono text-xs text-slate-500">{dataset.dataset_id}</p>
      <p className="mt-3 line-clamp-3 flex-1 text-sm text-slate-600">{dataset.description}</p>
      <dl className="mt-4 grid grid-cols-3 gap-2 border-t border-slate-100 pt-3 text-center">
        {facts.map(([label, value]) => (
          <div key={label}>
            <dt className="text-xs text-slate-500">{label}</dt>
            <dd className="text-sm font-semibold tabular-nums">{value}</dd>
          </div>
        ))}
      </dl>
    </Link>
  );
}

/** Each licence the organisation may use now: from when, until when, and under which terms. */
function LicencesSection({ licences, now }: { licences: LicenceRecord[]; now: Date }) {
  return (
    <section aria-labelledby="licences-heading" className="mt-8">
      <h2 id="licences-heading" className="mb-2 text-base font-semibold text-slate-900">
        Your licences
      </h2>
      <SimpleTable
        columns={[
          { header: "Dataset version", className: "font-mono text-xs" },
          { header: "From", className: "tabular-nums" },
          { header: "Until", className: "tabular-nums" },
          { header: "Terms" },
        ]}
        rows={licences.map((l) => {
          const soon = licenceEnding(l.ends_at, now);
          return {
            key: `${l.dataset_id}@${l.version}`,
            cells: [
              <Link key="v" href={`/datasets/${l.dataset_id}?version=${l.version}`} className="hover:underline">
                {l.dataset_id}@{l.version}
              </Link>,
              formatDate(l.starts_at),
              l.ends_at ? (
                <span key="u">
                  {formatDate(l.ends_at)}
                  {soon ? (
                    <Badge tone="amber" className="ml-2">
                      {endingText(soon)}
                    </Badge>
                  ) : null}
                </span>
              ) : (
                "No end"
              ),
              l.terms ? (
                <span key="t" title={`SHA-256 ${l.terms.sha256}`}>
                  {l.terms.title}
                </span>
              ) : (
                "None"
              ),
            ],
          };
        })}
      />
    </section>
  );
}
