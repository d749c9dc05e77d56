"use client";

import type { ColumnDef } from "@tanstack/react-table";
import type { ReactNode } from "react";
import type { LicenceTarget } from "@/lib/admin/licences";
import type { LicenceRecord } from "@/lib/admin/list-licences";
import { Alert } from "../ui/alert";
import { DataTable } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { formatDateTime } from "../ui/format";
import { AdminListSection } from "./admin-list-section";
import { ConfirmDialog, ConfirmTrigger, useConfirmedAction } from "./confirm-dialog";
import { TableSrOnly } from "./table-sr-only";
import type { AdminAction } from "./use-admin-action";

const organizationCell: ColumnDef<LicenceRecord, unknown> = {
  accessorKey: "organization_slug",
  header: "Organisation",
  cell: ({ row }) => (
    <span className="block">
      <span className="font-medium text-slate-900">{row.original.organization_name}</span>
      <span className="block font-mono text-xs text-slate-500">{row.original.organization_slug}</span>
    </span>
  ),
};
const datasetCell: ColumnDef<LicenceRecord, unknown> = {
  accessorKey: "dataset_id",
  header: "Dataset",
  cell: ({ row }) => (
    <span className="block">
      <span className="text-slate-900">{row.original.dataset_title}</span>
      <span className="block font-mono text-xs text-slate-500">{row.original.dataset_id}</span>
    </span>
  ),
};
const versionCell: ColumnDef<LicenceRecord, unknown> = {
  accessorKey: "version",
  header: "Version",
  cell: ({ row }) => <span className="font-mono font-medium">{row.original.version}</span>,
};
const time = (value: string) => (
  <time dateTime={value} className="tabular-nums">
    {formatDateTime(value)}
  </time>
);

const REVOKED_COLUMNS: ColumnDef<LicenceRecord, unknown>[] = [
  organizationCell,
  datasetCell,
  versionCell,
  { accessorKey: "granted_at", header: "Granted", cell: ({ row }) => time(row.original.granted_at) },
  { accessorKey: "revoked_at", header: "Revoked", cell: ({ row }) => time(row.original.revoked_at!) },
  {
    accessorKey: "id",
    header: "Licence id",
    cell: ({ row }) => <span className="font-mono text-xs text-slate-500">{row.original.id}</span>,
  },
];

/** Active licences, each revocable after a confirmation, and the revoked ones kept for the record. */
export function LicencesTables({
  licences,
  filtered,
  filters,
  revoke: revokeAction,
}: {
  licences: LicenceRecord[];
  filtered: boolean;
  filters?: ReactNode;
  revoke: AdminAction<LicenceTarget, LicenceTarget & { id: string }>;
}) {
  const revoke = useConfirmedAction<LicenceRecord, LicenceTarget, LicenceTarget & { id: string }>(revokeAction);
  const active = licences.filter((l) => !l.revoked_at);
  const revoked = licences.filter((l) => l.revoked_at);
  const columns: ColumnDef<LicenceRecord, unknown>[] = [
    organizationCell,
    datasetCell,
    versionCell,
    { accessorKey: "granted_at", header: "Granted", cell: ({ row }) => time(row.original.granted_at) },
    {
      id: "actions",
      header: () => <TableSrOnly>Actions</TableSrOnly>,
      cell: ({ row }) => (
        <ConfirmTrigger
          control={revoke}
          target={row.original}
          label="Revoke"
          name={`Revoke ${row.original.dataset_id}@${row.original.version} for ${row.original.organization_slug}`}
        />
      ),
    },
  ];
  const done = revoke.done;
  return (
    <div className="space-y-6">
      <div aria-live="polite">
        {done ? (
          <Alert kind="success">
            Revoked{" "}
            <span className="font-mono">
              {done.datasetId}@{done.version}
            </span>{" "}
            for{" "}
            <span className="font-semibold">
              {licences.find((l) => l.id === done.id)?.organization_name ?? done.organizationId}
            </span>
            . Its keys and members lost access at once; earlier disclosures still name the licence.
          </Alert>
        ) : null}
      </div>
      <AdminListSection
        id="active-heading"
        title="Active licences"
        count={active.length}
        filters={filters}
        filtered={filtered}
        empty={
          <EmptyState title="No active licences">
            Grant one above: an organisation sees nothing until it holds a licence.
          </EmptyState>
        }
      >
        <DataTable
          caption="Active licences"
          data={active}
          columns={columns}
          rowId={(l) => l.id}
          empty="This organisation holds no active licence."
        />
      </AdminListSection>
      <AdminListSection
        id="revoked-heading"
        title="Revoked licences"
        count={revoked.length}
        description="Kept for the record: the disclosure log names the licence under which each download was made."
      >
        <DataTable
          caption="Revoked licences"
          data={revoked}
          columns={REVOKED_COLUMNS}
          rowId={(l) => l.id}
          empty="No licence has been revoked."
        />
      </AdminListSection>
      <ConfirmDialog
        control={revoke}
        title="Revoke this licence?"
        confirmLabel="Revoke licence"
        pendingLabel="Revoking…"
        failureTitle="The licence was not revoked"
        input={(l) => ({ organizationId: l.organization_id, datasetId: l.dataset_id, version: l.version })}
      >
        {(target) => (
          <>
            <p>
              <span className="font-semibold text-slate-900">{target.organization_name}</span> loses access to{" "}
              <span className="font-mono text-slate-900">
                {target.dataset_id}@{target.version}
              </span>{" "}
              at once: its members and API keys can no longer list, read or download it, and keys narrowed to it reach
              one version fewer.
            </p>
            <p>
              Links already handed out stay valid until they expire (at most 15 minutes). You can grant the version
              again later.
            </p>
          </>
        )}
      </ConfirmDialog>
    </div>
  );
}
