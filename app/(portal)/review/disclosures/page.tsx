import type { Metadata } from "next";
import Link from "next/link";
import { z } from "zod";
import { DisclosuresTable } from "@/components/review/disclosure-tables";
import { Alert } from "@/components/ui/alert";
import { buttonClass, LinkButton } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { FilterBar } from "@/components/ui/filter-bar";
import { formatDateTime, formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { chainStatus } from "@/lib/disclosures/chain-status";
import { DisclosureSearch, disclosureFilter, NO_ORGANIZATION, searchQuery } from "@/lib/disclosures/filter";
import { countDisclosures, reviewFacets, searchDisclosures } from "@/lib/disclosures/search";
import { cappedCountText } from "@/components/review/recipient";
import { DISCLOSURE_CHANNELS } from "@/lib/db/schema";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";
import { ReplicaNotice } from "@/components/review/replica-notice";
import { reviewReadsAsOf } from "@/lib/disclosures/replica-reads";

export const metadata: Metadata = { title: "Disclosure log" };

const PAGE = 50;

const CHANNEL_LABELS = {
  api: "API download",
  portal: "Portal download",
  preview: "Preview",
  hub: "Hub download",
} as const;

// The search form's fields, and the page's position: `before` from the page links, ignored when it is not a number.
const Search = DisclosureSearch.extend({
  before: z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number)
    .optional()
    .catch(undefined),
});

