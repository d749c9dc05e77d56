import type { Metadata } from "next";
import Link from "next/link";
import { RequestStatus } from "@/components/datasets/request-status";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDate, formatDateTime } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { listOwnRequests } from "@/lib/catalog/access-requests";
import { pageContext } from "@/lib/http/portal";

export const metadata: Metadata = { title: "Requests" };

/** The access requests of the member's organisation, with each decision and a rejection's reason. */
export default async function RequestsPage() {
  const ctx = await pageContext("catalog", "/requests");
  const requests = await listOwnRequests(ctx);
  return (
    <>
      <PageHeader
        title="Requests"
        description="Your organisation's requests for licences, newest first. An approved request is a licence: its version is in your datasets from the day it starts."
      />
      {requests.length === 0 ? (
        <EmptyState title="No requests yet">
          Listed datasets your organisation holds no licence for are at the end of{" "}
          <Link className="font-medium text-brand-700 underline" href="/datasets">
            Datasets
          </Link>
          ; request one from its page.
        </EmptyState>
      ) : (
        <SimpleTable
          columns={[
            { header: "Requested" },
            { header: "Version" },
            { header: "By" },
            { header: "Purpose" },
            { header: "Status" },
            { header: "Decision" },
          ]}
          rows={requests.map((r) => ({
            key: r.id,
            id: r.id,
            cells: [
              formatDate(r.created_at),
              <Link
                key="v"
                className="font-mono text-xs text-brand-700 hover:underline"
                href={`/datasets/${r.dataset_id}`}
              >
                {r.dataset_id}@{r.version}
              </Link>,
              r.requested_by,
              <span key="p" className="block max-w-xs whitespace-pre-wrap wrap-anywhere">
                {r.purpose}
              </span>,
              <RequestStatus key="s" status={r.status} />,
              r.status === "pending" ? (
                <span key="d" className="text-slate-500">
                  waiting for an administrator
                </span>
              ) : r.status === "approved" ? (
                <span key="d">
                  Licensed {r.licence_starts_at ? `from ${formatDate(r.licence_starts_at)}` : ""}
                  {r.licence_ends_at ? ` until ${formatDateTime(r.licence_ends_at)}` : ", no end"}
                </span>
              ) : (
                <span key="d" className="block max-w-sm whitespace-pre-wrap wrap-anywhere" data-rejection-reason>
                  {r.rejection_reason}
                </span>
              ),
            ],
          }))}
        />
      )}
    </>
  );
}
