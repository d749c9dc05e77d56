"use client";

import type { ColumnDef } from "@tanstack/react-table";
import type { KeyRecord, KeyStatus } from "@/lib/admin/list-keys";
import { Alert } from "../ui/alert";
import { Badge, type Tone } from "../ui/badge";
import { DataTable } from "../ui/data-table";
import { formatDate, formatDateTime } from "../ui/format";
import { ConfirmDialog, ConfirmTrigger, useConfirmedAction } from "./confirm-dialog";
import { TableSrOnly } from "./table-sr-only";
import type { AdminAction } from "./use-admin-action";

const STATUS_TONES: Record<KeyStatus, Tone> = { active: "green", expired: "amber", revoked: "red" };

const dim = (text: string) => <span className="text-slate-400">{text}</span>;

const COLUMNS: ColumnDef<KeyRecord, unknown>[] = [
  {
    accessorKey: "name",
    header: "Key",
    cell: ({ row }) => (
      <span className="block">
        <span className="font-medium text-slate-900">{row.original.name}</span>
        <span className="block font-mono text-xs text-slate-500">{row.original.prefix}…</span>
      </span>
    ),
  },
  {
    accessorKey: "organization_slug",
    header: "Organisation",
    cell: ({ row }) => (
      <span className="block">
        <span>{row.original.organization_name}</span>
        <span className="block font-mono text-xs text-slate-500">{row.original.organization_slug}</span>
      </span>
    ),
  },
  {
    accessorKey: "status",
    header: "Status",
    cell: ({ row }) => {
      const k = row.original;
      const when = k.status === "revoked" ? k.revoked_at : k.status === "expired" ? k.expires_at : null;
      return (
        <span className="block">
          <Badge tone={STATUS_TONES[k.status]}>{k.status}</Badge>
          {when ? <span className="mt-0.5 block text-xs text-slate-500">{formatDate(when)}</span> : null}
        </span>
      );
    },
  },
  {
    accessorKey: "scope",
    header: "Scope",
    cell: ({ row }) =>
      row.original.narrowed ? (
        <ul className="flex max-w-xs flex-wrap gap-1" aria-label="Narrowed to">
          {row.original.scope.map((s) => (
            <li key={`${s.dataset_id}@${s.version}`}>
              <Badge
                tone={s.licensed ? "blue" : "neutral"}
                className={s.licensed ? "font-mono" : "font-mono line-through"}
              >
                <span title={s.licensed ? undefined : "The organisation's licence for this version was revoked"}>
                  {s.dataset_id}@{s.version}
                  {s.licensed ? null : <TableSrOnly> (licence revoked)</TableSrOnly>}
                </span>
              </Badge>
            </li>
          ))}
          {row.original.scope.length === 0 ? <li>{dim("no versions")}</li> : null}
        </ul>
      ) : (
        <span className="text-slate-600">All licences</span>
      ),
  },
  {
    accessorKey: "created_at",
    header: "Created",
    cell: ({ row }) => (
      <span className="block">
        <span className="tabular-nums">{formatDate(row.original.created_at)}</span>
        <span className="block text-xs text-slate-500">by {row.original.created_by ?? "das-admin"}</span>
      </span>
    ),
  },
  {
    accessorKey: "expires_at",
    header: "Expires",
    cell: ({ row }) =>
      row.original.expires_at ? (
        <span className="tabular-nums">{formatDate(row.original.expires_at)}</span>
      ) : (
        dim("never")
      ),
  },
  {
    accessorKey: "last_used_at",
    header: "Last used",
    cell: ({ row }) =>
      row.original.last_used_at ? (
        <span className="tabular-nums">{formatDateTime(row.original.last_used_at)}</span>
      ) : (
        dim("never")
      ),
  },
];

/** Every key with its status; keys not yet revoked can be revoked after a confirmation. */
export function KeysTable({
  keys,
  empty,
  revoke: revokeAction,
}: {
  keys: KeyRecord[];
  empty: string;
  revoke: AdminAction<{ id: string }, { id: string; prefix: string }>;
}) {
  const revoke = useConfirmedAction<KeyRecord, { id: string }, { id: string; prefix: string }>(revokeAction);
  const columns: ColumnDef<KeyRecord, unknown>[] = [
    ...COLUMNS,
    {
      id: "actions",
      header: () => <TableSrOnly>Actions</TableSrOnly>,
      cell: ({ row }) =>
        row.original.status === "revoked" ? null : (
          <ConfirmTrigger
            control={revoke}
            target={row.original}
            label="Revoke"
            name={`Revoke key ${row.original.name} (${row.original.prefix})`}
          />
        ),
    },
  ];
  return (
    <div className="space-y-3">
      <div aria-live="polite">
        {revoke.done ? (
          <Alert kind="success">
            Key <span className="font-mono">{revoke.done.prefix}…</span> is revoked: requests with it are refused with
            401 from now on.
          </Alert>
        ) : null}
      </div>
      <DataTable caption="API keys, newest first" data={keys} columns={columns} rowId={(k) => k.id} empty={empty} />
      <ConfirmDialog
        control={revoke}
        title="Revoke this API key?"
        confirmLabel="Revoke key"
        pendingLabel="Revoking…"
        failureTitle="The key was not revoked"
        input={(k) => ({ id: k.id })}
      >
        {(target) => (
          <>
            <p>
              <span className="font-semibold text-slate-900">“{target.name}”</span> (
              <span className="font-mono text-slate-900">{target.prefix}…</span>) of {target.organization_name} stops
              working at once: every request with it gets <span className="font-mono">401 unauthorized</span>.
            </p>
            <p>This cannot be undone. Clients that still need access need a new key.</p>
          </>
        )}
      </ConfirmDialog>
    </div>
  );
}
