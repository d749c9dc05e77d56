import type { Metadata } from "next";
import Link from "next/link";
import { z } from "zod";
import { EpisodeView } from "@/components/episodes/episode-view";
import { Badge } from "@/components/ui/badge";
import { PageHeader } from "@/components/ui/page-header";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";
import { episodeStreams, reviewEpisode } from "@/lib/previews/episode-streams";
import { previewEpisodeForReview } from "./actions";

type Props = { params: Promise<{ episodeId: string }>; searchParams: Promise<SearchParams> };

const Search = z.object({
  version: z
    .literal("")
    .transform(() => undefined)
    .or(z.string())
    .optional(),
});

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Review episode ${(await params).episodeId}` };
}

/** An episode as a reviewer checks it: any version, watched as themselves (each preview is in the log). */
export default async function ReviewEpisodePage({ params, searchParams }: Props) {
  const { episodeId } = await params;
  const { version } = await pageSearch(searchParams, Search);
  const ctx = await pageContext(
    "review",
    `/review/episodes/${episodeId}${version ? `?version=${encodeURIComponent(version)}` : ""}`,
  );
  const detail = await pageData(reviewEpisode(ctx, { episodeId, version }));
  const streams = await pageData(episodeStreams(ctx, { episodeId, version: detail.version }));
  const { episode } = detail;
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Disclosure log", href: "/review/disclosures" }, { label: `Episode ${episode.episode_id}` }]}
        title={<span className="font-mono">{episode.episode_id}</span>}
        description={`${detail.dataset_id}@${detail.version}: ${episode.task}${episode.environment === "unknown" ? "" : ` in ${episode.environment}`}. Previews here are recorded in the log as yours.`}
        actions={
          <Link
            className="text-sm font-medium text-brand-700 hover:underline"
            href={`/review/disclosures?episode=${encodeURIComponent(episode.episode_id)}`}
          >
            Who received this episode
          </Link>
        }
      />
      {detail.versions.length > 1 ? (
        <nav aria-label="Versions of this episode" className="mb-4 flex flex-wrap items-center gap-2 text-sm">
          <span className="text-slate-500">In versions:</span>
          {detail.versions.map((v) =>
            v === detail.version ? (
              <Badge key={v} tone="brand">
                {v}
              </Badge>
            ) : (
              <Link
                key={v}
                href={`/review/episodes/${episodeId}?version=${v}`}
                className="font-medium text-brand-700 hover:underline"
              >
                {v}
              </Link>
            ),
          )}
        </nav>
      ) : null}
      <EpisodeView detail={detail} spans={detail.spans} streams={streams} requestPreview={previewEpisodeForReview} />
    </>
  );
}
