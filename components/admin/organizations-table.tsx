"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import type { OrganizationRecord } from "@/lib/admin/list-organizations";
import { DataTable } from "../ui/data-table";
import { formatDate, formatNumber } from "../ui/format";

const countLink = (href: string, count: number, what: string) => (
  <Link
    href={href}
    className="font-medium tabular-nums text-brand-700 hover:underline"
    aria-label={`${formatNumber(count)} ${what}`}
  >
    {formatNumber(count)}
  </Link>
);

const COLUMNS: ColumnDef<OrganizationRecord, unknown>[] = [
  {
    accessorKey: "name",
    header: "Organisation",
    cell: ({ row }) => (
      <span className="block">
        <span className="font-medium text-slate-900">{row.original.name}</span>
        <span className="block font-mono text-xs text-slate-500">{row.original.slug}</span>
      </span>
    ),
  },
  {
    accessorKey: "user_count",
    header: "Users",
    cell: ({ row }) =>
      countLink(
        `/admin/users?organization=${row.original.id}`,
        row.original.user_count,
        `users of ${row.original.slug}`,
      ),
  },
  {
    accessorKey: "active_licence_count",
    header: "Active licences",
    cell: ({ row }) =>
      countLink(
        `/admin/licences?organization=${row.original.id}`,
        row.original.active_licence_count,
        `active licences of ${row.original.slug}`,
      ),
  },
  {
    accessorKey: "live_key_count",
    header: "Live keys",
    cell: ({ row }) =>
      countLink(
        `/admin/keys?organization=${row.original.id}&status=active`,
        row.original.live_key_count,
        `live keys of ${row.original.slug}`,
      ),
  },
  {
    accessorKey: "created_at",
    header: "Created",
    cell: ({ row }) => <span className="tabular-nums">{formatDate(row.original.created_at)}</span>,
  },
  {
    accessorKey: "id",
    header: "Id",
    cell: ({ row }) => <span className="font-mono text-xs text-slate-500">{row.original.id}</span>,
  },
];

export function OrganizationsTable({ organizations }: { organizations: OrganizationRecord[] }) {
  return (
    <DataTable
      caption="Organisations"
      data={organizations}
      columns={COLUMNS}
      rowId={(o) => o.id}
      empty="No organisations yet."
    />
  );
}
