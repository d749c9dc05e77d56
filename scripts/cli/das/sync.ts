// das sync: what was withdrawn deleted from a pulled directory, and acknowledged.
import type { CliCommand } from "../program";
import { out, syncing, withApi } from "./connection";

export function addSyncCommand(program: CliCommand): void {
  program
    .command("sync")
    .summary("delete what was withdrawn from a pulled directory, and acknowledge it")
    .description(
      "Read the provenance das pull wrote in a directory, fetch the notices to your organisation about its downloads, delete the files of every withdrawn episode (a LeRobot directory's meta/ is written again for the episodes left, so that it still loads), and acknowledge each notice with the paths deleted. Nothing outside the directory is touched.",
    )
    .argument("<dir>", "a directory das pull wrote")
    .option("--dry-run", "only show what would be deleted; change and acknowledge nothing")
    .option("--statement <text>", "what to tell the data owner in the acknowledgement (default: what was deleted)")
    .option("--json", "print the result as JSON on stdout")
    .examples("das sync ./kpp --dry-run", "das sync ./kpp")
    .action(
      withApi(async (api, dir: string, options: { dryRun?: boolean; statement?: string; json?: boolean }) => {
        const { describeSync, sync } = await syncing();
        const result = await sync({ api, dir, dryRun: options.dryRun, statement: options.statement });
        process.stderr.write(describeSync(result));
        if (options.json) out(`${JSON.stringify(result, null, 2)}\n`);
      }),
    );
}
