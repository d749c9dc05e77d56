"use client";

import { useId, useState } from "react";
import { ActionError } from "../admin/action-error";
import { useAdminAction, type AdminAction } from "../admin/use-admin-action";
import { Button } from "../ui/button";
import { Field } from "../ui/form";

type Input = { noticeId: string; statement: string; deletedPaths: string[] };

/** Acknowledges a notice with the organisation's statement and, one per line, the paths it deleted. */
export function AcknowledgeForm({
  noticeId,
  action,
}: {
  noticeId: string;
  action: AdminAction<Input, { acknowledgement_id: string; acknowledged_at: string }>;
}) {
  const id = useId();
  const [statement, setStatement] = useState("We deleted every copy of these episodes' files.");
  const [paths, setPaths] = useState("");
  const mutation = useAdminAction(action);
  return (
    <form
      className="mt-3 space-y-3"
      onSubmit={(event) => {
        event.preventDefault();
        mutation.mutate({
          noticeId,
          statement,
          deletedPaths: paths
            .split("\n")
            .map((p) => p.trim())
            .filter(Boolean),
        });
      }}
    >
      <Field label="What your organisation did" htmlFor={`${id}-statement`}>
        <textarea
          id={`${id}-statement`}
          className="block w-full rounded-md border-0 px-3 py-2 text-sm shadow-sm ring-1 ring-inset ring-slate-300"
          rows={2}
          value={statement}
          onChange={(e) => setStatement(e.target.value)}
          required
        />
      </Field>
      <Field
        label="Paths deleted (one per line, optional)"
        htmlFor={`${id}-paths`}
        hint="das sync fills these in itself."
      >
        <textarea
          id={`${id}-paths`}
          className="block w-full rounded-md border-0 px-3 py-2 font-mono text-xs shadow-sm ring-1 ring-inset ring-slate-300"
          rows={2}
          value={paths}
          onChange={(e) => setPaths(e.target.value)}
        />
      </Field>
      {mutation.failure ? <ActionError title="Not acknowledged" failure={mutation.failure} /> : null}
      <Button type="submit" size="sm" disabled={mutation.isPending}>
        {mutation.isPending ? "Acknowledging…" : "Acknowledge"}
      </Button>
    </form>
  );
}
