import type { Metadata } from "next";
import Link from "next/link";
import { z } from "zod";
import { BarList } from "@/components/charts/bar-list";
import { Histogram } from "@/components/charts/histogram";
import { Badge, type Tone } from "@/components/ui/badge";
import { LinkButton } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatBytes, formatDate, formatNumber, formatSeconds } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { Stat } from "@/components/ui/stat";
import { portalDataset, portalVersionStatistics } from "@/lib/catalog/listing";
import { versionReadme } from "@/lib/catalog/version-documents";
import { DatasetCard } from "@/components/datasets/dataset-card";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";

type Props = { params: Promise<{ id: string }>; searchParams: Promise<SearchParams> };

// A version that cannot be shown (or is not there) shows the newest licensed one instead, or, for a
// listed dataset the caller holds nothing of, the newest version.
const Search = z.object({ version: z.string().optional() });

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: (await params).id };
}

const CHANGE_TONES: Record<string, Tone> = {
  added: "green",
  changed: "blue",
  fixed: "brand",
  removed: "red",
  deprecated: "amber",
  security: "red",
};
// An unknown outcome is no warning: neutral, like its badge.
const OUTCOME_COLORS: Record<string, string> = {
  success: "bg-emerald-500",
  failure: "bg-red-500",
  unknown: "bg-slate-400",
};

