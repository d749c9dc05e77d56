import type { Metadata } from "next";
import Link from "next/link";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatBytes, formatDateTime, formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { basisOf, CHANNEL_TONE } from "@/components/review/recipient";
import { z } from "zod";
import { LinkButton } from "@/components/ui/button";
import { disclosedEpisodes, getDisclosure } from "@/lib/disclosures/search";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";
import { ReplicaNotice } from "@/components/review/replica-notice";
import { reviewReadsAsOf } from "@/lib/disclosures/replica-reads";

type Props = { params: Promise<{ id: string }>; searchParams: Promise<SearchParams> };

// An entry of a whole version holds tens of thousands of episodes: shown a page at a time, after the last one shown.
const EPISODE_PAGE = 500;
const Search = z.object({ episodes_after: z.string().max(200).optional().catch(undefined) });

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Disclosure ${(await params).id}` };
}

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="grid gap-1 py-2 sm:grid-cols-3 sm:gap-4">
      <dt className="text-sm text-slate-500">{label}</dt>
      <dd className="break-all text-sm text-slate-900 sm:col-span-2">{children}</dd>
    </div>
  );
}

export default async function DisclosurePage({ params, searchParams }: Props) {
  const { id } = await params;
  const { episodes_after: after } = await pageSearch(searchParams, Search);
  const ctx = await pageContext("review", `/review/disclosures/${id}`);
  // Read first: whatever the page reads after it is at least as new.
  const asOf = await pageData(reviewReadsAsOf(ctx));
  const entry = await pageData(getDisclosure(ctx, id));
  const { episodeIds, nextAfter } = await pageData(
    disclosedEpisodes(ctx, { id: entry.id, after, limit: EPISODE_PAGE }),
  );
  const scope = entry.requested_scope;
  const preview = entry.channel === "preview";
  const kind = preview
    ? "a preview of one episode"
    : scope.paths
      ? `${scope.paths.length === 1 ? "a file" : `${scope.paths.length} files`} fetched through the Hub protocol`
      : scope.episode_ids
        ? `${scope.episode_ids.length} listed episodes`
        : scope.filter
          ? "episodes matching a filter"
          : "the whole version";
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Disclosure log", href: "/review/disclosures" }, { label: `Entry ${entry.seq}` }]}
        title={`Entry ${entry.seq}: ${entry.dataset_id}@${entry.version}`}
        description={`${formatDateTime(entry.occurred_at)} · ${basisOf(entry)} · ${entry.user ?? `API key ${entry.api_key}…`}${preview ? " · preview" : ""}`}
      />
      <ReplicaNotice lag={asOf} />
      {entry.hash_matches ? null : (
        <Alert kind="error" title="This entry does not hash to its recorded hash" className="mb-4">
          It was altered after it was written. Run <code>das-admin disclosures verify</code> and investigate.
        </Alert>
      )}
      <div className="grid gap-4 lg:grid-cols-2">
        <Card>
          <CardHeader title="Recipient and licence" />
          <CardBody>
            <dl className="divide-y divide-slate-100">
              <Row label="Organisation">
                {entry.organization ? (
                  <>
                    {entry.organization_name}{" "}
                    <span className="font-mono text-xs text-slate-500">({entry.organization})</span>
                  </>
                ) : (
                  <>None: previewed by a {entry.reviewer_role}, under the review permission rather than a licence</>
                )}
              </Row>
              <Row label="Recipient">
                {entry.user ? entry.user : <span className="font-mono">{entry.api_key}…</span>}
              </Row>
              <Row label="Channel">
                <Badge tone={CHANNEL_TONE[entry.channel]}>{entry.channel}</Badge>
              </Row>
              <Row label="Licence">
                {entry.licence_id ? (
                  <Link
                    href={`/review/disclosures?licence=${encodeURIComponent(entry.licence_id)}`}
                    className="font-mono text-xs text-brand-700 hover:underline"
                    title="Every entry delivered under this licence"
                  >
                    {entry.licence_id}
                  </Link>
                ) : (
                  "None"
                )}
              </Row>
              <Row label="Terms">
                {entry.terms_sha256 ? (
                  <>
                    {entry.terms_title}{" "}
                    <Link
                      href={`/review/disclosures?terms=${entry.terms_sha256}`}
                      className="font-mono text-xs text-brand-700 hover:underline"
                      title="Every entry delivered under these terms"
                    >
                      SHA-256 {entry.terms_sha256}
                    </Link>
                  </>
                ) : entry.names_terms ? (
                  "None: the licence was granted without a terms document"
                ) : entry.licence_id ? (
                  "Not recorded: this entry was made before entries named their terms"
                ) : (
                  "None"
                )}
              </Row>
              <Row label={preview ? "Preview id" : "Download id"}>
                <span className="font-mono text-xs">{entry.id}</span>
              </Row>
              <Row label="Request id">
                <span className="font-mono text-xs">{entry.request_id}</span>
              </Row>
              <Row label="Links valid until">{formatDateTime(entry.expires_at)}</Row>
            </dl>
          </CardBody>
        </Card>
        <Card>
          <CardHeader
            title="Scope"
            description={`Requested: ${kind}${scope.streams ? `, streams ${scope.streams.join(", ")}` : ", every stream"}.`}
          />
          <CardBody>
            <dl className="divide-y divide-slate-100">
              <Row label="Resolved">
                {formatNumber(entry.episode_count)} episodes, {formatNumber(entry.file_count)} files,{" "}
                {formatBytes(entry.total_bytes)}
              </Row>
              <Row label="As requested">
                <pre className="overflow-x-auto whitespace-pre-wrap rounded bg-slate-50 p-2 font-mono text-xs">
                  {JSON.stringify(scope, null, 2)}
                </pre>
              </Row>
            </dl>
          </CardBody>
        </Card>
      </div>
      <Card className="mt-4">
        <CardHeader
          title={`Resolved episodes (${formatNumber(entry.episode_count)})`}
          description={
            preview
              ? "The episode this preview showed. Watch it yourself (your preview is recorded too)."
              : "The episodes whose files this download contained."
          }
        />
        <CardBody>
          {episodeIds.length ? (
            <ul className="flex max-h-72 flex-wrap gap-1.5 overflow-y-auto">
              {episodeIds.map((episode) => (
                <li key={episode} className="flex items-center gap-0.5">
                  <Link
                    href={`/review/disclosures?episode=${encodeURIComponent(episode)}`}
                    className="inline-block rounded bg-slate-100 px-2 py-0.5 font-mono text-xs text-slate-700 hover:bg-brand-50 hover:text-brand-700"
                    title="Every download and preview that included this episode"
                  >
                    {episode}
                  </Link>
                  <Link
                    href={`/review/episodes/${encodeURIComponent(episode)}?version=${encodeURIComponent(entry.version)}`}
                    className="inline-block rounded px-1 text-xs text-brand-700 hover:bg-brand-50"
                    aria-label={`Watch ${episode} in ${entry.version}`}
                    title="Watch this episode"
                  >
                    ▶
                  </Link>
                </li>
              ))}
            </ul>
          ) : (
            <p className="text-sm text-slate-500">
              {after === undefined ? "Only version-level files (no episode)." : "No more episodes."}
            </p>
          )}
          {after !== undefined || nextAfter !== null ? (
            <nav aria-label="Pages of episodes" className="mt-3 flex justify-between">
              {after !== undefined ? (
                <LinkButton variant="secondary" size="sm" href={`/review/disclosures/${entry.id}`}>
                  ← First episodes
                </LinkButton>
              ) : (
                <span />
              )}
              {nextAfter !== null ? (
                <LinkButton
                  variant="secondary"
                  size="sm"
                  href={`/review/disclosures/${entry.id}?episodes_after=${encodeURIComponent(nextAfter)}`}
                >
                  Next {formatNumber(EPISODE_PAGE)} episodes →
                </LinkButton>
              ) : null}
            </nav>
          ) : null}
        </CardBody>
      </Card>
      <Card className="mt-4">
        <CardHeader
          title="Integrity"
          description="The entry's hash covers every field above and the previous entry's hash."
        />
        <CardBody>
          <dl className="divide-y divide-slate-100">
            <Row label="Hash">
              <span className="font-mono text-xs">{entry.hash}</span>{" "}
              {entry.hash_matches ? <Badge tone="green">matches</Badge> : <Badge tone="red">mismatch</Badge>}
            </Row>
            <Row label="Previous hash">
              <span className="font-mono text-xs">{entry.prev_hash}</span>
            </Row>
            <Row label="Episodes digest">
              <span className="font-mono text-xs">{entry.episodes_sha256}</span>
            </Row>
          </dl>
        </CardBody>
      </Card>
    </>
  );
}
