"use client";

import { useMutation } from "@tanstack/react-query";
import type { ColumnDef, RowSelectionState } from "@tanstack/react-table";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMemo, useState } from "react";
import type { EpisodeFilter } from "@/lib/catalog/episode-filter";
import type { EpisodeRecord } from "@/lib/catalog/list-episodes";
import type { ActionResult } from "@/lib/http/portal";
import { Alert } from "../ui/alert";
import { Badge, outcomeTone } from "../ui/badge";
import { Button } from "../ui/button";
import { DataTable } from "../ui/data-table";
import { formatNumber } from "../ui/format";

type Filter = EpisodeFilter;

/** The body of a download request, as POST /v1/downloads takes it. */
export type DownloadRequest = {
  dataset_id: string;
  version: string;
  episode_ids?: string[];
  filter?: Filter;
  streams?: string[];
};

type Props = {
  datasetId: string;
  version: string;
  episodes: EpisodeRecord[];
  total: number;
  filter: Filter;
  streams: string[];
  /** The page's server action that creates the download. */
  requestDownload: (request: DownloadRequest) => Promise<ActionResult<{ download_id: string }>>;
};

export function EpisodeExplorer({ datasetId, version, episodes, total, filter, streams, requestDownload }: Props) {
  const router = useRouter();
  const [selection, setSelection] = useState<RowSelectionState>({});
  const [chosenStreams, setChosenStreams] = useState<string[]>(streams);
  const selected = Object.keys(selection).filter((id) => selection[id]);
  const download = useMutation({
    mutationFn: requestDownload,
    onSuccess: (result) => {
      if (result.ok) router.push(`/downloads/${result.data.download_id}`);
    },
  });
  const failure =
    download.data && !download.data.ok
      ? download.data.error
      : download.error
        ? { message: String(download.error), request_id: "" }
        : null;
  const columns = useMemo<ColumnDef<EpisodeRecord, unknown>[]>(
    () => [
      {
        id: "select",
        header: ({ table }) => (
          <input
            type="checkbox"
            aria-label="Select every episode on this page"
            className="h-4 w-4 rounded border-slate-300 accent-brand-600"
            checked={table.getIsAllRowsSelected()}
            ref={(el) => {
              if (el) el.indeterminate = table.getIsSomeRowsSelected();
            }}
            onChange={table.getToggleAllRowsSelectedHandler()}
          />
        ),
        cell: ({ row }) => (
          <input
            type="checkbox"
            aria-label={`Select ${row.original.episode_id}`}
            className="h-4 w-4 rounded border-slate-300 accent-brand-600"
            checked={row.getIsSelected()}
            onChange={row.getToggleSelectedHandler()}
          />
        ),
      },
      {
        accessorKey: "episode_id",
        header: "Episode",
        cell: ({ row }) => (
          <Link
            className="font-mono text-brand-700 hover:underline"
            href={`/episodes/${row.original.episode_id}?version=${version}`}
          >
            {row.original.episode_id}
          </Link>
        ),
      },
      { accessorKey: "task", header: "Task" },
      { accessorKey: "environment", header: "Environment" },
      {
        accessorKey: "duration_s",
        header: "Duration",
        cell: ({ row }) => <span className="tabular-nums">{row.original.duration_s.toFixed(2)} s</span>,
      },
      {
        accessorKey: "outcome",
        header: "Outcome",
        cell: ({ row }) => <Badge tone={outcomeTone(row.original.outcome)}>{row.original.outcome}</Badge>,
      },
      {
        accessorKey: "has_recovery",
        header: "Recovery",
        cell: ({ row }) =>
          row.original.has_recovery ? <Badge tone="amber">recovery</Badge> : <span className="text-slate-400">—</span>,
      },
      { accessorKey: "contributor", header: "Contributor" },
      {
        accessorKey: "streams",
        header: "Streams",
        // Wrapped, never cut: LeRobot's keys are long (observation.images.wrist), and a cut list hides which are there.
        cell: ({ row }) => (
          <span className="block min-w-40 max-w-72 whitespace-normal font-mono text-xs text-slate-500 break-words">
            {row.original.streams.join(", ")}
          </span>
        ),
      },
    ],
    [version],
  );
  const request = (scope: { episode_ids?: string[]; filter?: Filter }) =>
    download.mutate({
      dataset_id: datasetId,
      version,
      ...scope,
      ...(chosenStreams.length === streams.length ? {} : { streams: chosenStreams }),
    });
  const hasFilter = Object.values(filter).some((v) => v !== undefined);
  return (
    <div className="mt-3 space-y-3">
      <DataTable
        caption="Episodes"
        data={episodes}
        columns={columns}
        rowId={(e) => e.episode_id}
        selection={selection}
        onSelectionChange={setSelection}
        empty="No episode matches these filters."
      />
      <section aria-labelledby="download-heading" className="rounded-lg bg-white p-4 shadow-sm ring-1 ring-slate-200">
        <h2 id="download-heading" className="text-sm font-semibold text-slate-900">
          Request a download
        </h2>
        <p className="mt-1 text-sm text-slate-500">
          Links are valid for 15 minutes. Every download is recorded in the disclosure log under your name.
        </p>
        <fieldset className="mt-3">
          <legend className="text-sm font-medium text-slate-700">Streams</legend>
          <div className="mt-1 flex flex-wrap gap-x-4 gap-y-2">
            {streams.map((stream) => (
              <label key={stream} className="flex items-center gap-2 text-sm text-slate-700">
                <input
                  type="checkbox"
                  className="h-4 w-4 rounded border-slate-300 accent-brand-600"
                  checked={chosenStreams.includes(stream)}
                  onChange={(e) =>
                    setChosenStreams((now) => (e.target.checked ? [...now, stream] : now.filter((s) => s !== stream)))
                  }
                />
                {stream}
              </label>
            ))}
          </div>
        </fieldset>
        <div className="mt-4 flex flex-wrap gap-2">
          <Button
            disabled={!selected.length || !chosenStreams.length || download.isPending}
            onClick={() => request({ episode_ids: selected })}
          >
            Download selected ({selected.length})
          </Button>
          <Button
            variant="secondary"
            disabled={!total || !chosenStreams.length || download.isPending}
            onClick={() => request(hasFilter ? { filter } : {})}
          >
            Download all {formatNumber(total)} {hasFilter ? "matching" : "episodes of this version"}
          </Button>
          {download.isPending ? (
            <span className="self-center text-sm text-slate-500">Preparing signed links…</span>
          ) : null}
        </div>
        {failure ? (
          <Alert kind="error" title="The download was not created" className="mt-3">
            {failure.message}
            {failure.request_id ? (
              <span className="mt-1 block text-xs opacity-75">Request id {failure.request_id}</span>
            ) : null}
          </Alert>
        ) : null}
      </section>
    </div>
  );
}