export default async function DisclosuresPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const ctx = await pageContext("review", `/review/disclosures`);
  // Read first: whatever the page reads after it is at least as new.
  const asOf = await pageData(reviewReadsAsOf(ctx));
  const { before, ...params } = await pageSearch(searchParams, Search);
  const { filter, problems } = disclosureFilter(params);
  const [facets, status] = await Promise.all([reviewFacets(ctx), chainStatus(ctx)]);
  const [{ entries, nextBefore }, total] = problems.length
    ? [{ entries: [], nextBefore: null }, null]
    : await Promise.all([searchDisclosures(ctx, { filter, before, limit: PAGE }), countDisclosures(ctx, filter)]);
  const query = searchQuery(params);
  const searching = query.length > 0;
  const contributor = params.contributor?.trim();
  return (
    <>
      <PageHeader
        title="Disclosure log"
        description="Every download and every preview ever made: who received which episodes of which version, when, through which channel, under which licence (a reviewer's preview under their role). Entries are append-only and hash-chained."
        actions={
          <>
            <a
              className={buttonClass("secondary", "sm")}
              href={`/review/disclosures/export?${searchQuery(params, { format: "csv" })}`}
            >
              Export CSV
            </a>
            <a
              className={buttonClass("secondary", "sm")}
              href={`/review/disclosures/export?${searchQuery(params, { format: "jsonl" })}`}
            >
              Export JSONL
            </a>
          </>
        }
      />
      <ReplicaNotice lag={asOf} />
      {status.report === null ? (
        <Alert kind="info" title="Verifying the hash chain…" className="mb-4">
          A check of the entries since the last verified checkpoint is running; reload in a moment for its result.
        </Alert>
      ) : status.report.intact ? (
        <Alert kind="success" title="Hash chain intact" className="mb-4">
          {status.from
            ? `${formatNumber(status.report.count)} entries. Entry ${formatNumber(status.from.seq)} still holds the hash verified ${formatDateTime(status.from.verifiedAt)}, and the ${formatNumber(status.entriesChecked)} entries after it verify`
            : `All ${formatNumber(status.report.count)} entries verify`}
          : each follows the one before, hashes to its recorded hash and still lists the episodes it recorded. Checked{" "}
          {formatDateTime(status.checkedAt)}. <LastFullVerification at={status.lastFull?.verifiedAt ?? null} />
        </Alert>
      ) : (
        <Alert kind="error" title={`Hash chain broken at entry ${status.report.firstBadSeq}`} className="mb-4">
          {status.report.reason}. The {formatNumber(status.report.count)} entries before it verify. Checked{" "}
          {formatDateTime(status.checkedAt)}; investigate before relying on later entries.{" "}
          <LastFullVerification at={status.lastFull?.verifiedAt ?? null} />
        </Alert>
      )}
      <div className="mb-4">
        <FilterBar
          label="Search the disclosure log"
          framed
          submitLabel="Search"
          active={searching}
          clearHref="/review/disclosures"
          fields={[
            {
              kind: "select",
              name: "org",
              label: "Organisation",
              any: "Any",
              value: params.org ?? "",
              options: [
                ...facets.organizations.map((o) => ({ value: o.slug, label: o.name })),
                { value: NO_ORGANIZATION, label: "None (reviewers' previews)" },
              ],
            },
            {
              kind: "input",
              name: "key",
              label: "API key prefix",
              placeholder: "das_AbCdEfGh",
              value: params.key ?? "",
            },
            { kind: "input", name: "user", label: "User email", type: "email", value: params.user ?? "" },
            {
              kind: "select",
              name: "dataset",
              label: "Dataset",
              any: "Any",
              value: params.dataset ?? "",
              options: facets.datasets.map((d) => ({ value: d, label: d })),
            },
            { kind: "input", name: "version", label: "Version", placeholder: "1.2.0", value: params.version ?? "" },
            { kind: "input", name: "from", label: "From (UTC)", type: "date", value: params.from ?? "" },
            { kind: "input", name: "to", label: "To (UTC, inclusive)", type: "date", value: params.to ?? "" },
            { kind: "input", name: "episode", label: "Episode id", value: params.episode ?? "" },
            {
              kind: "input",
              name: "contributor",
              label: "Contributor",
              hint: "Entries that include any of this contributor's episodes.",
              value: params.contributor ?? "",
            },
            {
              kind: "input",
              name: "licence",
              label: "Licence",
              placeholder: "lic_…",
              hint: "Entries delivered under this licence.",
              value: params.licence ?? "",
            },
            {
              kind: "input",
              name: "terms",
              label: "Terms SHA-256",
              hint: "Entries delivered under a licence with this terms document.",
              value: params.terms ?? "",
            },
            {
              kind: "select",
              name: "channel",
              label: "Channel",
              any: "Any",
              value: params.channel ?? "",
              options: DISCLOSURE_CHANNELS.map((c) => ({ value: c, label: CHANNEL_LABELS[c] })),
            },
          ]}
        >
          {contributor ? (
            <Link
              href={`/review/contributors/${encodeURIComponent(contributor)}`}
              className="text-sm font-medium text-brand-700 hover:underline"
            >
              Who received {contributor}&apos;s episodes →
            </Link>
          ) : null}
        </FilterBar>
      </div>
      {problems.length ? (
        <Alert kind="error" title="Check the search">
          {problems.join(" ")}
        </Alert>
      ) : entries.length === 0 ? (
        <EmptyState title={searching ? "No entry matches this search" : "Nothing disclosed yet"}>
          {searching
            ? "Widen the search, or clear it to see the whole log."
            : "Entries appear here as soon as anyone requests a download or plays an episode."}
        </EmptyState>
      ) : (
        <>
          {total ? (
            <p className="mb-2 text-sm text-slate-600" aria-live="polite">
              {searching
                ? `${cappedCountText(total, "entry matches", "entries match")} this search.`
                : `${cappedCountText(total, "entry", "entries")} in the log.`}
            </p>
          ) : null}
          <DisclosuresTable entries={entries} />
        </>
      )}
      <nav aria-label="Pages" className="mt-4 flex justify-between">
        {before !== undefined ? (
          <LinkButton variant="secondary" size="sm" href={`/review/disclosures${query ? `?${query}` : ""}`}>
            ← Newest
          </LinkButton>
        ) : (
          <span />
        )}
        {nextBefore !== null ? (
          <LinkButton
            variant="secondary"
            size="sm"
            href={`/review/disclosures?${searchQuery(params, { before: String(nextBefore) })}`}
          >
            Older entries →
          </LinkButton>
        ) : null}
      </nav>
    </>
  );
}

/** The banner checks only what was appended since the last checkpoint; the periodic full walk covers the rest. */
function LastFullVerification({ at }: { at: Date | null }) {
  return at ? (
    <>Whole log last verified from its first entry {formatDateTime(at)}.</>
  ) : (
    <>
      The whole log has not been verified from its first entry yet: run <code>das-admin disclosures verify --full</code>
      .
    </>
  );
}
