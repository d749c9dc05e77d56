import type { Metadata } from "next";
import Link from "next/link";
import { AdminListSection } from "@/components/admin/admin-list-section";
import { RequestDecision } from "@/components/admin/request-decision";
import { RequestStatus } from "@/components/datasets/request-status";
import { Card, CardBody } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDate, formatDateTime } from "@/components/ui/format";
import { LongText } from "@/components/ui/long-text";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { listAccessRequests } from "@/lib/admin/access-requests";
import { pageContext } from "@/lib/http/portal";
import { approveRequestAction, rejectRequestAction } from "./actions";

export const metadata: Metadata = { title: "Access requests" };

export default async function AccessRequestsPage() {
  const ctx = await pageContext("admin", "/admin/requests");
  const all = await listAccessRequests(ctx);
  const pending = all.filter((r) => r.status === "pending").reverse(); // oldest first: a queue
  const decided = all.filter((r) => r.status !== "pending");
  return (
    <>
      <PageHeader
        title="Access requests"
        description="Members of organisations ask for a licence to a version of a listed dataset, accepting its terms. Approving grants the licence under the accepted terms, for the term you choose; rejecting sends the requester your reason."
      />
      <div className="space-y-6">
        <AdminListSection
          id="pending-heading"
          title="Waiting for a decision"
          count={pending.length}
          empty={<EmptyState title="No pending requests">Requests appear here as members make them.</EmptyState>}
        >
          <ol className="space-y-4">
            {pending.map((r) => (
              <li key={r.id} id={r.id}>
                <Card>
                  <CardBody>
                    <div className="mb-3 flex flex-wrap items-baseline gap-x-3 gap-y-1">
                      <h3 className="font-semibold text-slate-900">
                        {r.organization_slug} asks for{" "}
                        <span className="font-mono">
                          {r.dataset_id}@{r.version}
                        </span>
                      </h3>
                      <span className="text-sm text-slate-500">
                        by {r.requested_by}, {formatDateTime(r.created_at)}
                      </span>
                    </div>
                    <dl className="mb-4 grid gap-2 text-sm sm:grid-cols-[10rem_1fr]">
                      <dt className="text-slate-500">Purpose</dt>
                      <dd className="whitespace-pre-wrap wrap-anywhere text-slate-800">{r.purpose}</dd>
                      <dt className="text-slate-500">Terms accepted</dt>
                      <dd>
                        <Link className="text-brand-700 hover:underline" href={`/admin/terms/${r.terms_sha256}`}>
                          {r.terms_title}
                        </Link>{" "}
                        <span className="font-mono text-xs text-slate-500">{r.terms_sha256.slice(0, 16)}…</span> on{" "}
                        {formatDateTime(r.accepted_at)}
                      </dd>
                    </dl>
                    <RequestDecision id={r.id} approve={approveRequestAction} reject={rejectRequestAction} />
                  </CardBody>
                </Card>
              </li>
            ))}
          </ol>
        </AdminListSection>
        <AdminListSection id="decided-heading" title="Decided" count={decided.length}>
          <SimpleTable
            columns={[
              { header: "Requested" },
              { header: "Organisation" },
              { header: "Version", className: "font-mono text-xs" },
              { header: "Status" },
              { header: "Decision" },
            ]}
            rows={decided.map((r) => ({
              key: r.id,
              cells: [
                formatDate(r.created_at),
                r.organization_slug,
                `${r.dataset_id}@${r.version}`,
                <RequestStatus key="s" status={r.status} />,
                <span key="d" className="text-sm">
                  {r.status === "approved" ? (
                    <>
                      licence <span className="font-mono text-xs">{r.licence_id}</span>
                    </>
                  ) : (
                    <LongText text={r.rejection_reason ?? ""} />
                  )}
                  <span className="block text-xs text-slate-500">
                    {r.decided_by}, {r.decided_at ? formatDateTime(r.decided_at) : ""}
                  </span>
                </span>,
              ],
            }))}
          />
        </AdminListSection>
      </div>
    </>
  );
}
