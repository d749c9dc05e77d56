"use client";

import type { ColumnDef } from "@tanstack/react-table";
import type { AnnotationRecord } from "@/lib/catalog/list-annotations";
import { Badge } from "../ui/badge";
import { DataTable } from "../ui/data-table";
import { LongText } from "../ui/long-text";

const seconds = (s: number) => `${s.toFixed(2)} s`;

const COLUMNS: ColumnDef<AnnotationRecord, unknown>[] = [
  {
    accessorKey: "label",
    header: "Label",
    // The table's cells do not wrap; a label may be 10,000 characters, so this one wraps, within a
    // phone's width, and shows a long label's start with a button for the rest.
    cell: ({ row }) =>
      row.original.label === "recovery" ? (
        <Badge tone="red">recovery</Badge>
      ) : (
        <LongText text={row.original.label} className="min-w-32 max-w-[min(28rem,70vw)] font-medium" />
      ),
  },
  {
    accessorKey: "start_s",
    header: "Start",
    meta: { align: "right" },
    cell: ({ row }) => seconds(row.original.start_s),
  },
  { accessorKey: "end_s", header: "End", meta: { align: "right" }, cell: ({ row }) => seconds(row.original.end_s) },
  {
    id: "length",
    header: "Length",
    meta: { align: "right" },
    cell: ({ row }) => seconds(row.original.end_s - row.original.start_s),
  },
  {
    accessorKey: "attributes",
    header: "Attributes",
    cell: ({ row }) => (
      <span className="block min-w-48 max-w-md whitespace-normal break-all font-mono text-xs text-slate-500">
        {JSON.stringify(row.original.attributes)}
      </span>
    ),
  },
];

/** An episode's subtask spans in time order, inside the page's Spans card. */
export function SpansTable({ spans }: { spans: AnnotationRecord[] }) {
  return <DataTable bare caption="Subtask spans" data={spans} columns={COLUMNS} rowId={(s) => s.annotation_id} />;
}
