import type { Metadata } from "next";
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDate, formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { listDatasets } from "@/lib/catalog/list-datasets";
import { listedDatasets } from "@/lib/catalog/listing";
import { listVersions } from "@/lib/catalog/list-versions";
import { pageContext } from "@/lib/http/portal";

export const metadata: Metadata = { title: "Datasets" };

export default async function DatasetsPage() {
  const ctx = await pageContext("catalog", "/datasets");
  const [{ datasets }, listed] = await Promise.all([listDatasets(ctx, { limit: 500 }), listedDatasets(ctx)]);
  const versions = await Promise.all(datasets.map((d) => listVersions(ctx, { datasetId: d.dataset_id, limit: 500 })));
  const licensed = new Set(datasets.map((d) => d.dataset_id));
  // Listed datasets the organisation holds nothing of yet: their facts, and the way to ask for them.
  const requestable = listed.filter((d) => !licensed.has(d.dataset_id));
  return (
    <>
      <PageHeader
        title="Datasets"
        description="The datasets your organisation holds a licence for. Open one to see its versions, charts and episodes."
      />
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
                <Link
                  href={`/datasets/${dataset.dataset_id}`}
                  className="flex h-full flex-col rounded-lg bg-white p-5 shadow-sm ring-1 ring-slate-200 transition hover:shadow-md hover:ring-brand-300"
                >
                  <div className="flex items-start justify-between gap-3">
                    <h2 className="font-semibold text-slate-900">{dataset.title}</h2>
                    <Badge tone="brand">v{dataset.latest_licensed_version}</Badge>
                  </div>
                  <p className="mt-1 font-mono text-xs text-slate-500">{dataset.dataset_id}</p>
                  <p className="mt-3 line-clamp-3 flex-1 text-sm text-slate-600">{dataset.description}</p>
                  <dl className="mt-4 grid grid-cols-3 gap-2 border-t border-slate-100 pt-3 text-center">
                    <div>
                      <dt className="text-xs text-slate-500">Episodes</dt>
                      <dd className="text-sm font-semibold tabular-nums">{formatNumber(latest.episode_count)}</dd>
                    </div>
                    <div>
                      <dt className="text-xs text-slate-500">Licensed</dt>
                      <dd className="text-sm font-semibold tabular-nums">
                        {dataset.licensed_versions.length} of {all.length}
                      </dd>
                    </div>
                    <div>
                      <dt className="text-xs text-slate-500">Updated</dt>
                      <dd className="text-sm font-semibold tabular-nums">{formatDate(dataset.updated_at)}</dd>
                    </div>
                  </dl>
                </Link>
              </li>
            );
          })}
        </ul>
      )}
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
                <Link
                  href={`/datasets/${dataset.dataset_id}`}
                  className="flex h-full flex-col rounded-lg bg-white p-5 shadow-sm ring-1 ring-slate-200 transition hover:shadow-md hover:ring-brand-300"
                >
                  <div className="flex items-start justify-between gap-3">
                    <h3 className="font-semibold text-slate-900">{dataset.title}</h3>
                    <Badge tone="neutral">not licensed</Badge>
                  </div>
                  <p className="mt-1 font-mono text-xs text-slate-500">{dataset.dataset_id}</p>
                  <p className="mt-3 line-clamp-3 flex-1 text-sm text-slate-600">{dataset.description}</p>
                  <dl className="mt-4 grid grid-cols-3 gap-2 border-t border-slate-100 pt-3 text-center">
                    <div>
                      <dt className="text-xs text-slate-500">Episodes</dt>
                      <dd className="text-sm font-semibold tabular-nums">
                        {formatNumber(dataset.versions[0]!.episode_count)}
                      </dd>
                    </div>
                    <div>
                      <dt className="text-xs text-slate-500">Versions</dt>
                      <dd className="text-sm font-semibold tabular-nums">{dataset.versions.length}</dd>
                    </div>
                    <div>
                      <dt className="text-xs text-slate-500">Updated</dt>
                      <dd className="text-sm font-semibold tabular-nums">{formatDate(dataset.updated_at)}</dd>
                    </div>
                  </dl>
                </Link>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}
