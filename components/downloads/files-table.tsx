"use client";

import type { ColumnDef } from "@tanstack/react-table";
import type { DownloadFile } from "@/lib/downloads/download";
import { CopyButton } from "../ui/copy-button";
import { DataTable } from "../ui/data-table";
import { formatBytes } from "../ui/format";

const dash = (value: string | null) => value ?? "—";

const COLUMNS: ColumnDef<DownloadFile, unknown>[] = [
  {
    accessorKey: "path",
    header: "Path",
    cell: ({ row }) => <span className="font-mono text-xs">{row.original.path}</span>,
  },
  {
    accessorKey: "episode_id",
    header: "Episode",
    // A file shared by several episodes (a LeRobot v3.0 video) says how many, and lists them on hover.
    cell: ({ row }) => {
      const { episode_id, episode_ids } = row.original;
      return (
        <span className="font-mono text-xs" title={episode_ids.length > 1 ? episode_ids.join(", ") : undefined}>
          {episode_id ?? (episode_ids.length ? `${episode_ids.length} episodes` : dash(null))}
        </span>
      );
    },
  },
  { accessorKey: "stream", header: "Stream", cell: ({ row }) => dash(row.original.stream) },
  {
    accessorKey: "size_bytes",
    header: "Size",
    meta: { align: "right" },
    cell: ({ row }) => formatBytes(row.original.size_bytes),
  },
  {
    accessorKey: "sha256",
    header: "SHA-256",
    // The whole checksum on hover, to compare with a file on disk.
    cell: ({ row }) => (
      <span className="font-mono text-xs text-slate-500" title={row.original.sha256}>
        {row.original.sha256.slice(0, 12)}…
      </span>
    ),
  },
  {
    id: "link",
    header: "Link",
    cell: ({ row }) => (
      <span className="flex items-center gap-2">
        <a href={row.original.url} className="font-medium text-brand-700 hover:underline" rel="noreferrer">
          Open
        </a>
        <CopyButton value={row.original.url} label="Copy link" />
      </span>
    ),
  },
];

/** A download's files with their signed links, inside the page's Files card. */
export function DownloadFilesTable({ files }: { files: DownloadFile[] }) {
  return (
    <DataTable
      bare
      caption="Files of this download with their signed links"
      data={files}
      columns={COLUMNS}
      rowId={(f) => f.path}
    />
  );
}
