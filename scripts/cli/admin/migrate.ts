// das-admin migrate: the database's schema brought up to date.
import type { CliCommand } from "../program";
import { say, UsageError } from "../terminal";
import { onDatabase, verbs } from "./session";

export function addMigrateCommand(program: CliCommand): void {
  program
    .command("migrate")
    .description("apply pending database migrations")
    .action(
      onDatabase(async ({ runtime }) => {
        // The embedded default migrated on start; a configured database is migrated here, by the
        // owner when DATABASE_OWNER_URL names one, which then grants the service's role its rows.
        if (!runtime.embedded.database) {
          const owner = process.env.DATABASE_OWNER_URL;
          if (!owner && process.env.DB_POOL_MODE === "transaction")
            throw new UsageError(
              "DATABASE_URL is a transaction-mode pooler: migrations hold a session's lock, so set DATABASE_OWNER_URL to the server itself.",
            );
          await verbs.migrateKeepingChain(owner ?? runtime.env.DATABASE_URL!, {
            serviceRole: owner ? verbs.userOf(runtime.env.DATABASE_URL!) : undefined,
          });
        }
        say("Database schema is up to date.");
      }),
    );
}
