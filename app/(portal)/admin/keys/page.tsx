import type { Metadata } from "next";
import { z } from "zod";
import { AdminListSection } from "@/components/admin/admin-list-section";
import { KeyIssueForm } from "@/components/admin/key-issue-form";
import { KeysTable } from "@/components/admin/keys-table";
import { TitledCard } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { FilterBar } from "@/components/ui/filter-bar";
import { PageHeader } from "@/components/ui/page-header";
import { organizationFilter } from "@/components/admin/organization-filter";
import { KEY_STATUSES, listKeys, type KeyStatus } from "@/lib/admin/list-keys";
import { listLicences } from "@/lib/admin/list-licences";
import { listOrganizations } from "@/lib/admin/list-organizations";
import { pageContext, pageSearch, type SearchParams } from "@/lib/http/portal";
import { issueKeyAction, revokeKeyAction } from "./actions";

export const metadata: Metadata = { title: "API keys" };

const Search = z.object({ organization: z.string().optional(), status: z.string().optional() });

export default async function KeysPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const ctx = await pageContext("admin", "/admin/keys");
  const search = await pageSearch(searchParams, Search);
  const [organizations, licences] = await Promise.all([listOrganizations(ctx), listLicences(ctx)]);
  const organizationId = organizations.find((o) => o.id === search.organization)?.id;
  const status = KEY_STATUSES.find((s) => s === search.status) as KeyStatus | undefined;
  const keys = await listKeys(ctx, { organizationId, status });
  const filtered = Boolean(organizationId || status);
  const licensed = licences
    .filter((l) => !l.revoked_at)
    .map(({ organization_id, dataset_id, dataset_title, version }) => ({
      organization_id,
      dataset_id,
      dataset_title,
      version,
    }));
  return (
    <>
      <PageHeader
        title="API keys"
        description="A key lets a program use the API for one organisation, optionally narrowed to some of its licensed versions. Send it as Authorization: Bearer <key>."
      />
      <div className="space-y-6">
        <TitledCard
          title="Issue a key"
          description="The secret is shown once, right after issuing. Only a hash is stored."
        >
          <KeyIssueForm
            organizations={organizations.map(({ id, slug, name }) => ({ id, slug, name }))}
            licensed={licensed}
            defaultOrganizationId={organizationId}
            issueKey={issueKeyAction}
          />
        </TitledCard>
        <AdminListSection
          id="keys-heading"
          title={filtered ? "Matching keys" : "All keys"}
          count={keys.length}
          filtered={filtered}
          empty={
            <EmptyState title="No API keys yet">
              Issue the first one above. Its secret is shown once, right after issuing.
            </EmptyState>
          }
          filters={
            <FilterBar
              label="Filter keys"
              fields={[
                organizationFilter(organizations, organizationId),
                {
                  kind: "select",
                  name: "status",
                  label: "Status",
                  any: "Any status",
                  value: status ?? "",
                  options: KEY_STATUSES.map((s) => ({ value: s, label: s })),
                },
              ]}
            />
          }
        >
          <KeysTable keys={keys} empty="No key matches these filters." revoke={revokeKeyAction} />
        </AdminListSection>
      </div>
    </>
  );
}
