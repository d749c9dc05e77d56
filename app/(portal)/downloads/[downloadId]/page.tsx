import type { Metadata } from "next";
import { DownloadFilesTable } from "@/components/downloads/files-table";
import { Alert } from "@/components/ui/alert";
import { buttonClass } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Countdown } from "@/components/ui/countdown";
import { formatBytes, formatDateTime, formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { Stat } from "@/components/ui/stat";
import { getDataset } from "@/lib/catalog/list-datasets";
import { listVersions } from "@/lib/catalog/list-versions";
import { recordedDownload } from "@/lib/downloads/download";
import { DOWNLOAD_FORMATS } from "@/lib/downloads/formats";
import { pageContext, pageData } from "@/lib/http/portal";

type Props = { params: Promise<{ downloadId: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Download ${(await params).downloadId}` };
}

const SHOWN = 500;
const FORMAT_LABELS = { json: "JSON", csv: "CSV", aria2c: "aria2c list", curl: "curl script" } as const;

export default async function DownloadPage({ params }: Props) {
  const { downloadId } = await params;
  const ctx = await pageContext("catalog", `/downloads/${downloadId}`);
  const download = await pageData(recordedDownload(ctx, downloadId));
  // The dataset's title for the breadcrumb, and whether the version is LeRobot's (then `das pull` is the way to a loadable dataset).
  const [dataset, versions] = await Promise.all([
    getDataset(ctx, download.dataset_id).catch(() => null),
    listVersions(ctx, { datasetId: download.dataset_id, limit: 500 }).catch(() => null),
  ]);
  const format = versions?.versions.find((v) => v.version === download.version)?.format ?? null;
  const pull = `npx das pull ${download.dataset_id}@${download.version} --dir ./${download.dataset_id}`;
  return (
    <>
      <PageHeader
        crumbs={[
          { label: "Datasets", href: "/datasets" },
          { label: dataset?.title ?? download.dataset_id, href: `/datasets/${download.dataset_id}` },
          { label: "Download" },
        ]}
        title={`Download of ${download.dataset_id} ${download.version}`}
        description={<span className="font-mono text-xs">{download.download_id}</span>}
      />
      <dl className="mb-4 grid grid-cols-2 gap-3 sm:grid-cols-4">
        <Stat label="Files" value={formatNumber(download.file_count)} />
        <Stat label="Size" value={formatBytes(download.total_bytes)} />
        <Stat
          label="Links expire in"
          value={<Countdown until={download.expires_at} />}
          hint={formatDateTime(download.expires_at)}
        />
        <Stat label="Recorded" value="Disclosure log" hint="under your name, channel portal" />
      </dl>
      {download.co_delivered_episode_ids.length ? (
        <Alert kind="info" className="mb-4">
          {formatNumber(download.co_delivered_episode_ids.length)} more episode(s) came along with the ones chosen,
          because files of this download also hold them; they are recorded in the disclosure log too.
        </Alert>
      ) : null}
      <Alert kind="info" className="mb-4">
        Links are valid for 15 minutes. Take the whole list with you in one of these forms; each holds the same signed
        links and checksums.
        <span className="mt-2 flex flex-wrap gap-2">
          {(Object.keys(DOWNLOAD_FORMATS) as (keyof typeof DOWNLOAD_FORMATS)[]).map((format) => (
            <a
              key={format}
              href={`/downloads/${download.download_id}/${format}`}
              className={buttonClass("secondary", "sm")}
              download
            >
              {FORMAT_LABELS[format]}
            </a>
          ))}
        </span>
        <span className="mt-2 block text-xs">
          For example:{" "}
          <code className="rounded bg-white/70 px-1">aria2c -i {download.download_id}-aria2c-input.txt</code> or{" "}
          <code className="rounded bg-white/70 px-1">sh {download.download_id}-download.sh</code>
        </span>
      </Alert>
      {format ? (
        <Alert kind="info" className="mb-4" title={`A LeRobot ${format.codebase_version} dataset`}>
          These links fetch the version&apos;s files as they are. To get a dataset LeRobot loads as it stands (its meta
          files and data rewritten for just the episodes you chose), pull it with the command line and an API key
          instead: <code className="rounded bg-white/70 px-1 wrap-anywhere">{pull}</code>, with the same filters (
          <code className="rounded bg-white/70 px-1">--outcome</code>,{" "}
          <code className="rounded bg-white/70 px-1">--environment</code>, ...). It is recorded in the disclosure log
          like this download.
        </Alert>
      ) : null}
      <Card>
        <CardHeader
          title="Files"
          description={
            download.file_count > SHOWN
              ? `The first ${SHOWN} of ${formatNumber(download.file_count)}; the lists above hold all of them.`
              : undefined
          }
        />
        <DownloadFilesTable files={download.files.slice(0, SHOWN)} />
      </Card>
    </>
  );
}
