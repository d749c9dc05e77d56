// das-admin key: API keys of organisations.
import { Option } from "commander";
import { KEY_STATUSES, type KeyStatus } from "@/lib/admin/key-statuses";
import type { KeyRecord } from "@/lib/admin/list-keys";
import { day, minute, printList, text } from "../listing";
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { datasetVersion, duration, repeatable, type Target } from "../values";
import { organization, organizationIfGiven } from "./lookups";
import { onDatabase, verbs } from "./session";

export function addKeyCommands(program: CliCommand): void {
  const key = program.group("key", "API keys of organisations.");
  createKeyCommand(key);
  revokeCommand(key);
  listCommand(key);
}

function createKeyCommand(key: CliCommand): void {
  key
    .command("create")
    .summary("issue an API key (the secret alone on stdout)")
    .description(
      "Issue an API key for an organisation. The secret is printed alone on stdout, and only now; what was done goes to stderr.",
    )
    .argument("<org>", "the organisation's slug")
    .option("--name <name>", "a name to tell the key by", "cli")
    .option("--expires-in <duration>", "expire after this long: 90s, 15m, 12h, 30d or 2w (default: never)", duration)
    .option(
      "--scope <dataset@version>",
      "narrow the key to one licensed version; repeat for more (default: every licence)",
      repeatable(datasetVersion),
    )
    .examples(
      "das-admin key create acme-robotics --name training --expires-in 90d",
      "das-admin key create acme-robotics --scope kitchen-pick-place@1.1.0 > key.txt",
    )
    .action(
      onDatabase(async ({ ctx }, slug: string, options: { name: string; expiresIn?: number; scope?: Target[] }) => {
        const holder = await organization(ctx, slug);
        const issued = await verbs.issueKey(ctx, {
          organizationId: holder.id,
          name: options.name,
          expiresAt: options.expiresIn ? new Date(Date.now() + options.expiresIn) : null,
          scope: options.scope ?? [],
        });
        say(
          `Issued key ${issued.prefix}… (${issued.id}) for ${slug}${issued.expiresAt ? `, expires ${issued.expiresAt.toISOString()}` : ""}. It is shown only now:`,
        );
        process.stdout.write(`${issued.secret}\n`);
      }),
    );
}

function revokeCommand(key: CliCommand): void {
  key
    .command("revoke")
    .description("revoke an API key by its display prefix or its id")
    .argument("<key>", "the key's prefix as shown (das_AbCdEfGh) or its id (key_...)")
    .examples("das-admin key revoke das_AbCdEfGh")
    .action(
      onDatabase(async ({ ctx }, ref: string) => {
        const revoked = await verbs.revokeKey(ctx, ref.startsWith("key_") ? { id: ref } : { prefix: ref });
        say(`Revoked key ${revoked.prefix}… (${revoked.id}).`);
      }),
    );
}

function listCommand(key: CliCommand): void {
  key
    .command("list")
    .summary("list the API keys (never their secrets)")
    .description(
      "List the API keys, newest first: prefix, organisation, name, status, expiry, last use and narrowing. A key's secret is shown only when it is issued and is never stored, so never listed.",
    )
    .option("--org <slug>", "only this organisation's")
    .addOption(new Option("--status <status>", "only keys of this status").choices(KEY_STATUSES))
    .option("--json", "print JSON instead of a table")
    .examples("das-admin key list", "das-admin key list --org acme-robotics --status active --json")
    .action(
      onDatabase(async ({ ctx }, options: { org?: string; status?: KeyStatus; json?: boolean }) => {
        const holder = await organizationIfGiven(ctx, options.org);
        printList(await verbs.listKeys(ctx, { organizationId: holder?.id, status: options.status }), {
          json: options.json,
          none: `No ${options.status ? `${options.status} ` : ""}API keys${holder ? ` of ${holder.slug}` : ""}: das-admin key create ORG issues one.`,
          columns: [
            { header: "KEY", cell: (k: KeyRecord) => `${k.prefix}…` },
            { header: "ORGANISATION", cell: (k) => k.organization_slug },
            { header: "NAME", cell: (k) => text(k.name, 30) },
            { header: "STATUS", cell: (k) => k.status },
            { header: "EXPIRES", cell: (k) => day(k.expires_at) },
            { header: "LAST USED", cell: (k) => minute(k.last_used_at) },
            {
              header: "SCOPE",
              cell: (k) =>
                k.narrowed ? k.scope.map((s) => `${s.dataset_id}@${s.version}`).join(", ") : "all licences",
            },
          ],
        });
      }),
    );
}
