"use client";

import Link from "next/link";
import { useState, type FormEvent } from "react";
import { TERMS_TITLE_MAX } from "@/lib/admin/rules";
import { Alert } from "../ui/alert";
import { Button } from "../ui/button";
import { Field, Input, Select } from "../ui/form";
import { ActionError } from "./action-error";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { useAdminAction, type AdminAction } from "./use-admin-action";

const ORDER = ["terms-title", "terms-body"];

export type AddedTerms = { sha256: string; title: string; dataset_id: string | null; created: boolean };

/**
 * Adds a terms document. The text is sent exactly as typed: its SHA-256 is its identity, so
 * nothing here trims or rewrites it. A document never changes; a new wording is a new document.
 */
export function TermsForm({
  datasets,
  addTerms,
}: {
  datasets: { id: string; title: string }[];
  addTerms: AdminAction<{ title: string; body: string; datasetId: string | null }, AddedTerms>;
}) {
  const [title, setTitle] = useState("");
  const [datasetId, setDatasetId] = useState("");
  const [body, setBody] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const add = useAdminAction(addTerms, () => {
    setTitle("");
    setBody("");
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (!title.trim()) found["terms-title"] = "Give the terms a title.";
    if (!body.trim()) found["terms-body"] = "Write or paste the terms' text.";
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(ORDER, found);
    add.mutate({ title: title.trim(), body, datasetId: datasetId || null });
  };
  const added = add.result && !add.isPending ? add.result : undefined;
  return (
    <form onSubmit={submit} noValidate className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2">
        <Field label="Title" htmlFor="terms-title" error={errors["terms-title"]}>
          <Input
            {...invalidProps("terms-title", errors)}
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            maxLength={TERMS_TITLE_MAX}
            autoComplete="off"
            required
          />
        </Field>
        <Field
          label="Applies to"
          htmlFor="terms-dataset"
          hint="Requests for a dataset are made under its own newest terms, or else the newest global ones."
        >
          <Select id="terms-dataset" value={datasetId} onChange={(e) => setDatasetId(e.target.value)}>
            <option value="">Every dataset (global)</option>
            {datasets.map((d) => (
              <option key={d.id} value={d.id}>
                {d.title} ({d.id})
              </option>
            ))}
          </Select>
        </Field>
      </div>
      <Field
        label="Text (Markdown)"
        htmlFor="terms-body"
        error={errors["terms-body"]}
        hint="Kept byte for byte and identified by its SHA-256. Shown as Markdown without any HTML."
      >
        <textarea
          {...invalidProps("terms-body", errors)}
          value={body}
          onChange={(e) => setBody(e.target.value)}
          rows={12}
          spellCheck
          className="block w-full rounded-md border-0 bg-white px-3 py-2 font-mono text-sm text-slate-900 shadow-sm ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-inset focus:ring-brand-600"
        />
      </Field>
      <Button type="submit" disabled={add.isPending} aria-busy={add.isPending || undefined}>
        {add.isPending ? "Adding…" : "Add terms"}
      </Button>
      <div aria-live="polite">
        {add.failure ? <ActionError title="The terms were not added" failure={add.failure} /> : null}
        {added ? (
          <Alert kind="success">
            {added.created ? "Added" : "Already there:"}{" "}
            <Link className="font-semibold underline" href={`/admin/terms/${added.sha256}`}>
              {added.title}
            </Link>{" "}
            <span className="font-mono text-xs wrap-anywhere">{added.sha256}</span>
          </Alert>
        ) : null}
      </div>
    </form>
  );
}
