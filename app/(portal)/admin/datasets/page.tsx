import type { Metadata } from "next";
import Link from "next/link";
import { AdminListSection } from "@/components/admin/admin-list-section";
import { ListingToggle } from "@/components/admin/listing-toggle";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/empty-state";
import { formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { listDatasetListings } from "@/lib/admin/listing";
import { pageContext } from "@/lib/http/portal";
import { setListingAction } from "./actions";

export const metadata: Metadata = { title: "Datasets" };

export default async function AdminDatasetsPage() {
  const ctx = await pageContext("admin", "/admin/datasets");
  const datasets = await listDatasetListings(ctx);
  return (
    <>
      <PageHeader
        title="Datasets"
        description="An unlisted dataset is seen only by organisations holding a licence to it. A listed one shows its title, description, versions, episode counts and charts to every signed-in member of an organisation, who may request a licence; never its episodes, files or previews. The API is unaffected: a key sees only what its licences give."
      />
      <AdminListSection
        id="datasets-heading"
        title="All datasets"
        count={datasets.length}
        empty={<EmptyState title="No datasets yet">Import one with das-admin import.</EmptyState>}
      >
        <SimpleTable
          columns={[
            { header: "Dataset" },
            { header: "Versions", className: "tabular-nums" },
            { header: "Listing" },
            { header: "Pending requests", className: "tabular-nums" },
            { header: "Change" },
          ]}
          rows={datasets.map((d) => ({
            key: d.dataset_id,
            cells: [
              <span key="d">
                <span className="font-medium text-slate-900">{d.title}</span>
                <span className="block font-mono text-xs text-slate-500">{d.dataset_id}</span>
              </span>,
              formatNumber(d.version_count),
              <Badge key="l" tone={d.listing === "listed" ? "green" : "neutral"}>
                {d.listing}
              </Badge>,
              d.pending_request_count ? (
                <Link key="p" href="/admin/requests" className="font-medium text-brand-700 hover:underline">
                  {formatNumber(d.pending_request_count)}
                </Link>
              ) : (
                "0"
              ),
              <ListingToggle key="t" datasetId={d.dataset_id} listing={d.listing} setListing={setListingAction} />,
            ],
          }))}
        />
      </AdminListSection>
    </>
  );
}
