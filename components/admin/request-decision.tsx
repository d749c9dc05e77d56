"use client";

import { useState, type FormEvent } from "react";
import { REJECTION_REASON_MAX } from "@/lib/admin/rules";
import { Button } from "../ui/button";
import { Field, Input } from "../ui/form";
import { ActionError } from "./action-error";
import { DayField } from "./day-field";
import { focusFirstError, invalidProps, type FieldErrors } from "./field-errors";
import { useAdminAction, type AdminAction } from "./use-admin-action";

export type ApproveRequest = AdminAction<
  { id: string; startsAt: string | null; endsAt: string | null },
  { id: string; licence_id: string }
>;
export type RejectRequest = AdminAction<{ id: string; reason: string }, { id: string }>;

/**
 * An admin's decision on one pending request: approve with the licence's term (from a UTC day,
 * default now; until a UTC day included, default no end), or reject with a reason the requester reads.
 */
export function RequestDecision({
  id,
  approve,
  reject,
}: {
  id: string;
  approve: ApproveRequest;
  reject: RejectRequest;
}) {
  const [from, setFrom] = useState("");
  const [until, setUntil] = useState("");
  const [reason, setReason] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const approving = useAdminAction(approve);
  const rejecting = useAdminAction(reject);
  const field = (name: string) => `${name}-${id}`;
  const onApprove = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (from && until && until < from) found[field("until")] = "The licence must end after it starts.";
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError([field("until")], found);
    approving.mutate({ id, startsAt: from || null, endsAt: until || null });
  };
  const onReject = (e: FormEvent) => {
    e.preventDefault();
    const found: FieldErrors = {};
    if (!reason.trim()) found[field("reason")] = "Say why: the requester reads it.";
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError([field("reason")], found);
    rejecting.mutate({ id, reason });
  };
  const busy = approving.isPending || rejecting.isPending;
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <form onSubmit={onApprove} noValidate className="space-y-3" aria-label={`Approve request ${id}`}>
        <div className="grid grid-cols-2 gap-3">
          <Field label="From" htmlFor={field("from")} hint="Empty: now">
            <Input id={field("from")} type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
          </Field>
          <DayField
            id={field("until")}
            label="Until (included)"
            hint="Empty: no end"
            errors={errors}
            value={until}
            onChange={setUntil}
          />
        </div>
        <Button type="submit" size="sm" disabled={busy} aria-busy={approving.isPending || undefined}>
          {approving.isPending ? "Approving…" : "Approve and grant licence"}
        </Button>
        {approving.failure ? <ActionError title="The request was not approved" failure={approving.failure} /> : null}
      </form>
      <form onSubmit={onReject} noValidate className="space-y-3" aria-label={`Reject request ${id}`}>
        <Field label="Reason for rejecting" htmlFor={field("reason")} error={errors[field("reason")]}>
          <Input
            {...invalidProps(field("reason"), errors)}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={REJECTION_REASON_MAX}
          />
        </Field>
        <Button type="submit" size="sm" variant="danger" disabled={busy} aria-busy={rejecting.isPending || undefined}>
          {rejecting.isPending ? "Rejecting…" : "Reject"}
        </Button>
        {rejecting.failure ? <ActionError title="The request was not rejected" failure={rejecting.failure} /> : null}
      </form>
    </div>
  );
}