export default async function DatasetPage({ params, searchParams }: Props) {
  const { id } = await params;
  const ctx = await pageContext("catalog", `/datasets/${id}`);
  const { version: requested } = await pageSearch(searchParams, Search);
  const dataset = await pageData(portalDataset(ctx, id));
  const { versions } = dataset;
  // A listed dataset's charts are its catalog facts, for any version; otherwise only licensed ones.
  const showable = (v: (typeof versions)[number]) => v.licensed || dataset.listed;
  const shown =
    versions.find((v) => showable(v) && v.version === requested) ?? versions.find((v) => v.licensed) ?? versions[0]!;
  const requestable = dataset.listed && versions.some((v) => !v.licensed);
  const [stats, readme] = await Promise.all([
    portalVersionStatistics(ctx, { datasetId: id, version: shown.version }),
    // The card is the shown version's README, a file of the version: only under a licence. A store
    // that cannot be reached leaves the page without it.
    shown.licensed ? versionReadme(ctx, { datasetId: id, version: shown.version }).catch(() => null) : null,
  ]);
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Datasets", href: "/datasets" }, { label: dataset.title }]}
        title={dataset.title}
        description={dataset.description}
        actions={
          <div className="flex flex-wrap gap-2">
            {shown.licensed ? (
              <LinkButton href={`/datasets/${id}/${shown.version}`}>Explore episodes of {shown.version}</LinkButton>
            ) : null}
            {requestable ? (
              <LinkButton
                variant={shown.licensed ? "secondary" : "primary"}
                href={`/datasets/${id}/request${shown.licensed ? "" : `?version=${shown.version}`}`}
              >
                Request access
              </LinkButton>
            ) : null}
          </div>
        }
      />
      <section aria-labelledby="stats-heading" className="mb-6">
        <h2 id="stats-heading" className="mb-3 text-sm font-medium text-slate-700">
          Version {shown.version} at a glance
        </h2>
        <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6">
          <Stat label="Episodes" value={formatNumber(stats.episode_count)} />
          <Stat label="Files" value={formatNumber(stats.file_count)} />
          <Stat label="Size" value={formatBytes(stats.total_bytes)} />
          <Stat label="Streams" value={stats.streams.length} hint={stats.streams.join(", ")} />
          <Stat label="With recovery" value={formatNumber(stats.recoveries)} />
          <Stat label="Contributors" value={stats.contributors} />
        </dl>
      </section>
      {shown.format ? (
        <section aria-labelledby="recording-heading" className="mb-6">
          <h2 id="recording-heading" className="mb-3 text-sm font-medium text-slate-700">
            Recording <Badge tone="blue">LeRobot {shown.format.codebase_version}</Badge>
          </h2>
          <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6">
            <Stat
              label="Robot type"
              value={<span className="block text-base wrap-anywhere">{shown.format.robot_type ?? "—"}</span>}
            />
            <Stat
              label="Frame rate"
              value={`${formatNumber(shown.format.fps)} fps`}
              hint={`${formatNumber(shown.format.total_frames)} frames`}
            />
            <Stat label="Cameras" value={shown.format.cameras.length} />
          </dl>
          {shown.format.cameras.length ? (
            <ul aria-label="Cameras" className="mt-3 flex flex-wrap gap-2 text-sm text-slate-700">
              {shown.format.cameras.map((camera) => (
                <li key={camera.key} className="rounded-md bg-white px-3 py-1.5 shadow-sm ring-1 ring-slate-200">
                  <span className="font-mono text-xs">{camera.key}</span>
                  <span className="ml-2 text-slate-500">
                    {[
                      camera.width && camera.height ? `${camera.width}×${camera.height}` : null,
                      camera.codec,
                      camera.fps ? `${formatNumber(camera.fps)} fps` : null,
                      camera.storage === "image" ? "images in the data files" : null,
                    ]
                      .filter(Boolean)
                      .join(" · ")}
                  </span>
                </li>
              ))}
            </ul>
          ) : null}
        </section>
      ) : null}
      <div className="mb-8 grid gap-4 lg:grid-cols-3">
        <Card>
          <CardBody>
            <BarList
              title="Outcome"
              total={stats.episode_count}
              items={stats.outcomes.map((o) => ({
                label: o.value,
                count: o.count,
                color: OUTCOME_COLORS[o.value] ?? "bg-amber-500",
              }))}
            />
          </CardBody>
        </Card>
        <Card>
          <CardBody>
            <BarList
              title="Environment"
              total={stats.episode_count}
              items={stats.environments.map((e) => ({ label: e.value, count: e.count }))}
            />
          </CardBody>
        </Card>
        <Card>
          <CardBody>
            <Histogram
              title={`Duration (mean ${formatSeconds(stats.duration.mean)})`}
              buckets={stats.duration.buckets}
              unit="s"
            />
          </CardBody>
        </Card>
      </div>
      {readme ? <DatasetCard readme={readme} version={shown.version} /> : null}
      <Card>
        <CardHeader
          title="Versions"
          description={
            dataset.listed
              ? "Newest first. Charts above are for the highlighted version; licensed versions can be explored and downloaded, the others requested."
              : "Newest first. Charts above are for the highlighted version; licensed versions can be explored and downloaded."
          }
        />
        <ol className="divide-y divide-slate-100">
          {versions.map((v) => (
            <li key={v.version} className={`px-4 py-4 sm:px-5 ${v.version === shown.version ? "bg-brand-50/40" : ""}`}>
              <div className="flex flex-wrap items-center gap-x-3 gap-y-2">
                <h3 className="font-mono text-base font-semibold text-slate-900">{v.version}</h3>
                {v.licensed ? <Badge tone="green">licensed</Badge> : <Badge tone="neutral">not licensed</Badge>}
                <span className="text-sm text-slate-500">
                  released {formatDate(v.released_at)} · {formatNumber(v.episode_count)} episodes
                </span>
                {showable(v) ? (
                  <span className="ml-auto flex gap-3 text-sm">
                    {v.version !== shown.version ? (
                      <Link
                        className="font-medium text-brand-700 hover:underline"
                        href={`/datasets/${id}?version=${v.version}`}
                      >
                        Charts
                      </Link>
                    ) : null}
                    {v.licensed ? (
                      <Link
                        className="font-medium text-brand-700 hover:underline"
                        href={`/datasets/${id}/${v.version}`}
                      >
                        Episodes
                      </Link>
                    ) : (
                      <Link
                        className="font-medium text-brand-700 hover:underline"
                        href={`/datasets/${id}/request?version=${v.version}`}
                      >
                        Request access
                      </Link>
                    )}
                  </span>
                ) : null}
              </div>
              {v.changelog.length ? (
                <ul className="mt-2 space-y-1">
                  {v.changelog.map((entry, i) => (
                    <li key={i} className="flex items-start gap-2 text-sm text-slate-700">
                      <Badge tone={CHANGE_TONES[entry.type]} className="mt-0.5 w-24 justify-center">
                        {entry.type}
                      </Badge>
                      <span>{entry.description}</span>
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ol>
      </Card>
    </>
  );
}
