"use client";

import { useMemo, useState, type FormEvent } from "react";
import type { LicenceTarget } from "@/lib/admin/licences";
import type { VersionChoice } from "@/lib/admin/list-licences";
import { Alert } from "../ui/alert";
import { Button } from "../ui/button";
import { Field, Select } from "../ui/form";
import { formatDate, formatNumber } from "../ui/format";
import { ActionError } from "./action-error";
import { DayField } from "./day-field";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { OrganizationOptions, type OrganizationChoice } from "./user-form";
import { useAdminAction, type AdminAction } from "./use-admin-action";

const ORDER = ["licence-organization", "licence-version", "licence-starts", "licence-ends", "licence-terms"];
export const versionKey = (datasetId: string, version: string) => `${datasetId}@${version}`;

/** What the form sends: dates are UTC days (the last one included), as `das-admin licence grant` reads them. */
export type LicenceGrantInput = LicenceTarget & {
  startsAt: string | null;
  endsAt: string | null;
  termsSha256: string | null;
};

/** A terms document a licence can be granted under. */
export type TermsChoice = { sha256: string; title: string; dataset_id: string | null };

/** Grants one organisation one dataset version; versions it already holds are shown but cannot be chosen. */
export function LicenceGrantForm({
  organizations,
  versions,
  held,
  defaultOrganizationId = "",
  terms,
  grantLicence,
}: {
  organizations: OrganizationChoice[];
  versions: VersionChoice[];
  /** `organizationId dataset@version` of every active licence. */
  held: string[];
  defaultOrganizationId?: string;
  terms: TermsChoice[];
  grantLicence: AdminAction<LicenceGrantInput, LicenceTarget & { id: string; created: boolean }>;
}) {
  const [organizationId, setOrganizationId] = useState(defaultOrganizationId);
  const [target, setTarget] = useState("");
  const [startsOn, setStartsOn] = useState("");
  const [lastDay, setLastDay] = useState("");
  const [termsSha256, setTermsSha256] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const heldSet = useMemo(() => new Set(held), [held]);
  const datasets = useMemo(() => {
    const byDataset = new Map<string, VersionChoice[]>();
    for (const v of versions) byDataset.set(v.dataset_id, [...(byDataset.get(v.dataset_id) ?? []), v]);
    return [...byDataset.values()];
  }, [versions]);
  const grant = useAdminAction(grantLicence, () => {
    setTarget("");
    setLastDay("");
    setStartsOn("");
    setTermsSha256("");
  });
  // A dataset's own terms, and the global ones, are offered for its versions.
  const chosenDataset = target ? target.split("@")[0] : null;
  const termsChoices = terms.filter((t) => t.dataset_id === null || t.dataset_id === chosenDataset);
  const isHeld = (key: string) => Boolean(organizationId) && heldSet.has(`${organizationId} ${key}`);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (!organizationId) found["licence-organization"] = "Choose the organisation to license.";
    if (!target) found["licence-version"] = "Choose a dataset version.";
    else if (isHeld(target)) found["licence-version"] = "The organisation already holds this version.";
    if (startsOn && lastDay && lastDay < startsOn) found["licence-ends"] = "The last day comes on or after the first.";
    if (termsSha256 && !termsChoices.some((t) => t.sha256 === termsSha256))
      found["licence-terms"] = "These terms are for another dataset: choose again.";
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(ORDER, found);
    const [datasetId, version] = target.split("@") as [string, string];
    grant.mutate({
      organizationId,
      datasetId,
      version,
      startsAt: startsOn || null,
      endsAt: lastDay || null,
      termsSha256: termsSha256 || null,
    });
  };
  const granted = grant.result && !grant.isPending ? grant.result : undefined;
  const grantedOrg = granted && organizations.find((o) => o.id === granted.organizationId);
  return (
    <form onSubmit={submit} noValidate className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2">
        <Field label="Organisation" htmlFor="licence-organization" error={errors["licence-organization"]}>
          <Select
            {...invalidProps("licence-organization", errors)}
            value={organizationId}
            onChange={(e) => setOrganizationId(e.target.value)}
            required
          >
            <OrganizationOptions organizations={organizations} none="Choose an organisation…" />
          </Select>
        </Field>
        <Field
          label="Dataset version"
          htmlFor="licence-version"
          error={errors["licence-version"]}
          hint="A licence covers one version; newer versions need their own."
        >
          <Select
            {...invalidProps("licence-version", errors)}
            value={target}
            onChange={(e) => setTarget(e.target.value)}
            required
          >
            <option value="">Choose a dataset version…</option>
            {datasets.map((group) => (
              <optgroup key={group[0]!.dataset_id} label={`${group[0]!.dataset_title} (${group[0]!.dataset_id})`}>
                {group.map((v) => {
                  const key = versionKey(v.dataset_id, v.version);
                  return (
                    <option key={key} value={key} disabled={isHeld(key)}>
                      {v.version} · released {formatDate(v.released_at)} · {formatNumber(v.episode_count)} episodes
                      {isHeld(key) ? " · already licensed" : ""}
                    </option>
                  );
                })}
              </optgroup>
            ))}
          </Select>
        </Field>
      </div>
      <div className="grid gap-4 sm:grid-cols-3">
        <DayField
          id="licence-starts"
          label="Usable from"
          hint="A UTC day; empty: from now."
          errors={errors}
          value={startsOn}
          onChange={setStartsOn}
        />
        <DayField
          id="licence-ends"
          label="Last day"
          hint="Included, UTC; empty: no end. It ends on its own."
          errors={errors}
          value={lastDay}
          min={startsOn || undefined}
          onChange={setLastDay}
        />
        <Field
          label="Terms"
          htmlFor="licence-terms"
          error={errors["licence-terms"]}
          hint="The data-use agreement it is granted under; every file delivered names it."
        >
          <Select
            {...invalidProps("licence-terms", errors)}
            value={termsSha256}
            onChange={(e) => setTermsSha256(e.target.value)}
          >
            <option value="">No terms document</option>
            {termsChoices.map((t) => (
              <option key={t.sha256} value={t.sha256}>
                {t.title} · {t.dataset_id ?? "all datasets"} · {t.sha256.slice(0, 12)}
              </option>
            ))}
          </Select>
        </Field>
      </div>
      <Button
        type="submit"
        disabled={grant.isPending || versions.length === 0}
        aria-busy={grant.isPending || undefined}
      >
        {grant.isPending ? "Granting…" : "Grant licence"}
      </Button>
      <div aria-live="polite">
        {versions.length === 0 ? (
          <Alert kind="info">
            No dataset versions are imported yet. Import one with das-admin import, then grant it here.
          </Alert>
        ) : null}
        {grant.failure ? <ActionError title="The licence was not granted" failure={grant.failure} /> : null}
        {granted ? (
          <Alert kind="success">
            {granted.created ? "Granted" : "Already held:"}{" "}
            <span className="font-mono">{versionKey(granted.datasetId, granted.version)}</span> to{" "}
            <span className="font-semibold">{grantedOrg?.name ?? granted.organizationId}</span>. Its members and keys
            can use it within its term.
          </Alert>
        ) : null}
      </div>
    </form>
  );
}
