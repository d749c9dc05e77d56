// das-admin withdraw: a contributor's or named episodes taken out of every version, and who received them notified.
import type { CliCommand } from "../program";
import { say, UsageError } from "../terminal";
import type { Ctx } from "@/lib/context";
import { onDatabase, verbs } from "./session";

type WithdrawOptions = {
  contributor?: string;
  episodes?: string;
  dataset?: string;
  reason: string;
  dryRun?: boolean;
  json?: boolean;
};

export function addWithdrawCommand(program: CliCommand): void {
  program
    .command("withdraw")
    .summary("withdraw a contributor's or named episodes, and notify who received them")
    .description(
      "Withdraw episodes from every version that holds them: a contributor's (--contributor) or named ones (--episodes), with the reason on record. " +
        "In one transaction it records the withdrawal, audits it and writes one notice to every organisation that received any of them, naming only its own episodes and the downloads and previews that carried them. " +
        "From then on no list, total, manifest, download or preview includes them, and an import that holds one is refused unless it says --allow-withdrawn.",
    )
    .option("--contributor <name>", "withdraw every episode of this contributor")
    .option("--episodes <ids>", "withdraw these episodes (comma-separated ids)")
    .option(
      "--dataset <id>",
      "with --episodes: each must be an episode of this dataset (still withdrawn from every version holding it)",
    )
    .requiredOption("--reason <text>", "why, for the record (recipients are not shown it)")
    .option("--dry-run", "show what the withdrawal would take and whom it would notify, and write nothing")
    .option("--json", "print the withdrawal as JSON")
    .examples(
      'das-admin withdraw --contributor operator-17 --reason "consent withdrawn by email of 2026-11-28" --dry-run',
      'das-admin withdraw --contributor operator-17 --reason "consent withdrawn by email of 2026-11-28"',
      'das-admin withdraw --episodes kpp-000042,kpp-000043 --dataset kitchen-pick-place --reason "a bystander is recognisable"',
    )
    .action(onDatabase(({ ctx }, options: WithdrawOptions) => withdraw(ctx, options)));
}

/** The withdrawal, or with --dry-run what it would take, said for the operator. */
async function withdraw(ctx: Ctx, options: WithdrawOptions): Promise<void> {
  const input = {
    contributor: options.contributor,
    episodeIds: options.episodes
      ?.split(",")
      .map((id) => id.trim())
      .filter(Boolean),
    datasetId: options.dataset,
    reason: options.reason,
  };
  // The rules every caller of the verb parses (lib/withdrawals/withdrawal-input.ts), as a usage error.
  const [problem] = verbs.withdrawalProblems(input);
  if (problem) throw new UsageError(problem.message);
  const done = options.dryRun
    ? { withdrawal_id: null, ...(await verbs.previewWithdrawal(ctx, input)) }
    : await verbs.withdrawEpisodes(ctx, input);
  if (options.json) return void process.stdout.write(`${JSON.stringify(done, null, 2)}\n`);
  const count = `${done.episode_ids.length} episode${done.episode_ids.length === 1 ? "" : "s"}`;
  const versions = done.versions.map((v) => `${v.dataset_id}@${v.version} (${v.episodes})`).join(", ");
  if (done.withdrawal_id === null) {
    say(`Would withdraw ${count} from ${versions}.`);
    say(
      done.notices
        ? `Would notify ${done.notices} organisation${done.notices === 1 ? "" : "s"} that received them. Nothing was written: run it again without --dry-run.`
        : "No organisation had received them: nobody to notify. Nothing was written: run it again without --dry-run.",
    );
    return;
  }
  say(`Withdrew ${count} (${done.withdrawal_id}) from ${versions}.`);
  say(
    done.notices
      ? `Notified ${done.notices} organisation${done.notices === 1 ? "" : "s"} that received them.`
      : "No organisation had received them: nobody to notify.",
  );
}
