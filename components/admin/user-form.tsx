"use client";

import { useState, type FormEvent } from "react";
import { EMAIL_PATTERN, MIN_PASSWORD_LENGTH } from "@/lib/admin/rules";
import type { UserRole } from "@/lib/db/schema";
import { Alert } from "../ui/alert";
import { Button } from "../ui/button";
import { Field, Input, Select } from "../ui/form";
import { ActionError } from "./action-error";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { useAdminAction, type AdminAction } from "./use-admin-action";

export type OrganizationChoice = { id: string; slug: string; name: string };

export const ROLES = [
  {
    value: "licensee",
    label: "Licensee",
    hint: "Member of an organisation: browses and downloads its licensed datasets.",
  },
  { value: "reviewer", label: "Reviewer", hint: "Rights reviewer: reads and exports the disclosure log." },
  { value: "admin", label: "Admin", hint: "Manages organisations, users, licences and keys, and reads the log." },
] as const satisfies readonly { value: UserRole; label: string; hint: string }[];

/** The roles of a select, as ROLES lists them. */
export function RoleOptions() {
  return ROLES.map((r) => (
    <option key={r.value} value={r.value}>
      {r.label}
    </option>
  ));
}

/** The organisations of an admin form's select, each by name and slug, after a first option for none. */
export function OrganizationOptions({ organizations, none }: { organizations: OrganizationChoice[]; none: string }) {
  return (
    <>
      <option value="">{none}</option>
      {organizations.map((o) => (
        <option key={o.id} value={o.id}>
          {o.name} ({o.slug})
        </option>
      ))}
    </>
  );
}

/** A licensee must belong to an organisation; anyone else may belong to none. */
export const noOrganization = (role: UserRole) => (role === "licensee" ? "Choose an organisation…" : "No organisation");

const ORDER = ["user-email", "user-name", "user-role", "user-organization", "user-password"];
const EMPTY = { email: "", name: "", role: "licensee" as UserRole, organizationId: "", password: "" };

type NewUser = { email: string; name?: string; role: UserRole; organizationId: string | null; password: string };

export function UserForm({
  organizations,
  defaultOrganizationId = "",
  createUser,
}: {
  organizations: OrganizationChoice[];
  defaultOrganizationId?: string;
  createUser: AdminAction<NewUser, { id: string; email: string; role: UserRole }>;
}) {
  const [form, setForm] = useState({ ...EMPTY, organizationId: defaultOrganizationId });
  const [showPassword, setShowPassword] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useAdminAction(createUser, () =>
    setForm((now) => ({ ...EMPTY, role: now.role, organizationId: now.organizationId })),
  );
  const set = (field: keyof typeof EMPTY) => (e: { target: { value: string } }) =>
    setForm((now) => ({ ...now, [field]: e.target.value }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (!EMAIL_PATTERN.test(form.email.trim()))
      found["user-email"] = form.email ? "This is not an email address." : "Give the user's email address.";
    if (form.role === "licensee" && !form.organizationId)
      found["user-organization"] = "A licensee belongs to an organisation: choose one.";
    if (form.password.length < MIN_PASSWORD_LENGTH)
      found["user-password"] = `At least ${MIN_PASSWORD_LENGTH} characters (now ${form.password.length}).`;
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(ORDER, found);
    create.mutate({
      email: form.email.trim(),
      name: form.name.trim() || undefined,
      role: form.role,
      organizationId: form.organizationId || null,
      password: form.password,
    });
  };
  const role = ROLES.find((r) => r.value === form.role)!;
  return (
    <form onSubmit={submit} noValidate className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
        <Field label="Email" htmlFor="user-email" error={errors["user-email"]} hint="They sign in with it.">
          <Input
            {...invalidProps("user-email", errors)}
            type="email"
            value={form.email}
            onChange={set("email")}
            autoComplete="off"
            spellCheck={false}
            required
            maxLength={320}
          />
        </Field>
        <Field label="Name" htmlFor="user-name" hint="Optional." error={errors["user-name"]}>
          <Input
            {...invalidProps("user-name", errors)}
            value={form.name}
            onChange={set("name")}
            autoComplete="off"
            maxLength={200}
          />
        </Field>
        <Field label="Role" htmlFor="user-role" hint={role.hint}>
          <Select id="user-role" value={form.role} onChange={set("role")}>
            <RoleOptions />
          </Select>
        </Field>
        <Field
          label={form.role === "licensee" ? "Organisation" : "Organisation (optional)"}
          htmlFor="user-organization"
          error={errors["user-organization"]}
          hint={
            form.role === "licensee" ? "Required for licensees." : "Only a member of an organisation sees its datasets."
          }
        >
          <Select
            {...invalidProps("user-organization", errors)}
            value={form.organizationId}
            onChange={set("organizationId")}
            required={form.role === "licensee"}
          >
            <OrganizationOptions organizations={organizations} none={noOrganization(form.role)} />
          </Select>
        </Field>
        <Field
          label="Initial password"
          htmlFor="user-password"
          error={errors["user-password"]}
          hint={`At least ${MIN_PASSWORD_LENGTH} characters. Hand it over by a safe channel.`}
        >
          <Input
            {...invalidProps("user-password", errors)}
            type={showPassword ? "text" : "password"}
            value={form.password}
            onChange={set("password")}
            autoComplete="new-password"
            required
            minLength={MIN_PASSWORD_LENGTH}
            maxLength={1024}
          />
          <label className="mt-2 flex items-center gap-2 text-sm text-slate-600">
            <input
              type="checkbox"
              className="h-4 w-4 rounded border-slate-300 accent-brand-600"
              checked={showPassword}
              onChange={(e) => setShowPassword(e.target.checked)}
            />
            Show password
          </label>
        </Field>
      </div>
      <Button type="submit" disabled={create.isPending} aria-busy={create.isPending || undefined}>
        {create.isPending ? "Creating…" : "Create user"}
      </Button>
      <div aria-live="polite">
        {create.failure ? <ActionError title="The user was not created" failure={create.failure} /> : null}
        {create.result && !create.isPending ? (
          <Alert kind="success">
            Created <span className="font-semibold">{create.result.email}</span> as {create.result.role}. They can sign
            in at /login now.
          </Alert>
        ) : null}
      </div>
    </form>
  );
}
