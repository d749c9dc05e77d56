import type { EpisodeDetail } from "@/lib/catalog/get-episode";
import type { AnnotationRecord } from "@/lib/catalog/list-annotations";
import type { EpisodeStream } from "@/lib/previews/episode-streams";
import { Badge, outcomeTone } from "../ui/badge";
import { Card, CardBody, CardHeader } from "../ui/card";
import { formatSeconds } from "../ui/format";
import { EpisodePlayer, type RequestPreview } from "./player/episode-player";
import { SpansTable } from "./spans-table";

/**
 * An episode's page body, for licensees (the catalog) and reviewers alike: the player with the
 * subtask timeline, the metadata, and the spans. The page hands in its own server action for the
 * preview, so the same view discloses on the basis the page's area allows.
 */
export function EpisodeView({
  detail,
  spans,
  streams,
  requestPreview,
}: {
  detail: Pick<EpisodeDetail, "episode" | "version">;
  spans: AnnotationRecord[];
  streams: EpisodeStream[];
  requestPreview: RequestPreview;
}) {
  const { episode } = detail;
  const fields: [string, React.ReactNode][] = [
    ["Task", episode.task],
    ["Environment", episode.environment],
    ["Duration", formatSeconds(episode.duration_s)],
    [
      "Outcome",
      <Badge key="o" tone={outcomeTone(episode.outcome)}>
        {episode.outcome}
      </Badge>,
    ],
    [
      "Recovery",
      episode.has_recovery ? (
        <Badge key="r" tone="amber">
          yes
        </Badge>
      ) : (
        "no"
      ),
    ],
    [
      "Contributor",
      <span key="c" className="font-mono">
        {episode.contributor}
      </span>,
    ],
    ["Streams", episode.streams.join(", ")],
  ];
  const videos = streams.filter((s) => s.video).length;
  const length = formatSeconds(episode.duration_s);
  // What the card holds, said truly for each case: spans or none, video or none.
  const [title, description] = spans.length
    ? [
        videos ? "Playback and subtask timeline" : "Subtask timeline",
        `${spans.length} ${spans.length === 1 ? "span" : "spans"} over ${length}. ${videos ? "Choose a span to play from its start." : "Hover or focus a span for its times."}`,
      ]
    : [
        videos ? "Playback" : "Subtask timeline",
        `${length}, with no subtask spans in this version.${videos ? " Press play to watch it." : ""}`,
      ];
  return (
    <>
      <div className="grid gap-4 lg:grid-cols-3">
        <Card className="min-w-0 lg:col-span-2">
          <CardHeader title={title} description={description} />
          <CardBody>
            <EpisodePlayer
              episodeId={episode.episode_id}
              version={detail.version}
              duration={episode.duration_s}
              spans={spans}
              streams={streams}
              requestPreview={requestPreview}
            />
          </CardBody>
        </Card>
        <Card className="min-w-0 lg:col-span-1">
          <CardHeader title="Metadata" />
          <CardBody>
            <dl className="divide-y divide-slate-100 text-sm">
              {fields.map(([label, value]) => (
                <div key={label} className="flex justify-between gap-4 py-2">
                  <dt className="text-slate-500">{label}</dt>
                  <dd className="min-w-0 text-right text-slate-900 wrap-anywhere">{value}</dd>
                </div>
              ))}
            </dl>
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
