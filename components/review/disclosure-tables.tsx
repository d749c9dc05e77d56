"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import type { ContributorRecipient } from "@/lib/disclosures/recipients-of-contributor";
import type { Recipient } from "@/lib/disclosures/recipient";
import type { DisclosureSummary } from "@/lib/disclosures/search";
import { Badge } from "../ui/badge";
import { DataTable } from "../ui/data-table";
import { formatBytes, formatDateTime, formatNumber } from "../ui/format";
import { basisOf, CHANNEL_TONE } from "./recipient";

/** What the log's entries and a contributor's recipients share: a numbered, dated download of one version. */
type Entry = Recipient & {
  seq: number;
  occurred_at: string | Date;
  dataset_id: string;
  version: string;
  episode_count: number;
};

const entryLink = (id: string, seq: number) => (
  <Link href={`/review/disclosures/${id}`} className="font-medium tabular-nums text-brand-700 hover:underline">
    {seq}
  </Link>
);
const channel = (row: Recipient) => <Badge tone={CHANNEL_TONE[row.channel]}>{row.channel}</Badge>;
/** A portal download or preview names its user, an API one its key's prefix. */
const recipient = (row: Recipient) => row.user ?? <span className="font-mono text-xs">{row.api_key}…</span>;

const when = <T extends Entry>(): ColumnDef<T, unknown> => ({
  id: "occurred_at",
  header: "When",
  cell: ({ row }) => <span className="tabular-nums">{formatDateTime(row.original.occurred_at)}</span>,
});
const version = <T extends Entry>(header: string): ColumnDef<T, unknown> => ({
  id: "version",
  header,
  cell: ({ row }) => (
    <span className="font-mono text-xs">
      {row.original.dataset_id}@{row.original.version}
    </span>
  ),
});
const numeric = <T,>(id: string, header: string, value: (row: T) => string): ColumnDef<T, unknown> => ({
  id,
  header,
  meta: { align: "right" },
  cell: ({ row }) => value(row.original),
});

const LOG_COLUMNS: ColumnDef<DisclosureSummary, unknown>[] = [
  { accessorKey: "seq", header: "#", cell: ({ row }) => entryLink(row.original.id, row.original.seq) },
  when(),
  {
    id: "recipient",
    header: "Recipient",
    cell: ({ row }) => (
      <>
        <span className="font-medium">{basisOf(row.original)}</span>{" "}
        <span className="text-slate-500">{recipient(row.original)}</span> {channel(row.original)}
      </>
    ),
  },
  version("Dataset"),
  numeric("episodes", "Episodes", (e) => formatNumber(e.episode_count)),
  numeric("files", "Files", (e) => formatNumber(e.file_count)),
  numeric("size", "Size", (e) => formatBytes(e.total_bytes)),
];

/** A page of the disclosure log, newest first. */
export function DisclosuresTable({ entries }: { entries: DisclosureSummary[] }) {
  return (
    <DataTable
      caption="Disclosure log entries, newest first"
      data={entries}
      columns={LOG_COLUMNS}
      rowId={(e) => e.id}
    />
  );
}

const RECIPIENT_COLUMNS: ColumnDef<ContributorRecipient, unknown>[] = [
  { accessorKey: "seq", header: "Entry", cell: ({ row }) => entryLink(row.original.download_id, row.original.seq) },
  when(),
  { id: "organization", header: "Organisation", cell: ({ row }) => basisOf(row.original) },
  {
    id: "recipient",
    header: "Recipient",
    cell: ({ row }) => (
      <>
        {recipient(row.original)} {channel(row.original)}
      </>
    ),
  },
  version("Version"),
  {
    id: "licence",
    header: "Licence",
    cell: ({ row }) =>
      row.original.licence_id ? <span className="font-mono text-xs">{row.original.licence_id}</span> : "None",
  },
  numeric("episodes", "Their episodes", (r) => formatNumber(r.episode_count)),
];

/** The downloads and previews that included a contributor's episodes, with how many of theirs each held. */
export function ContributorRecipientsTable({ rows }: { rows: ContributorRecipient[] }) {
  return (
    <DataTable
      caption="Downloads and previews that included this contributor's episodes"
      data={rows}
      columns={RECIPIENT_COLUMNS}
      rowId={(r) => r.download_id}
    />
  );
}
