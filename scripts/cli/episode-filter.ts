import { InvalidArgumentError, type Command } from "commander";
import type { EpisodeFilter } from "@/lib/client/api";
import { UsageError } from "./terminal";

// The episode filter of `das episodes` and `das pull`: the API's episode filters, one option each.

/** A filter value compared exactly: the API refuses an empty one, so it is refused before it is sent. */
function exactValue(text: string): string {
  if (!text) throw new InvalidArgumentError("takes a value, not an empty string.");
  return text;
}

/** true or false (the API's words; yes/no would read as a typo of them). */
export function trueOrFalse(text: string): boolean {
  const value = text.trim().toLowerCase();
  if (value === "true") return true;
  if (value === "false") return false;
  throw new InvalidArgumentError(`takes true or false, not '${text}'.`);
}

/** Seconds as the API's duration bounds take them: a non-negative decimal number such as 12 or 12.5. */
export function seconds(text: string): number {
  if (!/^[0-9]{1,9}(\.[0-9]{1,9})?$/.test(text.trim()))
    throw new InvalidArgumentError(`takes a non-negative number of seconds, such as 12 or 12.5, not '${text}'.`);
  return Number(text);
}

/** The filter options, in the order `--help` shows them. */
export function episodeFilterOptions<C extends Command>(command: C): C {
  return command
    .option("--outcome <outcome>", "only episodes with this outcome, e.g. failure")
    .option("--environment <environment>", "only episodes recorded in this environment")
    .option("--task <task>", "only episodes of this task, e.g. pick_cup", exactValue)
    .option("--contributor <contributor>", "only episodes from this contributor", exactValue)
    .option(
      "--has-recovery <true|false>",
      "true: only episodes with a recovery; false: only those without",
      trueOrFalse,
    )
    .option("--min-duration-s <seconds>", "only episodes at least this long (the bound included)", seconds)
    .option("--max-duration-s <seconds>", "only episodes at most this long (the bound included)", seconds);
}

export type EpisodeFilterOptions = {
  outcome?: string;
  environment?: string;
  task?: string;
  contributor?: string;
  hasRecovery?: boolean;
  minDurationS?: number;
  maxDurationS?: number;
};

/**
 * The filter the options give, the absent ones left out; undefined when none is given (a pull of
 * the whole version). A range upside down matches nothing and is far more likely a slip than a
 * question, so it is a usage error, as the API's 400 would be.
 */
export function episodeFilterFrom(options: EpisodeFilterOptions): EpisodeFilter | undefined {
  const { minDurationS: min, maxDurationS: max } = options;
  if (min !== undefined && max !== undefined && min > max)
    throw new UsageError(`--min-duration-s (${min}) must not exceed --max-duration-s (${max}).`);
  const filter: EpisodeFilter = {
    outcome: options.outcome,
    environment: options.environment,
    task: options.task,
    contributor: options.contributor,
    has_recovery: options.hasRecovery,
    min_duration_s: min,
    max_duration_s: max,
  };
  const given = Object.entries(filter).filter(([, value]) => value !== undefined);
  return given.length ? (Object.fromEntries(given) as EpisodeFilter) : undefined;
}
