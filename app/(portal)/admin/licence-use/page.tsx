import type { Metadata } from "next";
import Link from "next/link";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatBytes, formatDate, formatDateTime, formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { licenceUse, licencesEnding } from "@/lib/admin/licence-use";
import { ENDING_WARNING_DAYS, endingText, licenceEnding } from "@/lib/catalog/licence-ending";
import { pageContext } from "@/lib/http/portal";

export const metadata: Metadata = { title: "Licence use" };

export default async function LicenceUsePage() {
  const ctx = await pageContext("admin", "/admin/licence-use");
  const [licences, ending] = await Promise.all([licenceUse(ctx), licencesEnding(ctx)]);
  const now = new Date();
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Licences", href: "/admin/licences" }, { label: "Use" }]}
        title="Licence use"
        description="What each licence has delivered, from the disclosure log: downloads through the API and the portal, previews, episodes and bytes, and when it was last used."
      />
      <Card className="mb-6">
        <CardHeader
          title={`Ending within ${ENDING_WARNING_DAYS} days`}
          description="Licences in force whose end is near: extend them with das-admin licence end, or let them end."
        />
        <CardBody>
          {ending.length ? (
            <ul className="divide-y divide-slate-100 text-sm">
              {ending.map((l) => {
                const soon = licenceEnding(l.ends_at, now);
                return (
                  <li key={l.id} className="flex flex-wrap items-baseline justify-between gap-2 py-2">
                    <span>
                      {l.organization_name} ·{" "}
                      <span className="font-mono text-xs">
                        {l.dataset_id}@{l.version}
                      </span>
                    </span>
                    <Badge tone="amber">{soon ? endingText(soon) : `ends on ${formatDate(l.ends_at)}`}</Badge>
                  </li>
                );
              })}
            </ul>
          ) : (
            <p className="text-sm text-slate-500">No licence ends within {ENDING_WARNING_DAYS} days.</p>
          )}
        </CardBody>
      </Card>
      {licences.length === 0 ? (
        <EmptyState title="No licences yet">Grant one on the Licences page.</EmptyState>
      ) : (
        <>
          <Alert kind="info" className="mb-2">
            Figures count every entry of the log made under each licence, revoked ones included; a preview is counted
            apart from downloads.
          </Alert>
          <SimpleTable
            columns={[
              { header: "Organisation" },
              { header: "Dataset version", className: "font-mono text-xs" },
              { header: "Term", className: "tabular-nums whitespace-nowrap" },
              { header: "Terms" },
              { header: "Downloads", className: "tabular-nums text-right" },
              { header: "Previews", className: "tabular-nums text-right" },
              { header: "Episodes", className: "tabular-nums text-right" },
              { header: "Bytes", className: "tabular-nums text-right" },
              { header: "Last use", className: "tabular-nums whitespace-nowrap" },
            ]}
            rows={licences.map((l) => ({
              key: l.id,
              cells: [
                l.organization_name,
                <Link
                  key="log"
                  href={`/review/disclosures?licence=${encodeURIComponent(l.id)}`}
                  className="hover:underline"
                  title="This licence's entries in the disclosure log"
                >
                  {l.dataset_id}@{l.version}
                </Link>,
                <span key="term">
                  {formatDate(l.starts_at)} – {l.ends_at ? formatDate(l.ends_at) : "no end"}
                  {l.revoked_at ? (
                    <Badge tone="red" className="ml-2">
                      revoked
                    </Badge>
                  ) : null}
                </span>,
                l.terms_sha256 ? (
                  <span key="terms" title={`SHA-256 ${l.terms_sha256}`}>
                    {l.terms_title}
                  </span>
                ) : (
                  "None"
                ),
                formatNumber(l.downloads),
                formatNumber(l.previews),
                formatNumber(l.episodes),
                formatBytes(l.bytes),
                l.last_used_at ? formatDateTime(l.last_used_at) : "Never",
              ],
            }))}
          />
        </>
      )}
    </>
  );
}
