// das-admin org: organisations.
import type { OrganizationRecord } from "@/lib/admin/list-organizations";
import { day, printList, text } from "../listing";
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { onDatabase, verbs } from "./session";

export function addOrgCommands(program: CliCommand): void {
  const org = program.group("org", "Organisations.");
  createOrgCommand(org);
  listCommand(org);
}

function createOrgCommand(org: CliCommand): void {
  org
    .command("create")
    .description("create an organisation")
    .argument("<slug>", "its short name: lower-case letters, digits and dashes")
    .option("--name <name>", "its display name")
    .examples('das-admin org create initech --name "Initech"')
    .action(
      onDatabase(async ({ ctx }, slug: string, options: { name?: string }) => {
        const created = await verbs.createOrganization(ctx, { slug, name: options.name });
        say(`Created organisation ${created.slug} (${created.id}).`);
      }),
    );
}

function listCommand(org: CliCommand): void {
  org
    .command("list")
    .description("list the organisations, with their users, active licences and live keys")
    .option("--json", "print JSON instead of a table")
    .examples("das-admin org list", "das-admin org list --json")
    .action(
      onDatabase(async ({ ctx }, options: { json?: boolean }) => {
        printList(await verbs.listOrganizations(ctx), {
          json: options.json,
          none: "No organisations yet: das-admin org create SLUG --name NAME makes one.",
          columns: [
            { header: "SLUG", cell: (o: OrganizationRecord) => o.slug },
            { header: "NAME", cell: (o) => text(o.name) },
            { header: "USERS", cell: (o) => o.user_count },
            { header: "LICENCES", cell: (o) => o.active_licence_count },
            { header: "KEYS", cell: (o) => o.live_key_count },
            { header: "CREATED", cell: (o) => day(o.created_at) },
          ],
        });
      }),
    );
}
