// das-admin user: users of the portal.
import { Option } from "commander";
import type { UserRecord } from "@/lib/admin/users";
import { USER_ROLES, type UserRole } from "@/lib/db/schema";
import { day, printList, text } from "../listing";
import type { CliCommand } from "../program";
import { readPassword, say } from "../terminal";
import { organizationIfGiven } from "./lookups";
import { onDatabase, verbs } from "./session";

export function addUserCommands(program: CliCommand): void {
  const user = program.group("user", "Users of the portal.");
  createUserCommand(user);
  listCommand(user);
}

function createUserCommand(user: CliCommand): void {
  user
    .command("create")
    .summary("create a portal user (password on stdin)")
    .description("Create a portal user. The password is read from stdin: piped, or typed at a hidden prompt.")
    .argument("<email>", "the address they sign in with")
    .needs("--role <role>", "what they may do", USER_ROLES)
    .option("--org <slug>", "the organisation a licensee belongs to")
    .option("--name <name>", "their display name")
    .examples("echo 'a long password' | das-admin user create carol@acme.example --role licensee --org acme-robotics")
    .action(
      onDatabase(async ({ ctx }, email: string, options: { role: UserRole; org?: string; name?: string }) => {
        const holder = await organizationIfGiven(ctx, options.org);
        const password = await readPassword(`Password for ${email}: `);
        const created = await verbs.createUser(ctx, {
          email,
          role: options.role,
          organizationId: holder?.id,
          password,
          name: options.name,
        });
        say(`Created ${created.role} ${created.email} (${created.id}).`);
      }),
    );
}

function listCommand(user: CliCommand): void {
  user
    .command("list")
    .description("list the portal users by email, with their role, organisation and whether they are disabled")
    .addOption(new Option("--role <role>", "only users of this role").choices(USER_ROLES))
    .option("--org <slug>", "only this organisation's members")
    .option("--json", "print JSON instead of a table")
    .examples("das-admin user list", "das-admin user list --role licensee --org acme-robotics")
    .action(
      onDatabase(async ({ ctx }, options: { role?: UserRole; org?: string; json?: boolean }) => {
        const holder = await organizationIfGiven(ctx, options.org);
        printList(await verbs.listUsers(ctx, { role: options.role, organizationId: holder?.id }), {
          json: options.json,
          none: "No portal users match: das-admin user create EMAIL --role ROLE creates one.",
          columns: [
            { header: "EMAIL", cell: (u: UserRecord) => u.email },
            { header: "ROLE", cell: (u) => u.role },
            { header: "ORGANISATION", cell: (u) => u.organization_slug ?? "-" },
            { header: "NAME", cell: (u) => text(u.name, 30) },
            { header: "STATUS", cell: (u) => (u.disabled_at ? "disabled" : "active") },
            { header: "CREATED", cell: (u) => day(u.created_at) },
          ],
        });
      }),
    );
}
