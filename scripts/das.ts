// das – the API client's command line: list datasets, licences, versions, manifests, episodes and annotations, pull files, and sync them with withdrawals.
// The program is assembled here from its commands, grouped in modules under scripts/cli/das/, in
// the order its help lists them.
import { addCatalogCommands } from "./cli/das/catalog";
import { describeError } from "./cli/das/connection";
import { addEpisodesCommands } from "./cli/das/episodes";
import { addPullCommand } from "./cli/das/pull";
import { addSyncCommand } from "./cli/das/sync";
import { cliProgram, runProgram } from "./cli/program";

const program = cliProgram({
  name: "das",
  usage: "<command> [options]",
  description:
    "The Dataset Access Service's API client: what your key may read, and files pulled and verified against the manifest.",
  prefix: "",
  footer: `Configuration: DAS_API_URL (e.g. https://das.example.com) and DAS_API_KEY, or --url and --key.
Errors from the API are shown as \`code: message (request_id)\`.
Exit codes: 0 done, 1 failed, 2 wrong usage, 130 interrupted.`,
});

for (const add of [addCatalogCommands, addEpisodesCommands, addPullCommand, addSyncCommand]) add(program);

// Every command reads the API: each takes the connection options, after its own in its help.
for (const command of program.commands) {
  command
    .optionsGroup("Connection:")
    .option("--url <url>", "the service's address (default: $DAS_API_URL)")
    .option("--key <key>", "your API key, das_... (default: $DAS_API_KEY)");
}

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  // `das episodes ... | head`: the reader has gone, which is not an error.
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

process.exit(await runProgram(program, process.argv.slice(2), describeError));
