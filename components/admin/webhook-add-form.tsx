"use client";

import { useEffect, useRef, useState, type FormEvent } from "react";
import { Button } from "../ui/button";
import { Field, Input } from "../ui/form";
import { ActionError } from "./action-error";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { OrganizationOptions, type OrganizationChoice } from "./user-form";
import { useAdminAction, type AdminAction } from "./use-admin-action";
import { SecretShownOnce } from "./secret-shown-once";
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
      <AddedWebhookSecret
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

function AddedWebhookSecret({
  added,
  organization,
  onDone,
}: {
  added: AddedWebhookView;
  organization: string;
  onDone: () => void;
}) {
  return (
    <SecretShownOnce
      headingId="webhook-added-heading"
      title={<>Endpoint added for {organization}</>}
      lead={<p className="mt-1 font-mono text-xs text-emerald-950 wrap-anywhere">{added.url}</p>}
      warning={
        <>
          <strong className="font-semibold">Copy the signing secret now: you will not see it again.</strong> The
          receiver verifies each delivery&apos;s webhook-signature with it. If it is lost, remove the endpoint and add
          it again.
        </>
      }
      secret={added.secret}
      secretLabel="Webhook signing secret"
      onDone={onDone}
    >
      <p className="mt-2 text-xs text-emerald-900">
        Endpoint id <span className="font-mono">{added.id}</span>
      </p>
    </SecretShownOnce>
  );
}
