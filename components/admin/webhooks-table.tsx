"use client";

import type { ReactNode } from "react";
import { Alert } from "../ui/alert";
import { formatDate } from "../ui/format";
import { SimpleTable } from "../ui/simple-table";
import { ConfirmDialog, ConfirmTrigger, useConfirmedAction } from "./confirm-dialog";
import type { AdminAction } from "./use-admin-action";

export type WebhookEndpointRow = {
  id: string;
  organization_slug: string;
  url: string;
  description: string | null;
  created_at: string;
};

/**
 * The active endpoints; each can be removed after a confirmation (its attempts stay on record).
 * With none, `empty` in the table's place: rendered here rather than instead of the table, so that
 * removing the last endpoint keeps the message saying it was removed.
 */
export function WebhooksTable({
  endpoints,
  remove: removeAction,
  empty,
}: {
  endpoints: WebhookEndpointRow[];
  remove: AdminAction<{ id: string }, { id: string; url: string }>;
  empty: ReactNode;
}) {
  const remove = useConfirmedAction<WebhookEndpointRow, { id: string }, { id: string; url: string }>(removeAction);
  return (
    <div className="space-y-3">
      <div aria-live="polite">
        {remove.done ? (
          <Alert kind="success">
            <span className="font-mono wrap-anywhere">{remove.done.url}</span> is removed: nothing more is sent to it,
            and deliveries still queued for it end unsent.
          </Alert>
        ) : null}
      </div>
      {endpoints.length ? (
        <SimpleTable
          columns={[
            { header: "Organisation" },
            { header: "URL", className: "min-w-48 break-all font-mono text-xs" },
            { header: "Description" },
            { header: "Added", className: "whitespace-nowrap" },
            { header: "Id", className: "font-mono text-xs" },
            { header: "Actions", className: "text-right" },
          ]}
          rows={endpoints.map((e) => ({
            key: e.id,
            cells: [
              e.organization_slug,
              e.url,
              e.description ?? "—",
              formatDate(e.created_at),
              e.id,
              <ConfirmTrigger
                key="remove"
                control={remove}
                target={e}
                label="Remove"
                name={`Remove webhook ${e.url} of ${e.organization_slug}`}
              />,
            ],
          }))}
        />
      ) : (
        empty
      )}
      <ConfirmDialog
        control={remove}
        title="Remove this webhook endpoint?"
        confirmLabel="Remove endpoint"
        pendingLabel="Removing…"
        failureTitle="The endpoint was not removed"
        input={(e) => ({ id: e.id })}
      >
        {(target) => (
          <>
            <p>
              <span className="font-mono text-slate-900 wrap-anywhere">{target.url}</span> of {target.organization_slug}{" "}
              receives no further notices; deliveries still queued for it end unsent.
            </p>
            <p>
              Its delivery attempts stay on record. To receive notices there again, add it anew (with a new secret).
            </p>
          </>
        )}
      </ConfirmDialog>
    </div>
  );
}
