import type { Metadata } from "next";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDateTime } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { pageContext, pageData } from "@/lib/http/portal";
import {
  reviewWithdrawals,
  type ChannelDelivery,
  type RecipientChannels,
  type WebhookDelivery,
} from "@/lib/withdrawals/review";

export const metadata: Metadata = { title: "Withdrawals" };

const LATEST = 50;

/** Per withdrawal: every organisation notified, when, and whether it acknowledged or is outstanding. */
export default async function WithdrawalsPage() {
  const ctx = await pageContext("review", "/review/withdrawals");
  const withdrawals = await pageData(reviewWithdrawals(ctx, { limit: LATEST }));
  return (
    <>
      <PageHeader
        title="Withdrawals"
        description="Episodes withdrawn (Admin → Withdraw or das-admin withdraw), newest first, and every organisation that received any of them: when it was notified, how the notice reached it (inbox, webhook, email), whether it acknowledged what it deleted or is still outstanding, and the reminders sent while it was (every NOTICE_REMINDER_DAYS days)."
      />
      {withdrawals.length === 0 ? (
        <EmptyState title="No withdrawals">No episode has been withdrawn.</EmptyState>
      ) : (
        <ol className="space-y-6">
          {withdrawals.map((w) => {
            const outstanding = w.recipients.filter((r) => !r.acknowledged_at).length;
            return (
              <li key={w.withdrawal_id} id={w.withdrawal_id}>
                <h2 className="text-sm font-semibold text-slate-900">
                  {w.contributor ? `Contributor ${w.contributor}` : "Named episodes"}: {w.episodes} episode
                  {w.episodes === 1 ? "" : "s"}, {formatDateTime(w.withdrawn_at)} by {w.withdrawn_by}
                </h2>
                <p className="mb-2 text-sm text-slate-600">
                  {w.reason} · <span className="font-mono">{w.withdrawal_id}</span> · {w.recipients.length} recipient
                  {w.recipients.length === 1 ? "" : "s"}, {outstanding} outstanding
                </p>
                {w.recipients.length === 0 ? (
                  <p className="text-sm text-slate-500">No organisation had received these episodes.</p>
                ) : (
                  <SimpleTable
                    columns={[
                      { header: "Organisation" },
                      { header: "Notified" },
                      { header: "Episodes" },
                      { header: "Deliveries" },
                      { header: "Reached by", className: "min-w-56" },
                      { header: "Acknowledged" },
                      { header: "Reminders" },
                      { header: "Statement" },
                    ]}
                    rows={w.recipients.map((r) => ({
                      key: r.notice_id,
                      cells: [
                        r.organization_name || r.organization,
                        formatDateTime(r.notified_at),
                        r.episodes,
                        r.deliveries,
                        <Channels key="channels" channels={r.channels} />,
                        r.acknowledged_at ? (
                          <Badge key="acknowledged" tone="green">
                            {formatDateTime(r.acknowledged_at)}
                          </Badge>
                        ) : (
                          <Badge key="outstanding" tone="amber">
                            Outstanding
                          </Badge>
                        ),
                        r.reminders && r.last_reminded_at
                          ? `${r.reminders}, last ${formatDateTime(r.last_reminded_at)}`
                          : "none",
                        r.statement ? `${r.statement} (${r.deleted_paths ?? 0} paths deleted)` : "",
                      ],
                    }))}
                  />
                )}
              </li>
            );
          })}
        </ol>
      )}
    </>
  );
}

const TONE: Record<ChannelDelivery["state"], string> = {
  delivered: "text-emerald-700",
  failing: "text-red-700",
  failed: "text-red-700",
  queued: "text-amber-700",
  none: "text-slate-500",
  not_configured: "text-slate-500",
};

/** A channel's state in words, from its delivery attempts. */
function stateText(d: ChannelDelivery, sent: string): string {
  const tries = `${d.attempts} attempt${d.attempts === 1 ? "" : "s"}`;
  switch (d.state) {
    case "delivered":
      return `${sent} ${formatDateTime(d.at!)}${d.attempts > 1 ? ` (after ${tries})` : ""}`;
    case "failing":
      return `failing (${tries}${d.error ? `, ${d.error}` : ""})`;
    case "failed":
      return `failed, given up (${tries}${d.error ? `, ${d.error}` : ""})`;
    case "queued":
      return "queued, not tried yet";
    case "none":
      return "none registered";
    case "not_configured":
      return "not configured";
  }
}

const hostOf = (w: WebhookDelivery) => {
  try {
    return new URL(w.url).host;
  } catch {
    return w.url;
  }
};

/** Per channel, whether the notice reached the organisation: "webhook: delivered 12:03", "email: not configured". */
function Channels({ channels }: { channels: RecipientChannels }) {
  const line = (label: string, d: ChannelDelivery, sent: string, key: string, title?: string) => (
    <li key={key} title={title}>
      <span className="font-medium text-slate-700">{label}:</span>{" "}
      <span className={TONE[d.state]}>{stateText(d, sent)}</span>
    </li>
  );
  return (
    <ul className="space-y-0.5 text-xs">
      <li>
        <span className="font-medium text-slate-700">inbox:</span>{" "}
        <span className={TONE.delivered}>posted {formatDateTime(channels.inbox.at)}</span>
      </li>
      {channels.webhooks.length
        ? channels.webhooks.map((w) =>
            line(`webhook ${hostOf(w)}${w.removed ? " (removed)" : ""}`, w, "delivered", w.endpoint_id, w.url),
          )
        : line("webhook", { state: "none", at: null, attempts: 0, status_code: null, error: null }, "", "webhook")}
      {line("email", channels.email, "sent", "email")}
    </ul>
  );
}
