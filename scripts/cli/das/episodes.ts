// das episodes and annotations: a version's episodes, filtered, and an episode's subtask spans.
import { Option } from "commander";
import { csvLine, shorten, table } from "@/lib/client/format";
import { episodeFilterFrom, episodeFilterOptions, type EpisodeFilterOptions } from "../episode-filter";
import { filterValuesHint } from "../episode-values";
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { target, type Target } from "../values";
import type { ApiClient } from "@/lib/client/api";
import { out, seconds, TARGET, withApi, write } from "./connection";

type EpisodesOptions = EpisodeFilterOptions & { format: "table" | "csv" | "jsonl" };

export function addEpisodesCommands(program: CliCommand): void {
  episodesCommand(program);
  annotationsCommand(program);
}

function episodesCommand(program: CliCommand): void {
  episodeFilterOptions(
    program
      .command("episodes")
      .summary("every matching episode of a version (all pages)")
      .description("List every episode of a version that matches the filters, reading all pages of the API.")
      .argument(TARGET, "the version, e.g. kitchen-pick-place@1.1.0", target),
  )
    .addOption(
      new Option("--format <format>", "table for people, csv or jsonl for scripts (on stdout)")
        .choices(["table", "csv", "jsonl"])
        .default("table"),
    )
    .examples(
      "das episodes kitchen-pick-place@1.1.0 --outcome failure",
      "das episodes kitchen-pick-place@1.1.0 --task pick_cup --has-recovery true --min-duration-s 20 --max-duration-s 45",
      "das episodes kitchen-pick-place@1.1.0 --format jsonl > episodes.jsonl",
    )
    .action(withApi(listEpisodes));
}

/** Every episode that matches, page after page, as a table, CSV or JSON Lines; a hint when none did. */
async function listEpisodes(api: ApiClient, { datasetId, version }: Target, options: EpisodesOptions): Promise<void> {
  const { format } = options;
  const filter = episodeFilterFrom(options) ?? {};
  const columns = [
    "episode_id",
    "task",
    "environment",
    "duration_s",
    "outcome",
    "has_recovery",
    "contributor",
    "streams",
  ] as const;
  const rows: (string | number)[][] = [];
  let total = 0;
  if (format === "csv") out(csvLine([...columns]));
  for await (const episode of api.episodes(datasetId, version, filter, (t) => (total = t))) {
    if (format === "jsonl") await write(`${JSON.stringify(episode)}\n`);
    else if (format === "csv") await write(csvLine(columns.map((c) => episode[c])));
    else
      rows.push([
        episode.episode_id,
        shorten(episode.task, 30),
        episode.environment,
        seconds(episode.duration_s),
        episode.outcome,
        episode.has_recovery ? "yes" : "no",
        episode.contributor,
        episode.streams.join(","),
      ]);
  }
  if (format === "table") {
    if (rows.length)
      out(
        table(
          columns.map((c) => c.toUpperCase()),
          rows,
        ),
      );
    say(`${total} episode(s).`);
  }
  // A filter that matched nothing is most often a value the version does not use ("failed").
  if (total === 0) {
    const hint = await filterValuesHint(api, datasetId, version, filter);
    if (hint) say(hint);
  }
}

function annotationsCommand(program: CliCommand): void {
  program
    .command("annotations")
    .summary("subtask spans of an episode")
    .description("List the subtask spans annotated on an episode.")
    .argument("<episode_id>", "the episode's id")
    .option("--version <version>", "the dataset version to read them from (default: the latest your key holds)")
    .option("--json", "print JSON instead of a table")
    .action(
      withApi(async (api, episodeId: string, options: { version?: string; json?: boolean }) => {
        const page = await api.annotations(episodeId, options.version);
        const { next_cursor: _, ...document } = page;
        if (options.json) return void out(`${JSON.stringify(document, null, 2)}\n`);
        say(`${page.episode_id} in ${page.dataset_id}@${page.version}: ${page.annotations.length} span(s).`);
        if (page.annotations.length) {
          out(
            table(
              ["ANNOTATION", "LABEL", "START_S", "END_S", "ATTRIBUTES"],
              page.annotations.map((a) => [
                a.annotation_id,
                a.label,
                seconds(a.start_s),
                seconds(a.end_s),
                shorten(JSON.stringify(a.attributes), 60),
              ]),
            ),
          );
        }
      }),
    );
}
