import type { Metadata } from "next";
import { AdminListSection } from "@/components/admin/admin-list-section";
import { OrganizationForm } from "@/components/admin/organization-form";
import { OrganizationsTable } from "@/components/admin/organizations-table";
import { RecentActivity } from "@/components/admin/recent-activity";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { Stat } from "@/components/ui/stat";
import { listAdminAudit } from "@/lib/admin/list-audit";
import { listOrganizations } from "@/lib/admin/list-organizations";
import { pageContext } from "@/lib/http/portal";
import { createOrganizationAction } from "./actions";

export const metadata: Metadata = { title: "Organisations" };

export default async function OrganizationsPage() {
  const ctx = await pageContext("admin", "/admin/organizations");
  const [organizations, audit] = await Promise.all([listOrganizations(ctx), listAdminAudit(ctx, { limit: 8 })]);
  const sum = (pick: (o: (typeof organizations)[number]) => number) =>
    formatNumber(organizations.reduce((n, o) => n + pick(o), 0));
  return (
    <>
      <PageHeader
        title="Organisations"
        description="Licensees are organisations: their members use the portal, their API keys use the API, and licences are granted to them per dataset version."
      />
      <dl className="mb-6 grid grid-cols-2 gap-3 lg:grid-cols-4">
        <Stat label="Organisations" value={formatNumber(organizations.length)} />
        <Stat label="Members" value={sum((o) => o.user_count)} hint="users belonging to an organisation" />
        <Stat label="Active licences" value={sum((o) => o.active_licence_count)} />
        <Stat label="Live API keys" value={sum((o) => o.live_key_count)} hint="neither revoked nor expired" />
      </dl>
      <div className="space-y-6">
        <Card>
          <CardHeader
            title="Create an organisation"
            description="The slug identifies it in the CLI and in the disclosure log."
          />
          <CardBody>
            <OrganizationForm createOrganization={createOrganizationAction} />
          </CardBody>
        </Card>
        <AdminListSection
          id="organizations-heading"
          title="All organisations"
          count={organizations.length}
          empty={
            <EmptyState title="No organisations yet">
              Create the first one above, then grant it licences and issue it keys.
            </EmptyState>
          }
        >
          <OrganizationsTable organizations={organizations} />
        </AdminListSection>
        <RecentActivity entries={audit.entries} />
      </div>
    </>
  );
}
