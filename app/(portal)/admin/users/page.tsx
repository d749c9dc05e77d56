import type { Metadata } from "next";
import { z } from "zod";
import { AdminListSection } from "@/components/admin/admin-list-section";
import { UserForm } from "@/components/admin/user-form";
import { UsersTable } from "@/components/admin/users-table";
import { TitledCard } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { FilterBar } from "@/components/ui/filter-bar";
import { PageHeader } from "@/components/ui/page-header";
import { organizationFilter } from "@/components/admin/organization-filter";
import { listOrganizations } from "@/lib/admin/list-organizations";
import { listUsers } from "@/lib/admin/users";
import { USER_ROLES, type UserRole } from "@/lib/db/schema";
import { pageContext, pageSearch, type SearchParams } from "@/lib/http/portal";
import { changeUserRoleAction, createUserAction, disableUserAction } from "./actions";

export const metadata: Metadata = { title: "Users" };

const Search = z.object({ role: z.string().optional(), organization: z.string().optional() });

export default async function UsersPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const ctx = await pageContext("admin", "/admin/users");
  const search = await pageSearch(searchParams, Search);
  const organizations = await listOrganizations(ctx);
  // Unknown filter values (a stale link) are ignored rather than answered with an error page.
  const role = USER_ROLES.find((r) => r === search.role) as UserRole | undefined;
  const organizationId = organizations.find((o) => o.id === search.organization)?.id;
  const users = await listUsers(ctx, { role, organizationId });
  const filtered = Boolean(role || organizationId);
  const choices = organizations.map(({ id, slug, name }) => ({ id, slug, name }));
  return (
    <>
      <PageHeader
        title="Users"
        description="People who sign in to the portal. A licensee sees their organisation's licensed datasets; reviewers read the disclosure log; admins manage everything here."
      />
      <div className="space-y-6">
        <TitledCard
          title="Create a user"
          description="The user signs in with this email and password. Changing a user's role or disabling them below ends every session they have open."
        >
          <UserForm organizations={choices} defaultOrganizationId={organizationId} createUser={createUserAction} />
        </TitledCard>
        <AdminListSection
          id="users-heading"
          title={filtered ? "Matching users" : "All users"}
          count={users.length}
          filtered={filtered}
          empty={<EmptyState title="No users yet">Create the first one above.</EmptyState>}
          filters={
            <FilterBar
              label="Filter users"
              fields={[
                {
                  kind: "select",
                  name: "role",
                  label: "Role",
                  any: "Any role",
                  value: role ?? "",
                  options: USER_ROLES.map((r) => ({ value: r, label: r })),
                },
                organizationFilter(organizations, organizationId),
              ]}
            />
          }
        >
          <UsersTable
            users={users}
            empty="No user matches these filters."
            organizations={choices}
            selfId={ctx.principal.userId}
            disableUser={disableUserAction}
            changeRole={changeUserRoleAction}
          />
        </AdminListSection>
      </div>
    </>
  );
}
