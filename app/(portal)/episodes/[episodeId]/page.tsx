import type { Metadata } from "next";
import Link from "next/link";
import { z } from "zod";
import { EpisodeView } from "@/components/episodes/episode-view";
import { Badge } from "@/components/ui/badge";
import { PageHeader } from "@/components/ui/page-header";
import { getEpisode } from "@/lib/catalog/get-episode";
import { listEpisodeSpans } from "@/lib/catalog/episode-spans";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";
import { episodeStreams } from "@/lib/previews/episode-streams";
import { previewEpisode } from "./actions";

/** An import that did not say where an episode was recorded says `unknown`: no place to name. */
const known = (value: string) => value !== "" && value !== "unknown";

type Props = { params: Promise<{ episodeId: string }>; searchParams: Promise<SearchParams> };

const Search = z.object({
  version: z
    .literal("")
    .transform(() => undefined)
    .or(z.string())
    .optional(),
});

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Episode ${(await params).episodeId}` };
}

export default async function EpisodePage({ params, searchParams }: Props) {
  const { episodeId } = await params;
  const { version } = await pageSearch(searchParams, Search);
  const ctx = await pageContext(
    "catalog",
    `/episodes/${episodeId}${version ? `?version=${encodeURIComponent(version)}` : ""}`,
  );
  const detail = await pageData(getEpisode(ctx, { episodeId, version }));
  const { spans } = await pageData(listEpisodeSpans(ctx, { episodeId, version: detail.version }));
  const streams = await pageData(episodeStreams(ctx, { episodeId, version: detail.version }));
  const { episode } = detail;
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
        description={`${episode.task}${known(episode.environment) ? ` in ${episode.environment}` : ""}, version ${detail.version}`}
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
              <Link
                key={v}
                href={`/episodes/${episodeId}?version=${v}`}
                className="font-medium text-brand-700 hover:underline"
              >
                {v}
              </Link>
            ),
          )}
        </nav>
      ) : null}
      <EpisodeView detail={detail} spans={spans} streams={streams} requestPreview={previewEpisode} />
    </>
  );
}
