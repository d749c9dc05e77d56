import type { Metadata } from "next";
import { z } from "zod";
import { LicenceEndForm } from "@/components/admin/licence-end-form";
import { LicenceGrantForm } from "@/components/admin/licence-grant-form";
import { LicencesTables } from "@/components/admin/licences-tables";
import { TitledCard } from "@/components/ui/card";
import { FilterBar } from "@/components/ui/filter-bar";
import { PageHeader } from "@/components/ui/page-header";
import { organizationFilter } from "@/components/admin/organization-filter";
import { listLicences, listVersionChoices } from "@/lib/admin/list-licences";
import { listOrganizations } from "@/lib/admin/list-organizations";
import { listTerms } from "@/lib/admin/terms";
import { pageContext, pageSearch, type SearchParams } from "@/lib/http/portal";
import { endLicenceAction, grantLicenceAction, revokeLicenceAction } from "./actions";

export const metadata: Metadata = { title: "Licences" };

const Search = z.object({ organization: z.string().optional() });

export default async function LicencesPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const ctx = await pageContext("admin", "/admin/licences");
  const { organization: wanted } = await pageSearch(searchParams, Search);
  const [organizations, versions, all, terms] = await Promise.all([
    listOrganizations(ctx),
    listVersionChoices(ctx),
    listLicences(ctx),
    listTerms(ctx),
  ]);
  const organizationId = organizations.find((o) => o.id === wanted)?.id;
  const shown = organizationId ? all.filter((l) => l.organization_id === organizationId) : all;
  const held = all.filter((l) => !l.revoked_at).map((l) => `${l.organization_id} ${l.dataset_id}@${l.version}`);
  return (
    <>
      <PageHeader
        title="Licences"
        description="A licence gives one organisation one dataset version for a term, under the terms it was granted with. Grant, end and revoke take effect on the next request, in the portal and the API alike."
      />
      <div className="space-y-6">
        <TitledCard
          title="Grant a licence"
          description="The organisation's members and API keys can list, read and download the version from its first day to its last."
        >
          <LicenceGrantForm
            organizations={organizations.map(({ id, slug, name }) => ({ id, slug, name }))}
            versions={versions}
            held={held}
            defaultOrganizationId={organizationId}
            terms={terms.map(({ sha256, title, dataset_id }) => ({ sha256, title, dataset_id }))}
            grantLicence={grantLicenceAction}
          />
        </TitledCard>
        <TitledCard
          title="End early or extend"
          description="A licence stops being usable after its last day, in the portal and the API at the same moment, with nothing to run. Every change is audited with the end it replaced."
        >
          <LicenceEndForm licences={all.filter((l) => !l.revoked_at)} endLicence={endLicenceAction} />
        </TitledCard>
        <LicencesTables
          licences={shown}
          filtered={Boolean(organizationId)}
          revoke={revokeLicenceAction}
          filters={<FilterBar label="Filter licences" fields={[organizationFilter(organizations, organizationId)]} />}
        />
      </div>
    </>
  );
}
