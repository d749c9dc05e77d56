"use client";

import Link from "next/link";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { Alert } from "../ui/alert";
import { Button } from "../ui/button";
import { Field, Input, Select } from "../ui/form";
import { formatNumber } from "../ui/format";
import { ActionError } from "./action-error";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { useAdminAction, type AdminAction } from "./use-admin-action";
import { WITHDRAWAL_REASON_MAX, withdrawalProblems, type WithdrawalInput } from "@/lib/withdrawals/withdrawal-input";

/** What the form's actions take: the withdrawal every caller of the verb parses. */
export type WithdrawalRequest = WithdrawalInput;

/** What a review shows, and (with its id) a withdrawal made; the portal's actions answer with it. */
export type WithdrawalPreviewView = {
  episodes: number;
  /** The first episode ids (up to 100), in order. */
  episode_ids: string[];
  versions: { dataset_id: string; version: string; episodes: number }[];
  /** Organisations that received any of them and will be notified. */
  notices: number;
};

export type WithdrawalDoneView = WithdrawalPreviewView & { withdrawal_id: string };

const ORDER = ["withdraw-contributor", "withdraw-dataset", "withdraw-episodes", "withdraw-reason"];
/** The form's field of each of the input's; a problem of the input as a whole is shown at the first. */
const FIELD_OF = {
  contributor: "withdraw-contributor",
  datasetId: "withdraw-dataset",
  episodeIds: "withdraw-episodes",
  reason: "withdraw-reason",
  expectedEpisodes: "withdraw-reason",
} as const;
const textarea =
  "block w-full rounded-md border-0 bg-white px-3 py-2 text-sm text-slate-900 shadow-sm ring-1 ring-inset ring-slate-300 placeholder:text-slate-400 focus:ring-2 focus:ring-inset focus:ring-brand-600";
const plural = (n: number, one: string, many = `${one}s`) => `${formatNumber(n)} ${n === 1 ? one : many}`;

/** Episode ids as an admin pastes them: separated by commas, spaces or line breaks. */
const idsOf = (text: string) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

/**
 * Withdraws a contributor's episodes or named episodes of a dataset, in two steps: "Review" runs
 * the withdrawal and rolls it back to show what it would take and whom it would notify; only the
 * confirmation commits it, and only if it still takes the number of episodes shown.
 */
