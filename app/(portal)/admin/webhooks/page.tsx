import type { Metadata } from "next";
import { Badge } from "@/components/ui/badge";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDate, formatDateTime } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { SimpleTable } from "@/components/ui/simple-table";
import { listDeliveryAttempts } from "@/lib/notice-delivery/attempts";
import { listWebhookEndpoints } from "@/lib/notice-delivery/webhook-endpoints";
import { pageContext, pageData } from "@/lib/http/portal";

export const metadata: Metadata = { title: "Webhooks" };

const ATTEMPTS_SHOWN = 100;

export default async function WebhooksPage() {
  const ctx = await pageContext("admin", "/admin/webhooks");
  const [endpoints, attempts] = await Promise.all([
    pageData(listWebhookEndpoints(ctx)),
    pageData(listDeliveryAttempts(ctx, { limit: ATTEMPTS_SHOWN })),
  ]);
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Where organisations' notices are delivered beyond the portal and the API, and every delivery attempt by webhook or email. Endpoints are registered with das-admin webhook add, which shows the signing secret once."
      />
      <div className="space-y-6">
        <Card>
          <CardHeader title="Endpoints" description="Active endpoints; signing secrets are never shown again." />
          <CardBody>
            {endpoints.length ? (
              <SimpleTable
                columns={[
                  { header: "Organisation" },
                  { header: "URL", className: "break-all font-mono text-xs" },
                  { header: "Description" },
                  { header: "Added", className: "whitespace-nowrap" },
                  { header: "Id", className: "font-mono text-xs" },
                ]}
                rows={endpoints.map((e) => ({
                  key: e.id,
                  cells: [e.organization_slug, e.url, e.description ?? "—", formatDate(e.created_at), e.id],
                }))}
              />
            ) : (
              <EmptyState title="No webhook endpoints">
                das-admin webhook add --org SLUG URL registers one and prints its signing secret.
              </EmptyState>
            )}
          </CardBody>
        </Card>
        <Card>
          <CardHeader
            title="Delivery attempts"
            description={`The latest ${ATTEMPTS_SHOWN}, newest first. A failed attempt is tried again with growing delays for up to about three days.`}
          />
          <CardBody>
            {attempts.length ? (
              <SimpleTable
                columns={[
                  { header: "Time", className: "whitespace-nowrap" },
                  { header: "Channel" },
                  { header: "Organisation" },
                  { header: "To", className: "break-all font-mono text-xs" },
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
              <EmptyState title="No delivery attempts yet" />
            )}
          </CardBody>
        </Card>
      </div>
    </>
  );
}
