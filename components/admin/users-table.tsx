"use client";

import type { ColumnDef } from "@tanstack/react-table";
import type { UserRecord } from "@/lib/admin/users";
import type { UserRole } from "@/lib/db/schema";
import { Alert } from "../ui/alert";
import { Badge, type Tone } from "../ui/badge";
import { DataTable } from "../ui/data-table";
import { Field, Select } from "../ui/form";
import { formatDate } from "../ui/format";
import { ConfirmDialog, ConfirmTrigger, useConfirmedAction } from "./confirm-dialog";
import { TableSrOnly } from "./table-sr-only";
import type { AdminAction } from "./use-admin-action";
import { noOrganization, OrganizationOptions, RoleOptions, ROLES, type OrganizationChoice } from "./user-form";

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
  {
    accessorKey: "role",
    header: "Role",
    cell: ({ row }) => <Badge tone={ROLE_TONES[row.original.role]}>{row.original.role}</Badge>,
  },
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
  {
    accessorKey: "created_at",
    header: "Created",
    cell: ({ row }) => <span className="tabular-nums">{formatDate(row.original.created_at)}</span>,
  },
  {
    accessorKey: "disabled_at",
    header: "Status",
    cell: ({ row }) =>
      row.original.disabled_at ? (
        <Badge tone="red">disabled {formatDate(row.original.disabled_at)}</Badge>
      ) : (
        <Badge tone="green">active</Badge>
      ),
  },
];

type RoleChange = { user: UserRecord; role: UserRole; organizationId: string };
type RoleInput = { id: string; role: UserRole; organizationId: string | null };
type Changed = { id: string; email: string; role: UserRole };

/**
 * Every user; an active user other than the signed-in admin can be given another role or be
 * disabled, after a confirmation. Both end every session the user has open.
 */
export function UsersTable({
  users,
  empty,
  organizations,
  selfId,
  disableUser,
  changeRole,
}: {
  users: UserRecord[];
  empty: string;
  organizations: OrganizationChoice[];
  selfId: string;
  disableUser: AdminAction<{ id: string }, { id: string; email: string }>;
  changeRole: AdminAction<RoleInput, Changed>;
}) {
  const disable = useConfirmedAction<UserRecord, { id: string }, { id: string; email: string }>(disableUser);
  const change = useConfirmedAction<RoleChange, RoleInput, Changed>(changeRole);
  const columns: ColumnDef<UserRecord, unknown>[] = [
    ...COLUMNS,
    {
      id: "actions",
      header: () => <TableSrOnly>Actions</TableSrOnly>,
      cell: ({ row }) =>
        row.original.disabled_at || row.original.id === selfId ? null : (
          <span className="flex gap-2">
            <ConfirmTrigger
              control={change}
              target={{
                user: row.original,
                role: row.original.role,
                organizationId: row.original.organization_id ?? "",
              }}
              label="Change role"
              name={`Change the role of ${row.original.email}`}
            />
            <ConfirmTrigger
              control={disable}
              target={row.original}
              label="Disable"
              name={`Disable ${row.original.email}`}
            />
          </span>
        ),
    },
  ];
  return (
    <div className="space-y-3">
      <div aria-live="polite">
        {disable.done ? (
          <Alert kind="success">
            <span className="font-semibold">{disable.done.email}</span> is disabled: they cannot sign in, and every
            session they had open has ended.
          </Alert>
        ) : null}
        {change.done ? (
          <Alert kind="success">
            <span className="font-semibold">{change.done.email}</span> is now {change.done.role}: every session they had
            open has ended, and they sign in again under the new role.
          </Alert>
        ) : null}
      </div>
      <DataTable caption="Users" data={users} columns={columns} rowId={(u) => u.id} empty={empty} />
      <ConfirmDialog
        control={disable}
        title="Disable this user?"
        confirmLabel="Disable user"
        pendingLabel="Disabling…"
        failureTitle="The user was not disabled"
        input={(u) => ({ id: u.id })}
      >
        {(target) => (
          <p>
            <span className="font-semibold text-slate-900">{target.email}</span> can no longer sign in, and every
            session they have open ends at once.
          </p>
        )}
      </ConfirmDialog>
      <ConfirmDialog
        control={change}
        title="Change this user's role?"
        confirmLabel="Change role"
        pendingLabel="Changing…"
        failureTitle="The role was not changed"
        input={(c) => ({ id: c.user.id, role: c.role, organizationId: c.organizationId || null })}
      >
        {(changing) => (
          <>
            <p>
              Every session <span className="font-semibold text-slate-900">{changing.user.email}</span> has open ends at
              once; they sign in again under the new role.
            </p>
            <Field label="Role" htmlFor="change-role" hint={ROLES.find((r) => r.value === changing.role)?.hint}>
              <Select
                id="change-role"
                value={changing.role}
                onChange={(e) => change.update({ ...changing, role: e.target.value as UserRole })}
              >
                <RoleOptions />
              </Select>
            </Field>
            <Field
              label={changing.role === "licensee" ? "Organisation" : "Organisation (optional)"}
              htmlFor="change-organization"
            >
              <Select
                id="change-organization"
                value={changing.organizationId}
                onChange={(e) => change.update({ ...changing, organizationId: e.target.value })}
              >
                <OrganizationOptions organizations={organizations} none={noOrganization(changing.role)} />
              </Select>
            </Field>
          </>
        )}
      </ConfirmDialog>
    </div>
  );
}
