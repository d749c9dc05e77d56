"use client";

import type { ColumnDef } from "@tanstack/react-table";
import type { AuditRecord } from "@/lib/admin/list-audit";
import { Badge } from "../ui/badge";
import { DataTable } from "../ui/data-table";
import { formatDateTime } from "../ui/format";
import { auditAction } from "./audit-labels";

const COLUMNS: ColumnDef<AuditRecord, unknown>[] = [
  {
    accessorKey: "occurred_at",
    header: "When (UTC)",
    cell: ({ row }) => {
      const [date, time] = formatDateTime(row.original.occurred_at).replace(" UTC", "").split(" ");
      return (
        <time dateTime={row.original.occurred_at} className="block tabular-nums">
          {date}
          <span className="block text-xs text-slate-500">{time}</span>
        </time>
      );
    },
  },
  {
    accessorKey: "action",
    header: "Action",
    cell: ({ row }) => {
      const { label, tone } = auditAction(row.original.action);
      return <Badge tone={tone}>{label}</Badge>;
    },
  },
  {
    accessorKey: "target_label",
    header: "Target",
    cell: ({ row }) => (
      <span className="block">
        <span className="text-slate-900">{row.original.target_label}</span>
        <span className="block font-mono text-xs text-slate-500">{row.original.target_id}</span>
      </span>
    ),
  },
  {
    accessorKey: "actor_label",
    header: "Actor",
    cell: ({ row }) => (
      <span className="flex items-center gap-2">
        <span className="text-slate-900">{row.original.actor_label}</span>
        {row.original.actor_kind === "operator" ? <Badge tone="amber">CLI</Badge> : null}
      </span>
    ),
  },
  {
    accessorKey: "summary",
    header: "Details",
    cell: ({ row }) =>
      row.original.summary ? (
        <span className="block min-w-48 max-w-xs whitespace-normal text-slate-600">{row.original.summary}</span>
      ) : (
        <span className="text-slate-400">—</span>
      ),
  },
];

export function AuditTable({
  entries,
  empty = "No admin actions recorded yet.",
}: {
  entries: AuditRecord[];
  empty?: string;
}) {
  return (
    <DataTable
      caption="Admin audit entries, newest first"
      data={entries}
      columns={COLUMNS}
      rowId={(e) => String(e.id)}
      empty={empty}
    />
  );
}
