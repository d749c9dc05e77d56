import Link from "next/link";
import type { AuditRecord } from "@/lib/admin/list-audit";
import { Badge } from "../ui/badge";
import { Card, CardHeader } from "../ui/card";
import { formatDateTime } from "../ui/format";
import { auditAction } from "./audit-labels";

/** The latest admin audit entries as a compact card, linking to the full trail. */
export function RecentActivity({ entries }: { entries: AuditRecord[] }) {
  return (
    <Card>
      <CardHeader
        title="Recent admin activity"
        description="Every change made here or with das-admin, with who made it and when."
        actions={
          <Link href="/admin/audit" className="text-sm font-medium text-brand-700 hover:underline">
            Full audit trail →
          </Link>
        }
      />
      {entries.length === 0 ? (
        <p className="px-4 py-8 text-center text-sm text-slate-500 sm:px-5">No admin actions recorded yet.</p>
      ) : (
        <ol className="divide-y divide-slate-100">
          {entries.map((entry) => {
            const { label, tone } = auditAction(entry.action);
            return (
              <li key={entry.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-4 py-2.5 text-sm sm:px-5">
                <Badge tone={tone} className="w-36 justify-center">
                  {label}
                </Badge>
                <span className="min-w-0 flex-1 break-words text-slate-900 sm:truncate" title={entry.target_id}>
                  {entry.target_label}
                </span>
                <span className="text-slate-500">
                  by {entry.actor_label} ·{" "}
                  <time dateTime={entry.occurred_at} className="tabular-nums">
                    {formatDateTime(entry.occurred_at)}
                  </time>
                </span>
              </li>
            );
          })}
        </ol>
      )}
    </Card>
  );
}
