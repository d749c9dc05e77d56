"use client";

import { useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { KEY_EXPIRY_DAYS, KEY_NAME_MAX } from "@/lib/admin/rules";
import { Alert } from "../ui/alert";
import { Button } from "../ui/button";
import { Field, Input, Select } from "../ui/form";
import { formatDate } from "../ui/format";
import { ActionError } from "./action-error";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { IssuedSecret, type IssuedKeyView } from "./issued-secret";
import { OrganizationOptions, type OrganizationChoice } from "./user-form";
import { useAdminAction, type AdminAction } from "./use-admin-action";

export type LicensedVersion = { organization_id: string; dataset_id: string; dataset_title: string; version: string };

const ORDER = ["key-organization", "key-name"];
const EXPIRY_LABELS: Record<string, string> = {
  never: "Never",
  7: "7 days",
  30: "30 days",
  90: "90 days",
  365: "1 year",
};
const EXPIRY_CHOICES = ["never", ...KEY_EXPIRY_DAYS.map(String)];

type NewKey = {
  organizationId: string;
  name: string;
  expiresInDays: number | null;
  scope: { datasetId: string; version: string }[];
};

export function KeyIssueForm({
  organizations,
  licensed,
  defaultOrganizationId = "",
  issueKey,
}: {
  organizations: OrganizationChoice[];
  licensed: LicensedVersion[];
  defaultOrganizationId?: string;
  issueKey: AdminAction<NewKey, IssuedKeyView>;
}) {
  const [organizationId, setOrganizationId] = useState(defaultOrganizationId);
  const [name, setName] = useState("");
  const [expiry, setExpiry] = useState("90");
  const [scope, setScope] = useState<string[]>([]);
  const [errors, setErrors] = useState<FieldErrors>({});
  const issue = useAdminAction(issueKey, () => {
    setName("");
    setScope([]);
  });
  const resetRef = useRef(issue.reset);
  resetRef.current = issue.reset;
  // The secret lives in this component's memory only: leaving the page forgets it.
  useEffect(() => () => resetRef.current(), []);
  const choices = useMemo(
    () => licensed.filter((l) => l.organization_id === organizationId),
    [licensed, organizationId],
  );
  const issued = issue.result && !issue.isPending ? issue.result : undefined;
  if (issued) {
    const org = organizations.find((o) => o.id === organizationId);
    return (
      <IssuedSecret
        issued={issued}
        organization={org ? `${org.name} (${org.slug})` : organizationId}
        onDone={() => {
          issue.reset();
          requestAnimationFrame(() => document.getElementById("key-name")?.focus());
        }}
      />
    );
  }
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (!organizationId) found["key-organization"] = "Choose the organisation the key acts for.";
    if (!name.trim()) found["key-name"] = "Name the key after where it is used, e.g. “training cluster”.";
    else if (name.trim().length > KEY_NAME_MAX) found["key-name"] = `At most ${KEY_NAME_MAX} characters.`;
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(ORDER, found);
    issue.mutate({
      organizationId,
      name: name.trim(),
      expiresInDays: expiry === "never" ? null : Number(expiry),
      scope: scope.map((key) => {
        const [datasetId, version] = key.split("@") as [string, string];
        return { datasetId, version };
      }),
    });
  };
  const expiresOn = expiry === "never" ? null : formatDate(new Date(Date.now() + Number(expiry) * 86_400_000));
  return (
    <form onSubmit={submit} noValidate className="space-y-5">
      <div className="grid gap-4 sm:grid-cols-2">
        <Field
          label="Organisation"
          htmlFor="key-organization"
          error={errors["key-organization"]}
          hint="The key acts for this organisation and sees its licences."
        >
          <Select
            {...invalidProps("key-organization", errors)}
            value={organizationId}
            onChange={(e) => {
              setOrganizationId(e.target.value);
              setScope([]);
            }}
            required
          >
            <OrganizationOptions organizations={organizations} none="Choose an organisation…" />
          </Select>
        </Field>
        <Field
          label="Name"
          htmlFor="key-name"
          error={errors["key-name"]}
          hint="Where the key is used, so it can be recognised later."
        >
          <Input
            {...invalidProps("key-name", errors)}
            value={name}
            onChange={(e) => setName(e.target.value)}
            autoComplete="off"
            required
            maxLength={KEY_NAME_MAX}
            placeholder="e.g. training cluster"
          />
        </Field>
      </div>
      <fieldset>
        <legend className="text-sm font-medium text-slate-700">Expires</legend>
        <div className="mt-1 flex flex-wrap gap-2">
          {EXPIRY_CHOICES.map((choice) => (
            <label
              key={choice}
              className="flex cursor-pointer items-center gap-2 rounded-md px-3 py-1.5 text-sm text-slate-700 ring-1 ring-inset ring-slate-300 has-checked:bg-brand-50 has-checked:text-brand-700 has-checked:ring-brand-600 has-focus-visible:outline-2 has-focus-visible:outline-offset-2 has-focus-visible:outline-brand-600"
            >
              <input
                type="radio"
                name="key-expiry"
                value={choice}
                checked={expiry === choice}
                onChange={() => setExpiry(choice)}
                className="sr-only"
              />
              {EXPIRY_LABELS[choice]}
            </label>
          ))}
        </div>
        <p className="mt-1 text-xs text-slate-500">
          {expiresOn ? `The key stops working on ${expiresOn} (UTC).` : "The key works until it is revoked."}
        </p>
      </fieldset>
      <fieldset>
        <legend className="text-sm font-medium text-slate-700">Scope</legend>
        <p className="mt-0.5 text-xs text-slate-500">
          Leave every box clear for a key that reaches all of the organisation’s licences, including ones granted later.
          Tick versions to narrow the key to them.
        </p>
        {!organizationId ? (
          <p className="mt-2 text-sm text-slate-500">Choose an organisation to see its licensed versions.</p>
        ) : choices.length === 0 ? (
          <Alert kind="warning" className="mt-2">
            This organisation holds no licence yet, so the key will reach nothing until one is granted on the Licences
            page.
          </Alert>
        ) : (
          <div className="mt-2 grid gap-2 sm:grid-cols-2 lg:grid-cols-3">
            {choices.map((l) => {
              const key = `${l.dataset_id}@${l.version}`;
              return (
                <label
                  key={key}
                  className="flex items-start gap-2 rounded-md px-3 py-2 text-sm ring-1 ring-inset ring-slate-200 has-checked:bg-brand-50/60 has-checked:ring-brand-300"
                >
                  <input
                    type="checkbox"
                    className="mt-0.5 h-4 w-4 rounded border-slate-300 accent-brand-600"
                    checked={scope.includes(key)}
                    onChange={(e) =>
                      setScope((now) => (e.target.checked ? [...now, key] : now.filter((k) => k !== key)))
                    }
                  />
                  <span>
                    <span className="font-mono font-medium text-slate-900">{key}</span>
                    <span className="block text-xs text-slate-500">{l.dataset_title}</span>
                  </span>
                </label>
              );
            })}
          </div>
        )}
        {scope.length ? (
          <p className="mt-2 text-xs text-slate-600">
            Narrowed to {scope.length} version{scope.length === 1 ? "" : "s"}.
          </p>
        ) : null}
      </fieldset>
      <Button type="submit" disabled={issue.isPending} aria-busy={issue.isPending || undefined}>
        {issue.isPending ? "Issuing…" : "Issue key"}
      </Button>
      <div aria-live="polite">
        {issue.failure ? <ActionError title="The key was not issued" failure={issue.failure} /> : null}
      </div>
    </form>
  );
}
