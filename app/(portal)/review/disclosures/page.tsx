import type { Metadata } from "next";
import Form from "next/form";
import Link from "next/link";
import { z } from "zod";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { buttonClass, LinkButton } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Field, Input, Select } from "@/components/ui/form";
import { formatBytes, formatDateTime, formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { chainStatus } from "@/lib/disclosures/chain-status";
import { DisclosureSearch, disclosureFilter, searchQuery } from "@/lib/disclosures/filter";
import { reviewFacets, searchDisclosures } from "@/lib/disclosures/search";
import { pageContext, pageSearch, type SearchParams } from "@/lib/http/portal";

export const metadata: Metadata = { title: "Disclosure log" };

const PAGE = 50;

// The search form's fields, and the page's position: `before` from the page links, ignored when it is not a number.
const Search = DisclosureSearch.extend({ before: z.string().regex(/^\d{1,15}$/).transform(Number).optional().catch(undefined) });

export default async function DisclosuresPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const ctx = await pageContext("review", `/review/disclosures`);
  const { before, ...params } = await pageSearch(searchParams, Search);
  const { filter, problems } = disclosureFilter(params);
  const [facets, status] = await Promise.all([reviewFacets(ctx), chainStatus(ctx)]);
  const { entries, nextBefore } = problems.length ? { entries: [], nextBefore: null } : await searchDisclosures(ctx, { filter, before, limit: PAGE });
  const query = searchQuery(params);
  const searching = query.length > 0;
  return (
    <>
      <PageHeader
        title="Disclosure log"
        description="Every download ever made: who received which episodes of which version, when, under which licence. Entries are append-only and hash-chained."
        actions={
          <>
            <a className={buttonClass("secondary", "sm")} href={`/review/disclosures/export?${searchQuery(params, { format: "csv" })}`}>
              Export CSV
            </a>
            <a className={buttonClass("secondary", "sm")} href={`/review/disclosures/export?${searchQuery(params, { format: "jsonl" })}`}>
              Export JSONL
            </a>
          </>
        }
      />
      {status.report === null ? (
        <Alert kind="info" title="Verifying the hash chain…" className="mb-4">
          A full check of the log is running; reload in a moment for its result.
        </Alert>
      ) : status.report.intact ? (
        <Alert kind="success" title="Hash chain intact" className="mb-4">
          All {formatNumber(status.report.count)} entries verify: each follows the one before, hashes to its recorded hash and still lists the episodes it recorded. Checked{" "}
          {formatDateTime(status.checkedAt!)}.
        </Alert>
      ) : (
        <Alert kind="error" title={`Hash chain broken at entry ${status.report.firstBadSeq}`} className="mb-4">
          {status.report.reason}. The {formatNumber(status.report.count)} entries before it verify. Checked {formatDateTime(status.checkedAt!)}; investigate before relying on later entries.
        </Alert>
      )}
      <Form action="" aria-label="Search the disclosure log" className="mb-4 grid gap-3 rounded-lg bg-white p-4 shadow-sm ring-1 ring-slate-200 sm:grid-cols-2 lg:grid-cols-4">
        <Field label="Organisation" htmlFor="org">
          <Select id="org" name="org" defaultValue={params.org ?? ""}>
            <option value="">Any</option>
            {facets.organizations.map((o) => (
              <option key={o.slug} value={o.slug}>
                {o.name}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="API key prefix" htmlFor="key">
          <Input id="key" name="key" placeholder="das_AbCdEfGh" defaultValue={params.key} />
        </Field>
        <Field label="User email" htmlFor="user">
          <Input id="user" name="user" type="email" defaultValue={params.user} />
        </Field>
        <Field label="Dataset" htmlFor="dataset">
          <Select id="dataset" name="dataset" defaultValue={params.dataset ?? ""}>
            <option value="">Any</option>
            {facets.datasets.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Version" htmlFor="version">
          <Input id="version" name="version" placeholder="1.2.0" defaultValue={params.version} />
        </Field>
        <Field label="From (UTC)" htmlFor="from">
          <Input id="from" name="from" type="date" defaultValue={params.from} />
        </Field>
        <Field label="To (UTC, inclusive)" htmlFor="to">
          <Input id="to" name="to" type="date" defaultValue={params.to} />
        </Field>
        <Field label="Episode id" htmlFor="episode">
          <Input id="episode" name="episode" defaultValue={params.episode} />
        </Field>
        <Field label="Contributor" htmlFor="contributor" hint="Entries that include any of this contributor's episodes.">
          <Input id="contributor" name="contributor" defaultValue={params.contributor} />
        </Field>
        <div className="flex items-end gap-2 sm:col-span-2 lg:col-span-3">
          <button type="submit" className={buttonClass("primary")}>
            Search
          </button>
          {searching ? (
            <Link href="/review/disclosures" className={buttonClass("ghost")}>
              Clear
            </Link>
          ) : null}
          {params.contributor?.trim() ? (
            <Link href={`/review/contributors/${encodeURIComponent(params.contributor.trim())}`} className="ml-auto self-center text-sm font-medium text-brand-700 hover:underline">
              Who received {params.contributor.trim()}&apos;s episodes →
            </Link>
          ) : null}
        </div>
      </Form>
      {problems.length ? (
        <Alert kind="error" title="Check the search">
          {problems.join(" ")}
        </Alert>
      ) : entries.length === 0 ? (
        <EmptyState title={searching ? "No entry matches this search" : "No downloads yet"}>
          {searching ? "Widen the search, or clear it to see the whole log." : "Entries appear here as soon as anyone requests a download."}
        </EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-lg bg-white shadow-sm ring-1 ring-slate-200">
          <table className="min-w-full divide-y divide-slate-200 text-sm">
            <caption className="sr-only">Disclosure log entries, newest first</caption>
            <thead className="bg-slate-50 text-left text-xs font-semibold uppercase tracking-wide text-slate-600">
              <tr>
                <th scope="col" className="px-3 py-2.5">#</th>
                <th scope="col" className="px-3 py-2.5">When</th>
                <th scope="col" className="px-3 py-2.5">Recipient</th>
                <th scope="col" className="px-3 py-2.5">Dataset</th>
                <th scope="col" className="px-3 py-2.5 text-right">Episodes</th>
                <th scope="col" className="px-3 py-2.5 text-right">Files</th>
                <th scope="col" className="px-3 py-2.5 text-right">Size</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {entries.map((e) => (
                <tr key={e.id} className="hover:bg-slate-50">
                  <td className="px-3 py-2 tabular-nums">
                    <Link href={`/review/disclosures/${e.id}`} className="font-medium text-brand-700 hover:underline">
                      {e.seq}
                    </Link>
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 tabular-nums">{formatDateTime(e.occurred_at)}</td>
                  <td className="px-3 py-2">
                    <span className="font-medium">{e.organization_name}</span>{" "}
                    <span className="text-slate-500">{e.user ?? <span className="font-mono text-xs">{e.api_key}…</span>}</span>{" "}
                    <Badge tone={e.channel === "api" ? "blue" : "brand"}>{e.channel}</Badge>
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 font-mono text-xs">
                    {e.dataset_id}@{e.version}
                  </td>
                  <td className="px-3 py-2 text-right tabular-nums">{formatNumber(e.episode_count)}</td>
                  <td className="px-3 py-2 text-right tabular-nums">{formatNumber(e.file_count)}</td>
                  <td className="whitespace-nowrap px-3 py-2 text-right tabular-nums">{formatBytes(e.total_bytes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
          <LinkButton variant="secondary" size="sm" href={`/review/disclosures?${searchQuery(params, { before: String(nextBefore) })}`}>
            Older entries →
          </LinkButton>
        ) : null}
      </nav>
    </>
  );
}
