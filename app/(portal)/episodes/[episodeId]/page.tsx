import type { Metadata } from "next";
import Link from "next/link";
import { z } from "zod";
import { SpansTable } from "@/components/episodes/spans-table";
import { Timeline } from "@/components/episodes/timeline";
import { Badge, outcomeTone } from "@/components/ui/badge";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatSeconds } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { getEpisode } from "@/lib/catalog/get-episode";
import { listEpisodeSpans } from "@/lib/catalog/episode-spans";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";

type Props = { params: Promise<{ episodeId: string }>; searchParams: Promise<SearchParams> };

const Search = z.object({ version: z.literal("").transform(() => undefined).or(z.string()).optional() });

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Episode ${(await params).episodeId}` };
}

export default async function EpisodePage({ params, searchParams }: Props) {
  const { episodeId } = await params;
  const { version } = await pageSearch(searchParams, Search);
  const ctx = await pageContext("catalog", `/episodes/${episodeId}${version ? `?version=${encodeURIComponent(version)}` : ""}`);
  const detail = await pageData(getEpisode(ctx, { episodeId, version }));
  const { spans } = await pageData(listEpisodeSpans(ctx, { episodeId, version: detail.version }));
  const { episode } = detail;
  const fields: [string, React.ReactNode][] = [
    ["Task", episode.task],
    ["Environment", episode.environment],
    ["Duration", formatSeconds(episode.duration_s)],
    ["Outcome", <Badge key="o" tone={outcomeTone(episode.outcome)}>{episode.outcome}</Badge>],
    ["Recovery", episode.has_recovery ? <Badge key="r" tone="amber">yes</Badge> : "no"],
    ["Contributor", <span key="c" className="font-mono">{episode.contributor}</span>],
    ["Streams", episode.streams.join(", ")],
  ];
  return (
    <>
      <PageHeader
        crumbs={[
          { label: "Datasets", href: "/datasets" },
          { label: detail.dataset_id, href: `/datasets/${detail.dataset_id}` },
          { label: detail.version, href: `/datasets/${detail.dataset_id}/${detail.version}` },
          { label: episode.episode_id },
        ]}
        title={<span className="font-mono">{episode.episode_id}</span>}
        description={`${episode.task} in ${episode.environment}, version ${detail.version}`}
      />
      {detail.versions.length > 1 ? (
        <nav aria-label="Versions of this episode" className="mb-4 flex flex-wrap items-center gap-2 text-sm">
          <span className="text-slate-500">Also in your licensed versions:</span>
          {detail.versions.map((v) =>
            v === detail.version ? (
              <Badge key={v} tone="brand">
                {v}
              </Badge>
            ) : (
              <Link key={v} href={`/episodes/${episodeId}?version=${v}`} className="font-medium text-brand-700 hover:underline">
                {v}
              </Link>
            ),
          )}
        </nav>
      ) : null}
      <div className="grid gap-4 lg:grid-cols-3">
        <Card className="lg:col-span-1">
          <CardHeader title="Metadata" />
          <CardBody>
            <dl className="divide-y divide-slate-100 text-sm">
              {fields.map(([label, value]) => (
                <div key={label} className="flex justify-between gap-4 py-2">
                  <dt className="text-slate-500">{label}</dt>
                  <dd className="text-right text-slate-900">{value}</dd>
                </div>
              ))}
            </dl>
          </CardBody>
        </Card>
        <Card className="lg:col-span-2">
          <CardHeader title="Subtask timeline" description={`${spans.length} spans over ${formatSeconds(episode.duration_s)}. Hover or focus a span for its times.`} />
          <CardBody>
            {spans.length ? <Timeline spans={spans} duration={episode.duration_s} /> : <EmptyState title="No subtask spans">This episode has no annotations in this version.</EmptyState>}
          </CardBody>
        </Card>
      </div>
      {spans.length ? (
        <Card className="mt-4">
          <CardHeader title="Spans" />
          <SpansTable spans={spans} />
        </Card>
      ) : null}
    </>
  );
}
