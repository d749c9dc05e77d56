"use client";

import type { ColumnDef } from "@tanstack/react-table";
import { useState } from "react";
import { changeUserRoleAction, disableUserAction } from "@/app/(portal)/admin/users/actions";
import type { UserRecord } from "@/lib/admin/users";
import type { UserRole } from "@/lib/db/schema";
import { Alert } from "../ui/alert";
import { Badge, type Tone } from "../ui/badge";
import { Button } from "../ui/button";
import { DataTable } from "../ui/data-table";
import { Field, Select } from "../ui/form";
import { formatDate } from "../ui/format";
import { ActionError } from "./action-error";
import { ConfirmDialog } from "./confirm-dialog";
import { TableSrOnly } from "./table-sr-only";
import { useAdminAction } from "./use-admin-action";
import { ROLES, type OrganizationChoice } from "./user-form";

const ROLE_TONES: Record<string, Tone> = { admin: "brand", reviewer: "blue", licensee: "neutral" };

const COLUMNS: ColumnDef<UserRecord, unknown>[] = [
  {
    accessorKey: "email",
    header: "User",
    cell: ({ row }) => (
      <span className="block">
        <span className="font-medium text-slate-900">{row.original.email}</span>
        {row.original.name ? <span className="block text-xs text-slate-500">{row.original.name}</span> : null}
      </span>
    ),
  },
  { accessorKey: "role", header: "Role", cell: ({ row }) => <Badge tone={ROLE_TONES[row.original.role]}>{row.original.role}</Badge> },
  {
    accessorKey: "organization_slug",
    header: "Organisation",
    cell: ({ row }) =>
      row.original.organization_slug ? (
        <span className="block">
          <span>{row.original.organization_name}</span>
          <span className="block font-mono text-xs text-slate-500">{row.original.organization_slug}</span>
        </span>
      ) : (
        <span className="text-slate-400">—</span>
      ),
  },
  { accessorKey: "created_at", header: "Created", cell: ({ row }) => <span className="tabular-nums">{formatDate(row.original.created_at)}</span> },
  {
    accessorKey: "disabled_at",
    header: "Status",
    cell: ({ row }) =>
      row.original.disabled_at ? <Badge tone="red">disabled {formatDate(row.original.disabled_at)}</Badge> : <Badge tone="green">active</Badge>,
  },
];

type RoleChange = { user: UserRecord; role: UserRole; organizationId: string };

/**
 * Every user; an active user other than the signed-in admin can be given another role or be
 * disabled, after a confirmation. Both end every session the user has open.
 */
export function UsersTable({ users, empty, organizations, selfId }: { users: UserRecord[]; empty: string; organizations: OrganizationChoice[]; selfId: string }) {
  const [disabling, setDisabling] = useState<UserRecord | null>(null);
  const [changing, setChanging] = useState<RoleChange | null>(null);
  const disable = useAdminAction(disableUserAction, () => setDisabling(null));
  const change = useAdminAction(changeUserRoleAction, () => setChanging(null));
  const columns: ColumnDef<UserRecord, unknown>[] = [
    ...COLUMNS,
    {
      id: "actions",
      header: () => <TableSrOnly>Actions</TableSrOnly>,
      cell: ({ row }) =>
        row.original.disabled_at || row.original.id === selfId ? null : (
          <span className="flex gap-2">
            <Button
              variant="secondary"
              size="sm"
              onClick={() => {
                change.reset();
                setChanging({ user: row.original, role: row.original.role, organizationId: row.original.organization_id ?? "" });
              }}
              aria-label={`Change the role of ${row.original.email}`}
            >
              Change role
            </Button>
            <Button
              variant="secondary"
              size="sm"
              onClick={() => {
                disable.reset();
                setDisabling(row.original);
              }}
              aria-label={`Disable ${row.original.email}`}
            >
              Disable
            </Button>
          </span>
        ),
    },
  ];
  const disabled = disable.result && !disable.isPending ? disable.result : undefined;
  const changed = change.result && !change.isPending ? change.result : undefined;
  return (
    <div className="space-y-3">
      <div aria-live="polite">
        {disabled ? (
          <Alert kind="success">
            <span className="font-semibold">{disabled.email}</span> is disabled: they cannot sign in, and every session they had open has ended.
          </Alert>
        ) : null}
        {changed ? (
          <Alert kind="success">
            <span className="font-semibold">{changed.email}</span> is now {changed.role}: every session they had open has ended, and they sign in again under the new role.
          </Alert>
        ) : null}
      </div>
      <DataTable caption="Users" data={users} columns={columns} rowId={(u) => u.id} empty={empty} />
      {/* One dialog at a time: both would otherwise share the dialog's title id. */}
      {disabling ? (
        <ConfirmDialog
          open
          title="Disable this user?"
          confirmLabel="Disable user"
          pendingLabel="Disabling…"
          pending={disable.isPending}
          onClose={() => setDisabling(null)}
          onConfirm={() => disable.mutate({ id: disabling.id })}
        >
          <p>
            <span className="font-semibold text-slate-900">{disabling.email}</span> can no longer sign in, and every session they have open ends at once.
          </p>
          {disable.failure ? <ActionError title="The user was not disabled" failure={disable.failure} /> : null}
        </ConfirmDialog>
      ) : null}
      {changing ? (
        <ConfirmDialog
          open
          title="Change this user's role?"
          confirmLabel="Change role"
          pendingLabel="Changing…"
          pending={change.isPending}
          onClose={() => setChanging(null)}
          onConfirm={() => change.mutate({ id: changing.user.id, role: changing.role, organizationId: changing.organizationId || null })}
        >
          <p>
            Every session <span className="font-semibold text-slate-900">{changing.user.email}</span> has open ends at once; they sign in again under the new role.
          </p>
          <Field label="Role" htmlFor="change-role" hint={ROLES.find((r) => r.value === changing.role)?.hint}>
            <Select id="change-role" value={changing.role} onChange={(e) => setChanging({ ...changing, role: e.target.value as UserRole })}>
              {ROLES.map((r) => (
                <option key={r.value} value={r.value}>
                  {r.label}
                </option>
              ))}
            </Select>
          </Field>
          <Field label={changing.role === "licensee" ? "Organisation" : "Organisation (optional)"} htmlFor="change-organization">
            <Select id="change-organization" value={changing.organizationId} onChange={(e) => setChanging({ ...changing, organizationId: e.target.value })}>
              <option value="">{changing.role === "licensee" ? "Choose an organisation…" : "No organisation"}</option>
              {organizations.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name} ({o.slug})
                </option>
              ))}
            </Select>
          </Field>
          {change.failure ? <ActionError title="The role was not changed" failure={change.failure} /> : null}
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
