// das-admin – the operator's command line: migrations, imports, organisations, licences, keys, users, demo data.
// The program is assembled here from its commands, one module per command or group under
// scripts/cli/admin/, in the order its help lists them.
import { addDatasetCommands } from "./cli/admin/dataset";
import { addDisclosuresCommands } from "./cli/admin/disclosures";
import { addImportCommand } from "./cli/admin/import";
import { addKeyCommands } from "./cli/admin/key";
import { addLicenceCommands } from "./cli/admin/licence";
import { addMigrateCommand } from "./cli/admin/migrate";
import { addOrgCommands } from "./cli/admin/org";
import { addSeedCommand } from "./cli/admin/seed";
import { describe, loadChecks } from "./cli/admin/session";
import { addStoreCommands } from "./cli/admin/store";
import { addTermsCommands } from "./cli/admin/terms";
import { addTraceCommand } from "./cli/admin/trace";
import { addUserCommands } from "./cli/admin/user";
import { addWebhookCommands } from "./cli/admin/webhook";
import { addWithdrawCommand } from "./cli/admin/withdraw";
import { addWorkerCommand } from "./cli/admin/worker";
import { cliProgram, runProgram } from "./cli/program";

const program = cliProgram({
  name: "das-admin",
  usage: "<command>",
  description:
    "The operator's command line: database migrations, imports, organisations, licences, API keys, portal users, demo data and the disclosure log.",
  prefix: "das-admin: ",
  footer: `Uses DATABASE_URL, or the embedded PostgreSQL under .data/ when it is not set.
Exit codes: 0 done, 1 failed, 2 wrong usage.`,
});

// The rules values are checked by, once the words name a command and before its options are parsed.
program.hook("preSubcommand", loadChecks);

for (const add of [
  addMigrateCommand,
  addImportCommand,
  addStoreCommands,
  addOrgCommands,
  addWithdrawCommand,
  addLicenceCommands,
  addTermsCommands,
  addKeyCommands,
  addWebhookCommands,
  addWorkerCommand,
  addUserCommands,
  addDatasetCommands,
  addTraceCommand,
  addSeedCommand,
  addDisclosuresCommands,
])
  add(program);

// Exit as soon as the command is done, with its code, rather than when the last socket closes.
process.exit(await runProgram(program, process.argv.slice(2), (error) => `das-admin: ${describe(error)}`));
