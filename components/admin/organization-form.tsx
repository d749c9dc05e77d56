"use client";

import { useState, type FormEvent } from "react";
import { SLUG_PATTERN } from "@/lib/admin/rules";
import { Alert } from "../ui/alert";
import { Button } from "../ui/button";
import { Field, Input } from "../ui/form";
import { ActionError } from "./action-error";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { useAdminAction, type AdminAction } from "./use-admin-action";

const ORDER = ["org-slug", "org-name"];

export function OrganizationForm({
  createOrganization,
}: {
  createOrganization: AdminAction<{ slug: string; name?: string }, { id: string; slug: string; name: string }>;
}) {
  const [slug, setSlug] = useState("");
  const [name, setName] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useAdminAction(createOrganization, () => {
    setSlug("");
    setName("");
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (!slug) found["org-slug"] = "Give the organisation a slug.";
    else if (!SLUG_PATTERN.test(slug))
      found["org-slug"] = "Lower-case letters, digits and inner hyphens only, at most 63 characters.";
    if (name.length > 200) found["org-name"] = "At most 200 characters.";
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(ORDER, found);
    create.mutate({ slug, name: name.trim() || undefined });
  };
  return (
    <form onSubmit={submit} noValidate className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2">
        <Field
          label="Slug"
          htmlFor="org-slug"
          hint="Used in the CLI and in logs, e.g. acme-robotics. Cannot be changed later."
          error={errors["org-slug"]}
        >
          <Input
            {...invalidProps("org-slug", errors)}
            value={slug}
            onChange={(e) => setSlug(e.target.value.trim())}
            autoComplete="off"
            spellCheck={false}
            required
            maxLength={63}
          />
        </Field>
        <Field
          label="Display name"
          htmlFor="org-name"
          hint="Optional; the slug is used when empty."
          error={errors["org-name"]}
        >
          <Input
            {...invalidProps("org-name", errors)}
            value={name}
            onChange={(e) => setName(e.target.value)}
            autoComplete="organization"
            maxLength={200}
          />
        </Field>
      </div>
      <div className="flex flex-wrap items-center gap-3">
        <Button type="submit" disabled={create.isPending} aria-busy={create.isPending || undefined}>
          {create.isPending ? "Creating…" : "Create organisation"}
        </Button>
      </div>
      <div aria-live="polite">
        {create.failure ? <ActionError title="The organisation was not created" failure={create.failure} /> : null}
        {create.result && !create.isPending ? (
          <Alert kind="success">
            Created <span className="font-semibold">{create.result.name}</span> (
            <span className="font-mono">{create.result.slug}</span>). Grant it licences, then add its users and keys.
          </Alert>
        ) : null}
      </div>
    </form>
  );
}
