import type { Metadata } from "next";
import { ContributorRecipientsTable } from "@/components/review/disclosure-tables";
import { buttonClass } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { Stat } from "@/components/ui/stat";
import { recipientsOfContributor } from "@/lib/disclosures/recipients-of-contributor";
import { pageContext, pageData } from "@/lib/http/portal";

type Props = { params: Promise<{ contributor: string }> };

// Next hands generateMetadata the segment decoded, and the page still percent-encoded (the proxy
// has refused malformed encoding): decoding twice turned a contributor with `%` into a URIError.
export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Recipients of ${(await params).contributor}` };
}

export default async function ContributorPage({ params }: Props) {
  const contributor = decodeURIComponent((await params).contributor);
  const ctx = await pageContext("review", `/review/contributors/${encodeURIComponent(contributor)}`);
  const rows = await pageData(recipientsOfContributor(ctx, contributor));
  const previews = rows.filter((r) => r.channel === "preview");
  const downloads = rows.filter((r) => r.channel !== "preview");
  const organizations = new Set(rows.flatMap((r) => (r.organization ? [r.organization] : [])));
  const exportHref = (format: string) => `/review/contributors/${encodeURIComponent(contributor)}/export?format=${format}`;
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Disclosure log", href: "/review/disclosures" }, { label: `Contributor ${contributor}` }]}
        title={<>Who received <span className="font-mono">{contributor}</span>&apos;s episodes</>}
        description="Every download and preview that included at least one episode recorded by this contributor, with how many of their episodes it held."
        actions={
          <>
            <a className={buttonClass("secondary", "sm")} href={exportHref("csv")}>
              Export CSV
            </a>
            <a className={buttonClass("secondary", "sm")} href={exportHref("jsonl")}>
              Export JSONL
            </a>
          </>
        }
      />
      <dl className="mb-4 grid grid-cols-2 gap-3 sm:grid-cols-4">
        <Stat label="Downloads" value={formatNumber(downloads.length)} />
        <Stat label="Previews" value={formatNumber(previews.length)} hint="watched in the portal or through the API" />
        <Stat label="Organisations" value={formatNumber(organizations.size)} />
        <Stat label="Episodes downloaded" value={formatNumber(downloads.reduce((sum, r) => sum + r.episode_count, 0))} hint="counted once per download" />
      </dl>
      {rows.length === 0 ? (
        <EmptyState title="Nobody has received this contributor's episodes">No download or preview in the log includes an episode recorded by {contributor}.</EmptyState>
      ) : (
        <ContributorRecipientsTable rows={rows} />
      )}
    </>
  );
}
