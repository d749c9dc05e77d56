import type { Metadata } from "next";
import { z } from "zod";
import { WebhookAddForm } from "@/components/admin/webhook-add-form";
import { WebhooksTable } from "@/components/admin/webhooks-table";
import { Badge } from "@/components/ui/badge";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { FilterBar } from "@/components/ui/filter-bar";
import { formatDateTime } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { listOrganizations } from "@/lib/admin/list-organizations";
import { listDeliveryAttempts } from "@/lib/notice-delivery/attempts";
import { listWebhookEndpoints } from "@/lib/admin/webhook-endpoints";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";
import { addWebhookAction, removeWebhookAction } from "./actions";

export const metadata: Metadata = { title: "Webhooks" };

const ATTEMPTS_SHOWN = 100;
const Search = z.object({ organization: z.string().optional() });

/** Per organisation: its endpoints (added and removed here or with das-admin webhook) and every delivery attempt. */
export default async function WebhooksPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const ctx = await pageContext("admin", "/admin/webhooks");
  const search = await pageSearch(searchParams, Search);
  const organizations = await pageData(listOrganizations(ctx));
  const organization = organizations.find((o) => o.id === search.organization);
  const organizationId = organization?.id;
  const [endpoints, attempts] = await Promise.all([
    pageData(listWebhookEndpoints(ctx, { organizationId })),
    pageData(listDeliveryAttempts(ctx, { organizationId, limit: ATTEMPTS_SHOWN })),
  ]);
  const of = organization ? ` of ${organization.name}` : "";
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Where organisations' notices are delivered beyond the portal and the API, and every delivery attempt by webhook or email. The same endpoints as das-admin webhook add, list and remove."
      />
      <div className="space-y-6">
        <FilterBar
          label="Choose an organisation"
          fields={[
            {
              kind: "select",
              name: "organization",
              label: "Organisation",
              any: "Every organisation",
              value: organizationId ?? "",
              options: organizations.map((o) => ({ value: o.id, label: o.name })),
            },
          ]}
        />
        <Card>
          <CardHeader
            title="Add an endpoint"
            description="The signing secret is shown once, right after adding. Only a sealed copy is stored."
          />
          <CardBody>
            <WebhookAddForm
              organizations={organizations.map(({ id, slug, name }) => ({ id, slug, name }))}
              defaultOrganizationId={organizationId}
              add={addWebhookAction}
            />
          </CardBody>
        </Card>
        <Card>
          <CardHeader title={`Endpoints${of}`} description="Active endpoints; signing secrets are never shown again." />
          <CardBody>
            <WebhooksTable
              endpoints={endpoints.map((e) => ({
                id: e.id,
                organization_slug: e.organization_slug,
                url: e.url,
                description: e.description,
                created_at: e.created_at.toISOString(),
              }))}
              remove={removeWebhookAction}
              empty={
                <EmptyState title={`No webhook endpoints${of}`}>
                  Add one above, or with das-admin webhook add --org SLUG URL.
                </EmptyState>
              }
            />
          </CardBody>
        </Card>
        <Card>
          <CardHeader
            title={`Delivery attempts${of}`}
            description={`The latest ${ATTEMPTS_SHOWN}, newest first. A failed attempt is tried again with growing delays for up to about three days.`}
          />
          <CardBody>
            {attempts.length ? (
              <SimpleTable
                columns={[
                  { header: "Time", className: "whitespace-nowrap" },
                  { header: "Channel" },
                  { header: "Organisation" },
                  { header: "To", className: "min-w-48 break-all font-mono text-xs" },
                  { header: "Notice", className: "font-mono text-xs" },
                  { header: "Try" },
                  { header: "Result" },
                  { header: "Next try", className: "whitespace-nowrap" },
                ]}
                rows={attempts.map((a) => ({
                  key: String(a.id),
                  cells: [
                    formatDateTime(a.attempted_at),
                    a.channel,
                    a.organization_slug,
                    a.endpoint_url ?? "its users",
                    a.notice_id,
                    a.attempt,
                    a.delivered ? (
                      <Badge key="result" tone="green">
                        delivered {a.status_code ?? ""}
                      </Badge>
                    ) : (
                      <span key="result" className="text-red-700">
                        {a.error ?? "failed"}
                      </span>
                    ),
                    a.next_retry_at ? formatDateTime(a.next_retry_at) : "—",
                  ],
                }))}
              />
            ) : (
              <EmptyState title={`No delivery attempts${of} yet`} />
            )}
          </CardBody>
        </Card>
      </div>
    </>
  );
}
