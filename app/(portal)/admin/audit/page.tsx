import type { Metadata } from "next";
import { z } from "zod";
import { AuditTable } from "@/components/admin/audit-table";
import { Alert } from "@/components/ui/alert";
import { LinkButton } from "@/components/ui/button";
import { PageHeader } from "@/components/ui/page-header";
import { verifyAdminAudit } from "@/lib/admin/audit";
import { listAdminAudit } from "@/lib/admin/list-audit";
import { pageContext, pageSearch, type SearchParams } from "@/lib/http/portal";

export const metadata: Metadata = { title: "Admin audit" };

const PAGE_SIZE = 50;

// `before` comes from the page links; one that is not a position starts from the newest entries.
const Search = z.object({
  before: z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number)
    .optional()
    .catch(undefined),
});

export default async function AdminAuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const ctx = await pageContext("admin", "/admin/audit");
  const { before } = await pageSearch(searchParams, Search);
  const [page, chain] = await Promise.all([listAdminAudit(ctx, { limit: PAGE_SIZE, before }), verifyAdminAudit(ctx)]);
  return (
    <>
      <PageHeader
        title="Admin audit"
        description="Every administrative change — organisations, users, licences and keys — with who made it and when, newest first. Changes made with das-admin at the command line are marked CLI."
      />
      {chain.ok ? null : (
        <Alert kind="error" className="mb-4" title={`The audit's hash chain breaks at entry ${chain.broken_at_seq}`}>
          {`${chain.reason}: an entry was changed or removed behind the database's append-only rule. The ${chain.entries} entries before it verify.`}
        </Alert>
      )}
      <AuditTable entries={page.entries} empty={before ? "No older entries." : "No admin actions recorded yet."} />
      <nav aria-label="Pages" className="mt-4 flex items-center justify-between gap-3">
        {before ? (
          <LinkButton variant="secondary" size="sm" href="/admin/audit">
            ← Newest entries
          </LinkButton>
        ) : (
          <span />
        )}
        {page.next_before ? (
          <LinkButton variant="secondary" size="sm" href={`/admin/audit?before=${page.next_before}`}>
            Older entries →
          </LinkButton>
        ) : null}
      </nav>
    </>
  );
}
