"use client";

import { useEffect, useRef, useState, type FormEvent } from "react";
import { Button } from "../ui/button";
import { CopyButton } from "../ui/copy-button";
import { Field, Input } from "../ui/form";
import { ActionError } from "./action-error";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { OrganizationOptions, type OrganizationChoice } from "./user-form";
import { useAdminAction, type AdminAction } from "./use-admin-action";
import { Select } from "../ui/form";

export type AddedWebhookView = { id: string; url: string; description: string | null; secret: string };
type NewWebhook = { organizationId: string; url: string; description?: string };

const ORDER = ["webhook-organization", "webhook-url", "webhook-description"];

/**
 * Registers a webhook endpoint for an organisation. Its signing secret comes back in the action's
 * answer only and is shown once, as das-admin webhook add prints it: gone once dismissed or reloaded.
 */
export function WebhookAddForm({
  organizations,
  defaultOrganizationId = "",
  add: addAction,
}: {
  organizations: OrganizationChoice[];
  defaultOrganizationId?: string;
  add: AdminAction<NewWebhook, AddedWebhookView>;
}) {
  const [organizationId, setOrganizationId] = useState(defaultOrganizationId);
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const add = useAdminAction(addAction, () => {
    setUrl("");
    setDescription("");
  });
  const resetRef = useRef(add.reset);
  resetRef.current = add.reset;
  useEffect(() => () => resetRef.current(), []);
  const added = add.result && !add.isPending ? add.result : undefined;
  if (added) {
    const org = organizations.find((o) => o.id === organizationId);
    return (
      <SecretShownOnce
        added={added}
        organization={org ? `${org.name} (${org.slug})` : organizationId}
        onDone={() => {
          add.reset();
          requestAnimationFrame(() => document.getElementById("webhook-url")?.focus());
        }}
      />
    );
  }
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (!organizationId) found["webhook-organization"] = "Choose the organisation whose notices it receives.";
    if (!url.trim()) found["webhook-url"] = "The https:// address notices are posted to.";
    else if (!/^https?:\/\/\S+$/i.test(url.trim())) found["webhook-url"] = "An http:// or https:// address.";
    if (description.trim().length > 200) found["webhook-description"] = "At most 200 characters.";
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(ORDER, found);
    add.mutate({ organizationId, url: url.trim(), description: description.trim() || undefined });
  };
  return (
    <form onSubmit={submit} noValidate className="space-y-5">
      <div className="grid gap-4 sm:grid-cols-2">
        <Field label="Organisation" htmlFor="webhook-organization" error={errors["webhook-organization"]}>
          <Select
            {...invalidProps("webhook-organization", errors)}
            value={organizationId}
            onChange={(e) => setOrganizationId(e.target.value)}
          >
            <OrganizationOptions organizations={organizations} none="Choose an organisation…" />
          </Select>
        </Field>
        <Field
          label="URL"
          htmlFor="webhook-url"
          error={errors["webhook-url"]}
          hint="Must resolve to a public address. Each notice is posted here, signed (Standard Webhooks)."
        >
          <Input
            {...invalidProps("webhook-url", errors)}
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            type="url"
            inputMode="url"
            autoComplete="off"
            spellCheck={false}
            placeholder="https://hooks.example.com/das-notices"
          />
        </Field>
      </div>
      <Field
        label="Description (optional)"
        htmlFor="webhook-description"
        error={errors["webhook-description"]}
        hint="Who runs it, so it can be recognised later."
      >
        <Input
          {...invalidProps("webhook-description", errors)}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          maxLength={200}
          autoComplete="off"
        />
      </Field>
      <Button type="submit" disabled={add.isPending} aria-busy={add.isPending || undefined}>
        {add.isPending ? "Adding…" : "Add endpoint"}
      </Button>
      <div aria-live="polite">
        {add.failure ? <ActionError title="The endpoint was not added" failure={add.failure} /> : null}
      </div>
    </form>
  );
}

function SecretShownOnce({
  added,
  organization,
  onDone,
}: {
  added: AddedWebhookView;
  organization: string;
  onDone: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section
      aria-labelledby="webhook-added-heading"
      className="rounded-lg bg-emerald-50 p-4 ring-1 ring-inset ring-emerald-300 sm:p-5"
    >
      <h3
        id="webhook-added-heading"
        ref={heading}
        tabIndex={-1}
        className="text-base font-semibold text-emerald-950 focus:outline-none"
      >
        Endpoint added for {organization}
      </h3>
      <p className="mt-1 font-mono text-xs text-emerald-950 wrap-anywhere">{added.url}</p>
      <p className="mt-2 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-inset ring-amber-300">
        <strong className="font-semibold">Copy the signing secret now: you will not see it again.</strong> The receiver
        verifies each delivery&apos;s webhook-signature with it. If it is lost, remove the endpoint and add it again.
      </p>
      <div className="mt-3 flex flex-col gap-2 sm:flex-row sm:items-center">
        <code
          aria-label="Webhook signing secret"
          className="block min-w-0 flex-1 break-all rounded-md bg-white px-3 py-2.5 font-mono text-sm text-slate-900 ring-1 ring-inset ring-emerald-300 select-all"
        >
          {added.secret}
        </code>
        <CopyButton value={added.secret} label="Copy secret" />
      </div>
      <p className="mt-2 text-xs text-emerald-900">
        Endpoint id <span className="font-mono">{added.id}</span>
      </p>
      <div className="mt-4">
        <Button onClick={onDone}>I have stored the secret</Button>
      </div>
    </section>
  );
}