export function WithdrawForm({
  datasets,
  preview: previewAction,
  withdraw: withdrawAction,
}: {
  datasets: { dataset_id: string; title: string }[];
  preview: AdminAction<WithdrawalRequest, WithdrawalPreviewView>;
  withdraw: AdminAction<WithdrawalRequest, WithdrawalDoneView>;
}) {
  const [by, setBy] = useState<"contributor" | "episodes">("contributor");
  const [contributor, setContributor] = useState("");
  const [datasetId, setDatasetId] = useState("");
  const [episodes, setEpisodes] = useState("");
  const [reason, setReason] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const [reviewed, setReviewed] = useState<WithdrawalRequest | null>(null);
  const preview = useAdminAction(previewAction, (_, input) => setReviewed(input));
  const withdraw = useAdminAction(withdrawAction, () => {
    setReviewed(null);
    setContributor("");
    setEpisodes("");
    setReason("");
  });
  const confirmHeading = useRef<HTMLHeadingElement>(null);
  const shown = reviewed && preview.result && !preview.isPending ? preview.result : undefined;
  useEffect(() => {
    if (shown) confirmHeading.current?.focus();
  }, [shown]);

  // Any change after a review asks for a new one: what is confirmed is what was shown.
  const edit =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      if (reviewed) {
        setReviewed(null);
        preview.reset();
      }
      if (withdraw.result || withdraw.failure) withdraw.reset();
    };

  const request = (): WithdrawalRequest | null => {
    const input: WithdrawalRequest =
      by === "contributor"
        ? { contributor, reason }
        : { datasetId: datasetId || undefined, episodeIds: idsOf(episodes), reason };
    const found: FieldErrors = {};
    for (const problem of withdrawalProblems(input))
      found[problem.field ? FIELD_OF[problem.field] : ORDER[0]!] ??= problem.message;
    // The form names a dataset's episodes only (the verb also takes them from any dataset).
    if (by === "episodes" && !datasetId) found["withdraw-dataset"] = "Choose the dataset the episodes belong to.";
    setErrors(found);
    if (Object.keys(found).length) {
      focusFirstError(ORDER, found);
      return null;
    }
    return input;
  };

  const review = (e: FormEvent) => {
    e.preventDefault();
    const input = request();
    if (input) {
      withdraw.reset();
      preview.mutate(input);
    }
  };

  const done = withdraw.result && !withdraw.isPending ? withdraw.result : undefined;
  return (
    <div className="space-y-5">
      <form onSubmit={review} noValidate className="space-y-5">
        <fieldset>
          <legend className="text-sm font-medium text-slate-700">Withdraw</legend>
          <div className="mt-1 flex flex-wrap gap-2">
            {(
              [
                ["contributor", "A contributor’s episodes"],
                ["episodes", "Episodes of a dataset"],
              ] as const
            ).map(([value, label]) => (
              <label
                key={value}
                className="flex cursor-pointer items-center gap-2 rounded-md px-3 py-1.5 text-sm text-slate-700 ring-1 ring-inset ring-slate-300 has-checked:bg-brand-50 has-checked:text-brand-700 has-checked:ring-brand-600 has-focus-visible:outline-2 has-focus-visible:outline-offset-2 has-focus-visible:outline-brand-600"
              >
                <input
                  type="radio"
                  name="withdraw-by"
                  value={value}
                  checked={by === value}
                  onChange={() => edit(setBy)(value)}
                  className="sr-only"
                />
                {label}
              </label>
            ))}
          </div>
        </fieldset>
        {by === "contributor" ? (
          <Field
            label="Contributor"
            htmlFor="withdraw-contributor"
            error={errors["withdraw-contributor"]}
            hint="Every episode recorded with this contributor, in every dataset and version."
          >
            <Input
              {...invalidProps("withdraw-contributor", errors)}
              value={contributor}
              onChange={(e) => edit(setContributor)(e.target.value)}
              autoComplete="off"
              maxLength={200}
              placeholder="e.g. operator-17"
            />
          </Field>
        ) : (
          <div className="grid gap-4 sm:grid-cols-[minmax(0,1fr)_minmax(0,2fr)]">
            <Field
              label="Dataset"
              htmlFor="withdraw-dataset"
              error={errors["withdraw-dataset"]}
              hint="Every id must be an episode of it; each is withdrawn from every version that holds it."
            >
              <Select
                {...invalidProps("withdraw-dataset", errors)}
                value={datasetId}
                onChange={(e) => edit(setDatasetId)(e.target.value)}
              >
                <option value="">Choose a dataset…</option>
                {datasets.map((d) => (
                  <option key={d.dataset_id} value={d.dataset_id}>
                    {d.title} ({d.dataset_id})
                  </option>
                ))}
              </Select>
            </Field>
            <Field
              label="Episode ids"
              htmlFor="withdraw-episodes"
              error={errors["withdraw-episodes"]}
              hint={
                idsOf(episodes).length
                  ? `${plural(idsOf(episodes).length, "id")}, separated by commas, spaces or lines.`
                  : "Separated by commas, spaces or lines."
              }
            >
              <textarea
                {...invalidProps("withdraw-episodes", errors)}
                value={episodes}
                onChange={(e) => edit(setEpisodes)(e.target.value)}
                rows={4}
                spellCheck={false}
                placeholder="kpp-000042, kpp-000043"
                className={`${textarea} font-mono ${invalidProps("withdraw-episodes", errors).className}`}
              />
            </Field>
          </div>
        )}
        <Field
          label="Reason"
          htmlFor="withdraw-reason"
          error={errors["withdraw-reason"]}
          hint="Kept with the withdrawal and in the admin audit. The organisations notified are not shown it."
        >
          <textarea
            {...invalidProps("withdraw-reason", errors)}
            value={reason}
            onChange={(e) => edit(setReason)(e.target.value)}
            rows={2}
            maxLength={WITHDRAWAL_REASON_MAX}
            placeholder="e.g. consent withdrawn by email of 2026-11-28"
            className={`${textarea} ${invalidProps("withdraw-reason", errors).className}`}
          />
        </Field>
        {shown ? null : (
          <Button type="submit" disabled={preview.isPending} aria-busy={preview.isPending || undefined}>
            {preview.isPending ? "Checking…" : "Review withdrawal"}
          </Button>
        )}
        <div aria-live="polite">
          {preview.failure ? <ActionError title="Nothing to withdraw" failure={preview.failure} /> : null}
        </div>
      </form>

      {shown && reviewed ? (
        <section
          aria-labelledby="withdraw-confirm-heading"
          className="rounded-lg bg-red-50/60 p-4 ring-1 ring-inset ring-red-200 sm:p-5"
        >
          <h3
            id="withdraw-confirm-heading"
            ref={confirmHeading}
            tabIndex={-1}
            className="text-base font-semibold text-red-950 focus:outline-none"
          >
            Withdraw {plural(shown.episodes, "episode")}?
          </h3>
          <dl className="mt-3 grid gap-3 text-sm text-slate-800 sm:grid-cols-3">
            <div>
              <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Episodes</dt>
              <dd className="mt-0.5 text-lg font-semibold tabular-nums">{formatNumber(shown.episodes)}</dd>
            </div>
            <div>
              <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Versions</dt>
              <dd className="mt-0.5">
                <ul className="space-y-0.5">
                  {shown.versions.map((v) => (
                    <li key={`${v.dataset_id}@${v.version}`}>
                      <span className="font-mono wrap-anywhere">
                        {v.dataset_id}@{v.version}
                      </span>{" "}
                      <span className="text-slate-500">({plural(v.episodes, "episode")})</span>
                    </li>
                  ))}
                </ul>
              </dd>
            </div>
            <div>
              <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Notified</dt>
              <dd className="mt-0.5">
                {shown.notices ? (
                  <>
                    <span className="text-lg font-semibold tabular-nums">{formatNumber(shown.notices)}</span>{" "}
                    {shown.notices === 1 ? "organisation" : "organisations"} that received them
                  </>
                ) : (
                  "Nobody: no organisation received them"
                )}
              </dd>
            </div>
          </dl>
          <details className="mt-3 text-sm">
            <summary className="cursor-pointer text-slate-700">
              {shown.episode_ids.length < shown.episodes
                ? `The first ${formatNumber(shown.episode_ids.length)} episode ids`
                : "The episode ids"}
            </summary>
            <p className="mt-1 font-mono text-xs text-slate-700 wrap-anywhere">{shown.episode_ids.join(", ")}</p>
          </details>
          <p className="mt-3 text-sm text-slate-700">
            From the moment it is committed no list, total, manifest, download or preview includes them, and each
            organisation notified finds a notice in its inbox (and at its webhooks and email) naming its own episodes.
            This cannot be undone.
          </p>
          <div className="mt-4 flex flex-col-reverse gap-2 sm:flex-row">
            <Button
              variant="secondary"
              onClick={() => {
                setReviewed(null);
                preview.reset();
              }}
              disabled={withdraw.isPending}
            >
              Change
            </Button>
            <Button
              variant="danger"
              onClick={() => withdraw.mutate({ ...reviewed, expectedEpisodes: shown.episodes })}
              disabled={withdraw.isPending}
              aria-busy={withdraw.isPending || undefined}
            >
              {withdraw.isPending ? "Withdrawing…" : `Withdraw ${plural(shown.episodes, "episode")}`}
            </Button>
          </div>
        </section>
      ) : null}

      <div aria-live="polite">
        {withdraw.failure ? <ActionError title="Nothing was withdrawn" failure={withdraw.failure} /> : null}
        {done ? (
          <Alert kind="success" title={`Withdrew ${plural(done.episodes, "episode")}`}>
            <span className="font-mono text-xs">{done.withdrawal_id}</span> from{" "}
            {done.versions.map((v) => `${v.dataset_id}@${v.version}`).join(", ")}.{" "}
            {done.notices
              ? `${plural(done.notices, "organisation")} notified.`
              : "No organisation had received them: nobody to notify."}{" "}
            <Link className="font-semibold underline" href={`/review/withdrawals#${done.withdrawal_id}`}>
              Follow up on Withdrawals
            </Link>
          </Alert>
        ) : null}
      </div>
    </div>
  );
}
