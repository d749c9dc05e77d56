// das-admin webhook: the endpoints organisations' notices are posted to, and every delivery attempt.
import type { WebhookEndpointRecord } from "@/lib/admin/webhook-endpoints";
import type { DeliveryAttemptRecord } from "@/lib/notice-delivery/attempts";
import { day, printList, text } from "../listing";
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { wholeNumberFrom } from "../values";
import { organization, organizationIfGiven } from "./lookups";
import { onDatabase, verbs } from "./session";

export function addWebhookCommands(program: CliCommand): void {
  const webhook = program.group(
    "webhook",
    "Webhook endpoints that organisations' notices are posted to, and every attempt.",
  );
  addCommand(webhook);
  listCommand(webhook);
  removeCommand(webhook);
  attemptsCommand(webhook);
}

function addCommand(webhook: CliCommand): void {
  webhook
    .command("add")
    .summary("register a webhook endpoint (the signing secret alone on stdout)")
    .description(
      "Register a URL that the organisation's notices are posted to, signed per the Standard Webhooks specification. The signing secret (whsec_...) is printed alone on stdout, and only now. A URL whose host resolves to a loopback, private or link-local address is refused unless WEBHOOKS_ALLOW_PRIVATE=1. Audited.",
    )
    .requiredOption("--org <slug>", "the organisation's slug")
    .argument("<url>", "an http:// or https:// URL")
    .option("--description <text>", "what the endpoint is, for the listing")
    .examples("das-admin webhook add --org acme-robotics https://hooks.acme.example/das > whsec.txt")
    .action(
      onDatabase(async ({ ctx }, url: string, options: { org: string; description?: string }) => {
        const holder = await organization(ctx, options.org);
        const added = await verbs.addWebhookEndpoint(ctx, {
          organizationId: holder.id,
          url,
          description: options.description,
        });
        say(`Added webhook ${added.id} for ${holder.slug}: ${added.url}. Its signing secret is shown only now:`);
        process.stdout.write(`${added.secret}\n`);
      }),
    );
}

function listCommand(webhook: CliCommand): void {
  webhook
    .command("list")
    .description("list the webhook endpoints (never their secrets)")
    .option("--org <slug>", "only this organisation's")
    .option("--all", "removed endpoints too")
    .option("--json", "print JSON instead of a table")
    .examples("das-admin webhook list --org acme-robotics")
    .action(
      onDatabase(async ({ ctx }, options: { org?: string; all?: boolean; json?: boolean }) => {
        const holder = await organizationIfGiven(ctx, options.org);
        printList(await verbs.listWebhookEndpoints(ctx, { organizationId: holder?.id, includeRemoved: options.all }), {
          json: options.json,
          none: `No webhook endpoints${holder ? ` of ${holder.slug}` : ""}: das-admin webhook add --org SLUG URL registers one.`,
          columns: [
            { header: "ID", cell: (w: WebhookEndpointRecord) => w.id },
            { header: "ORGANISATION", cell: (w) => w.organization_slug },
            { header: "URL", cell: (w) => text(w.url, 60) },
            { header: "DESCRIPTION", cell: (w) => text(w.description) },
            { header: "ADDED", cell: (w) => day(w.created_at.toISOString()) },
            { header: "REMOVED", cell: (w) => day(w.removed_at?.toISOString() ?? null) },
          ],
        });
      }),
    );
}

function removeCommand(webhook: CliCommand): void {
  webhook
    .command("remove")
    .description("stop delivering to a webhook endpoint (its attempts stay listed); audited")
    .argument("<id>", "the endpoint's id (whk_...)")
    .option("--org <slug>", "refuse unless it is this organisation's")
    .examples("das-admin webhook remove whk_4fQ... --org acme-robotics")
    .action(
      onDatabase(async ({ ctx }, id: string, options: { org?: string }) => {
        const holder = await organizationIfGiven(ctx, options.org);
        const removed = await verbs.removeWebhookEndpoint(ctx, { id, organizationId: holder?.id });
        say(`Removed webhook ${removed.id} (${removed.url}).`);
      }),
    );
}

function attemptsCommand(webhook: CliCommand): void {
  webhook
    .command("attempts")
    .description("list delivery attempts of notices, webhook and email, newest first")
    .option("--org <slug>", "only to this organisation")
    .option("--endpoint <id>", "only to this webhook endpoint")
    .option("--notice <id>", "only of this notice")
    .option("--limit <n>", "at most this many, 1 to 10000", wholeNumberFrom(1, 10_000), 50)
    .option("--json", "print JSON instead of a table")
    .examples("das-admin webhook attempts --org acme-robotics", "das-admin webhook attempts --notice ntc_... --json")
    .action(
      onDatabase(
        async (
          { ctx },
          options: { org?: string; endpoint?: string; notice?: string; limit: number; json?: boolean },
        ) => {
          const holder = await organizationIfGiven(ctx, options.org);
          const attempts = await verbs.listDeliveryAttempts(ctx, {
            organizationId: holder?.id,
            endpointId: options.endpoint,
            noticeId: options.notice,
            limit: options.limit,
          });
          printList(attempts, {
            json: options.json,
            none: "No delivery attempts yet.",
            columns: [
              { header: "TIME", cell: (a: DeliveryAttemptRecord) => seconds(a.attempted_at) },
              { header: "CHANNEL", cell: (a) => a.channel },
              { header: "ORGANISATION", cell: (a) => a.organization_slug },
              { header: "TO", cell: (a) => (a.endpoint_id ? `${a.endpoint_id} ${text(a.endpoint_url, 40)}` : "users") },
              { header: "NOTICE", cell: (a) => a.notice_id },
              { header: "TRY", cell: (a) => a.attempt },
              {
                header: "RESULT",
                cell: (a) => (a.delivered ? `delivered ${a.status_code ?? ""}`.trim() : text(a.error ?? "failed", 50)),
              },
              { header: "NEXT TRY", cell: (a) => (a.next_retry_at ? seconds(a.next_retry_at) : "-") },
            ],
          });
        },
      ),
    );
}

/** A time to the second (UTC). */
const seconds = (at: Date) => `${at.toISOString().slice(0, 19).replace("T", " ")}Z`;
