import type { Metadata } from "next";
import { AcknowledgeForm } from "@/components/notices/acknowledge-form";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDateTime } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { pageContext, pageData } from "@/lib/http/portal";
import { listNotices } from "@/lib/notices/list-notices";
import { acknowledgeNoticeAction } from "./actions";

export const metadata: Metadata = { title: "Notices" };

const PAGE = 100;

type Notice = Awaited<ReturnType<typeof listNotices>>["notices"][number];

/**
 * The organisation's inbox: withdrawal notices, each naming its own episodes and the downloads
 * that carried them; new versions of datasets it holds an earlier version of; licences ending.
 */
export default async function NoticesPage() {
  const ctx = await pageContext("catalog", "/notices");
  const { notices } = await pageData(listNotices(ctx, { limit: PAGE }));
  return (
    <>
      <PageHeader
        title="Notices"
        description="When a contributor withdraws consent, every organisation that received their episodes is told here, through the API (GET /api/v1/notices) and das sync: delete every copy of the episodes named, then acknowledge. New versions of datasets you hold a licence for, and licences ending within 30 and 7 days, are told here too."
      />
      {notices.length === 0 ? (
        <EmptyState title="No notices">
          Nothing your organisation received has been withdrawn, and nothing else is to tell.
        </EmptyState>
      ) : (
        <ol className="space-y-4">
          {notices.map((notice) => (
            <li
              key={notice.notice_id}
              id={notice.notice_id}
              className="rounded-lg border border-slate-200 bg-white p-4"
            >
              {notice.kind === "withdrawal" ? (
                <WithdrawalNoticeItem notice={notice} />
              ) : (
                <InformationItem notice={notice} />
              )}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

function WithdrawalNoticeItem({ notice }: { notice: Extract<Notice, { kind: "withdrawal" }> }) {
  return (
    <>
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="text-sm font-semibold text-slate-900">
          {notice.episode_ids.length} episode{notice.episode_ids.length === 1 ? "" : "s"} withdrawn
        </h2>
        {notice.acknowledged_at ? (
          <Badge tone="green">Acknowledged {formatDateTime(notice.acknowledged_at)}</Badge>
        ) : (
          <Badge tone="amber">Outstanding</Badge>
        )}
        {notice.reminders > 0 && notice.last_reminded_at ? (
          <Badge tone="amber">
            Reminded {notice.reminders === 1 ? "once" : `${notice.reminders} times`}, last{" "}
            {formatDateTime(notice.last_reminded_at)}
          </Badge>
        ) : null}
        <span className="text-xs text-slate-500">
          {formatDateTime(notice.created_at)} · <span className="font-mono">{notice.notice_id}</span>
        </span>
      </div>
      <p className="mt-2 text-sm text-slate-700">
        Episodes: <span className="font-mono">{notice.episode_ids.join(", ")}</span>
      </p>
      <div className="mt-3">
        <SimpleTable
          columns={[
            { header: "Received" },
            { header: "Through" },
            { header: "Version", className: "font-mono" },
            { header: "Download", className: "font-mono" },
            { header: "Withdrawn episodes in it", className: "font-mono" },
          ]}
          rows={notice.deliveries.map((d) => ({
            key: d.download_id,
            cells: [
              formatDateTime(d.occurred_at),
              d.channel,
              `${d.dataset_id}@${d.version}`,
              d.download_id,
              d.episode_ids.join(", "),
            ],
          }))}
        />
      </div>
      {notice.acknowledged_at ? null : <AcknowledgeForm noticeId={notice.notice_id} action={acknowledgeNoticeAction} />}
    </>
  );
}

/** A notice that tells and asks for nothing: a new version, a licence ending. */
function InformationItem({ notice }: { notice: Exclude<Notice, { kind: "withdrawal" }> }) {
  const name = `${notice.dataset_id}@${notice.version}`;
  return (
    <>
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="text-sm font-semibold text-slate-900">
          {notice.kind === "new_version"
            ? `New version: ${name}`
            : `Licence ending: ${name} on ${notice.ends_at.slice(0, 10)}`}
        </h2>
        <span className="text-xs text-slate-500">
          {formatDateTime(notice.created_at)} · <span className="font-mono">{notice.notice_id}</span>
        </span>
      </div>
      <p className="mt-2 text-sm text-slate-700">
        {notice.kind === "new_version"
          ? `Version ${notice.version} of ${notice.dataset_id} was released on ${notice.released_at.slice(0, 10)}. Your organisation holds a licence for ${notice.licensed_versions.join(", ")}: request access to the new version from its dataset's page, or ask your administrator.`
          : `Your organisation's licence to ${name} ends at ${formatDateTime(notice.ends_at)} (the ${notice.days_before}-day warning). After that its episodes and files are no longer available to you: ask your administrator to extend it if you need them.`}
      </p>
    </>
  );
}
