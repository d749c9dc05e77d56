"use client";

import Link from "next/link";
import { useState, type FormEvent } from "react";
import { PURPOSE_MAX } from "@/lib/admin/rules";
import { ActionError } from "../admin/action-error";
import { focusFirstError, invalidProps, type FieldErrors } from "../admin/field-errors";
import { useAdminAction, type AdminAction } from "../admin/use-admin-action";
import { Alert } from "../ui/alert";
import { Button } from "../ui/button";
import { Field, Select } from "../ui/form";

export type RequestAccess = AdminAction<
  { datasetId: string; version: string; purpose: string; termsSha256: string; accepted: true },
  { id: string }
>;

const ORDER = ["request-version", "request-purpose", "request-accept"];

/**
 * A member's request for a licence: the version, what the data is for, and the acceptance of the
 * terms shown above it. The terms' SHA-256 goes with the request, so terms changed meanwhile are
 * refused rather than accepted unread.
 */
export function AccessRequestForm({
  datasetId,
  versions,
  defaultVersion,
  termsSha256,
  termsTitle,
  requestAccess,
}: {
  datasetId: string;
  versions: string[];
  defaultVersion?: string;
  termsSha256: string;
  termsTitle: string;
  requestAccess: RequestAccess;
}) {
  const [version, setVersion] = useState(defaultVersion && versions.includes(defaultVersion) ? defaultVersion : "");
  const [purpose, setPurpose] = useState("");
  const [accepted, setAccepted] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});
  const send = useAdminAction(requestAccess);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (!version) found["request-version"] = "Choose the version you need.";
    if (!purpose.trim()) found["request-purpose"] = "Say what the data is for.";
    if (!accepted) found["request-accept"] = "A request is made under these terms: accept them to send it.";
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(ORDER, found);
    send.mutate({ datasetId, version, purpose, termsSha256, accepted: true });
  };
  if (send.result && !send.isPending)
    return (
      <Alert kind="success" title="Request sent">
        An administrator will decide on it. Follow it on{" "}
        <Link className="font-medium underline" href="/requests">
          your requests
        </Link>
        .
      </Alert>
    );
  return (
    <form onSubmit={submit} noValidate className="space-y-4">
      <Field label="Version" htmlFor="request-version" error={errors["request-version"]}>
        <Select
          {...invalidProps("request-version", errors)}
          value={version}
          onChange={(e) => setVersion(e.target.value)}
        >
          <option value="">Choose a version…</option>
          {versions.map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </Select>
      </Field>
      <Field
        label="Purpose"
        htmlFor="request-purpose"
        error={errors["request-purpose"]}
        hint="What your organisation will use the data for. The administrator reads it."
      >
        <textarea
          {...invalidProps("request-purpose", errors)}
          value={purpose}
          onChange={(e) => setPurpose(e.target.value)}
          maxLength={PURPOSE_MAX}
          rows={4}
          className="block w-full rounded-md border-0 bg-white px-3 py-2 text-sm text-slate-900 shadow-sm ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-inset focus:ring-brand-600"
        />
      </Field>
      <div>
        <label className="flex items-start gap-2 text-sm text-slate-800">
          <input
            {...invalidProps("request-accept", errors)}
            type="checkbox"
            checked={accepted}
            onChange={(e) => setAccepted(e.target.checked)}
            className="mt-1"
          />
          <span>
            I accept <span className="font-semibold">{termsTitle}</span> on behalf of my organisation.
          </span>
        </label>
        {errors["request-accept"] ? (
          <p className="mt-1 text-sm text-red-700" id="request-accept-error">
            {errors["request-accept"]}
          </p>
        ) : null}
      </div>
      <Button type="submit" disabled={send.isPending} aria-busy={send.isPending || undefined}>
        {send.isPending ? "Sending…" : "Accept the terms and request access"}
      </Button>
      <div aria-live="polite">
        {send.failure ? <ActionError title="The request was not sent" failure={send.failure} /> : null}
      </div>
    </form>
  );
}
