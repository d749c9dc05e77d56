"use client";

import { useState, type FormEvent } from "react";
import type { LicenceTarget } from "@/lib/admin/licences";
import type { LicenceRecord } from "@/lib/admin/list-licences";
import { Alert } from "../ui/alert";
import { Button } from "../ui/button";
import { Field, Select } from "../ui/form";
import { formatDate } from "../ui/format";
import { ActionError } from "./action-error";
import { DayField } from "./day-field";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { useAdminAction, type AdminAction } from "./use-admin-action";

const ORDER = ["end-licence", "end-last-day"];

/** A licence's end is the instant it stops being usable; the day before it is its last day. */
const lastDayOf = (endsAt: string) => formatDate(new Date(Date.parse(endsAt) - 1));

export type LicenceEndInput = LicenceTarget & { endsAt: string };
export type LicenceEnded = LicenceTarget & { id: string; endsAt: string; previousEndsAt: string | null };

/**
 * Moves a held licence's end: an earlier last day ends it early, a later one extends it (an ended
 * licence too). The licence reads as unlicensed from its end on, everywhere at once; no job runs.
 */
export function LicenceEndForm({
  licences,
  endLicence,
}: {
  /** Active (not revoked) licences. */
  licences: LicenceRecord[];
  endLicence: AdminAction<LicenceEndInput, LicenceEnded>;
}) {
  const [chosen, setChosen] = useState("");
  const [lastDay, setLastDay] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const end = useAdminAction(endLicence, () => setLastDay(""));
  const licence = licences.find((l) => l.id === chosen);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (!licence) found["end-licence"] = "Choose the licence to end or extend.";
    if (!lastDay) found["end-last-day"] = "Give its new last day.";
    else if (licence && lastDay < licence.starts_at.slice(0, 10))
      found["end-last-day"] = `The last day comes on or after its first, ${formatDate(licence.starts_at)}.`;
    setErrors(found);
    if (Object.keys(found).length || !licence) return focusFirstError(ORDER, found);
    end.mutate({
      organizationId: licence.organization_id,
      datasetId: licence.dataset_id,
      version: licence.version,
      endsAt: lastDay,
    });
  };
  const ended = end.result && !end.isPending ? end.result : undefined;
  return (
    <form onSubmit={submit} noValidate className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2">
        <Field label="Licence" htmlFor="end-licence" error={errors["end-licence"]}>
          <Select {...invalidProps("end-licence", errors)} value={chosen} onChange={(e) => setChosen(e.target.value)}>
            <option value="">Choose a licence…</option>
            {licences.map((l) => (
              <option key={l.id} value={l.id}>
                {l.organization_name} · {l.dataset_id}@{l.version} ·{" "}
                {l.ends_at ? `last day ${lastDayOf(l.ends_at)}` : "no end"}
              </option>
            ))}
          </Select>
        </Field>
        <DayField
          id="end-last-day"
          label="New last day"
          hint="Included, UTC. Earlier ends it early; later extends it."
          errors={errors}
          value={lastDay}
          onChange={setLastDay}
        />
      </div>
      <Button type="submit" disabled={end.isPending || licences.length === 0} aria-busy={end.isPending || undefined}>
        {end.isPending ? "Saving…" : "Set the last day"}
      </Button>
      <div aria-live="polite">
        {end.failure ? <ActionError title="The licence's end was not changed" failure={end.failure} /> : null}
        {ended ? (
          <Alert kind="success">
            <span className="font-mono">
              {ended.datasetId}@{ended.version}
            </span>{" "}
            now has {lastDayOf(ended.endsAt)} as its last day
            {ended.previousEndsAt ? ` (it was ${lastDayOf(ended.previousEndsAt)})` : " (it had no end)"}.
          </Alert>
        ) : null}
      </div>
    </form>
  );
}
