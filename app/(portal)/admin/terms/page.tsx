import type { Metadata } from "next";
import Link from "next/link";
import { AdminListSection } from "@/components/admin/admin-list-section";
import { TermsForm } from "@/components/admin/terms-form";
import { Badge } from "@/components/ui/badge";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatBytes, formatDate } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { listDatasetListings } from "@/lib/admin/listing";
import { listTerms } from "@/lib/admin/terms";
import { pageContext } from "@/lib/http/portal";
import { addTermsAction } from "./actions";

export const metadata: Metadata = { title: "Terms" };

export default async function TermsPage() {
  const ctx = await pageContext("admin", "/admin/terms");
  const [terms, datasets] = await Promise.all([listTerms(ctx), listDatasetListings(ctx)]);
  return (
    <>
      <PageHeader
        title="Terms"
        description="Data-use agreements that licences are granted under and that requesters accept. A document never changes: a new wording is a new document, identified by the SHA-256 of its text."
      />
      <div className="space-y-6">
        <Card>
          <CardHeader
            title="Add terms"
            description="For one dataset, or global: a request is made under the dataset's newest own terms, or else the newest global ones."
          />
          <CardBody>
            <TermsForm
              datasets={datasets.map((d) => ({ id: d.dataset_id, title: d.title }))}
              addTerms={addTermsAction}
            />
          </CardBody>
        </Card>
        <AdminListSection
          id="terms-heading"
          title="All terms"
          count={terms.length}
          empty={<EmptyState title="No terms yet">Add the first document above.</EmptyState>}
        >
          <SimpleTable
            columns={[
              { header: "Title" },
              { header: "Applies to" },
              { header: "SHA-256", className: "font-mono text-xs" },
              { header: "Size", className: "tabular-nums" },
              { header: "Added" },
              { header: "By" },
            ]}
            rows={terms.map((t) => ({
              key: t.sha256,
              cells: [
                <Link key="t" href={`/admin/terms/${t.sha256}`} className="font-medium text-brand-700 hover:underline">
                  {t.title}
                </Link>,
                t.dataset_id ? (
                  <span key="d" className="font-mono text-xs">
                    {t.dataset_id}
                  </span>
                ) : (
                  <Badge key="d">every dataset</Badge>
                ),
                <span key="s" title={t.sha256}>
                  {t.sha256.slice(0, 16)}…
                </span>,
                formatBytes(t.bytes),
                formatDate(t.created_at),
                t.created_by,
              ],
            }))}
          />
        </AdminListSection>
      </div>
    </>
  );
}
