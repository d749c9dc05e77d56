import { durationRangeProblem, type EpisodeFilter } from "@/lib/catalog/episode-filter";
import { AppError } from "@/lib/errors";

/**
 * What the explorer says when the episode list refuses its filters as a whole (`invalid_parameter`
 * after each field passed its own check): a duration range upside down in the form's words, any
 * other refusal in the verb's own words. Null for an error that is not such a refusal.
 */
export function filterProblemOf(error: unknown, filter: EpisodeFilter): string | null {
  if (!(error instanceof AppError) || error.code !== "invalid_parameter") return null;
  if (durationRangeProblem(filter))
    return `The minimum duration (${filter.min_duration_s} s) is above the maximum (${filter.max_duration_s} s)`;
  return error.message;
}
