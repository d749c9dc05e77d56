// das-admin seed: the demo's data.
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { positiveWholeNumber } from "../values";
import { onDatabase, verbs } from "./session";

export function addSeedCommand(program: CliCommand): void {
  program
    .command("seed")
    .description("load deterministic demo data")
    .option("--episodes <n>", "episodes per dataset version", positiveWholeNumber)
    .action(
      onDatabase(async ({ ctx, runtime }, options: { episodes?: number }) => {
        const accounts = await verbs.seedDemo(ctx, {
          episodesPerVersion: options.episodes,
          appSecret: runtime.env.APP_SECRET!,
          store: verbs.storeLocation(),
          log: say,
        });
        verbs.printAccounts(accounts, say);
      }),
    );
}
