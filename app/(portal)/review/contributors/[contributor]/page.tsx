import type { Metadata } from "next";
import { ContributorRecipientsTable } from "@/components/review/disclosure-tables";
import { buttonClass, LinkButton } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { Stat } from "@/components/ui/stat";
import { z } from "zod";
import { cappedCountText } from "@/components/review/recipient";
import { recipientsOfContributor } from "@/lib/disclosures/recipients-of-contributor";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";
import { ReplicaNotice } from "@/components/review/replica-notice";
import { reviewReadsAsOf } from "@/lib/disclosures/replica-reads";

type Props = { params: Promise<{ contributor: string }>; searchParams: Promise<SearchParams> };

const PAGE = 50;
const Search = z.object({
  before: z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number)
    .optional()
    .catch(undefined),
});

// Next hands generateMetadata the segment decoded, and the page still percent-encoded (the proxy
// has refused malformed encoding): decoding twice turned a contributor with `%` into a URIError.
export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Recipients of ${(await params).contributor}` };
}

export default async function ContributorPage({ params, searchParams }: Props) {
  const contributor = decodeURIComponent((await params).contributor);
  const { before } = await pageSearch(searchParams, Search);
  const path = `/review/contributors/${encodeURIComponent(contributor)}`;
  const ctx = await pageContext("review", path);
  // Read first: whatever the page reads after it is at least as new.
  const asOf = await pageData(reviewReadsAsOf(ctx));
  const { rows, nextBefore, total, summary } = await pageData(
    recipientsOfContributor(ctx, { contributor, before, limit: PAGE }),
  );
  const exportHref = (format: string) => `${path}/export?format=${format}`;
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Disclosure log", href: "/review/disclosures" }, { label: `Contributor ${contributor}` }]}
        title={
          <>
            Who received <span className="font-mono">{contributor}</span>&apos;s episodes
          </>
        }
        description="Every download and preview that included at least one episode recorded by this contributor, newest first: when, to whom, under which licence, and how many of their episodes it held."
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
      <ReplicaNotice lag={asOf} />
      {rows.length === 0 && before === undefined ? (
        <EmptyState title="Nobody has received this contributor's episodes">
          No download or preview in the log includes an episode recorded by {contributor}.
        </EmptyState>
      ) : (
        <>
          {summary ? (
            <dl className="mb-4 grid grid-cols-2 gap-3 sm:grid-cols-4">
              <Stat label="Downloads" value={formatNumber(summary.downloads)} />
              <Stat
                label="Previews"
                value={formatNumber(summary.previews)}
                hint="watched in the portal or through the API"
              />
              <Stat label="Organisations" value={formatNumber(summary.organizations)} />
              <Stat
                label="Episodes downloaded"
                value={formatNumber(summary.episodes_downloaded)}
                hint="counted once per download"
              />
            </dl>
          ) : null}
          <p className="mb-2 text-sm text-slate-600">
            {cappedCountText(total, "entry includes", "entries include")} this contributor&apos;s episodes.
          </p>
          <ContributorRecipientsTable rows={rows} />
        </>
      )}
      <nav aria-label="Pages" className="mt-4 flex justify-between">
        {before !== undefined ? (
          <LinkButton variant="secondary" size="sm" href={path}>
            ← Newest
          </LinkButton>
        ) : (
          <span />
        )}
        {nextBefore !== null ? (
          <LinkButton variant="secondary" size="sm" href={`${path}?before=${nextBefore}`}>
            Older entries →
          </LinkButton>
        ) : null}
      </nav>
    </>
  );
}
