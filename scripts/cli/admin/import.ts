// das-admin import: one dataset version, from an import directory or a LeRobot dataset.
import { existsSync, statSync } from "node:fs";
import { setMaxListeners } from "node:events";
import path from "node:path";
import { InvalidArgumentError, Option } from "commander";
import type { Ctx } from "@/lib/context";
import type { RootDb } from "@/lib/db/client";
import { ImportError } from "@/lib/catalog/import/problems";
import { Progress } from "@/lib/client/progress";
import { describeLeRobotImport, newVersionNotices } from "../lerobot-import-summary";
import type { CliCommand } from "../program";
import { abortOnInterrupt, Exit, say, UsageError } from "../terminal";
import { wholeNumberFrom } from "../values";
import { checks, onDatabase, verbs } from "./session";
import { datasetIdValue, versionValue } from "./values";

type ImportOptions = {
  format?: "jsonl" | "lerobot";
  dataset?: string;
  version?: string;
  title?: string;
  description?: string;
  releasedAt?: string;
  changelog?: string;
  episodeMetadata?: string;
  annotations?: string;
  outcome?: string;
  environment?: string;
  contributor?: string;
  skipIncompleteEpisodes?: boolean;
  upload?: boolean;
  allowWithdrawn?: boolean;
  concurrency: number;
};
const LEROBOT_ONLY = [
  "dataset",
  "version",
  "title",
  "description",
  "releasedAt",
  "changelog",
  "episodeMetadata",
  "annotations",
  "outcome",
  "environment",
  "contributor",
  "skipIncompleteEpisodes",
  "upload",
] as const;

export function addImportCommand(program: CliCommand): void {
  leRobotOptions(
    program
      .command("import")
      .summary("import a dataset version: an import directory or a LeRobot dataset")
      .description(
        "Import one dataset version from a directory: an import directory laid out as docs/import-format.md describes, or a LeRobot dataset (v2.0, v2.1, v3.0; docs/lerobot.md), recognised by its meta/info.json. Nothing is written unless all of it is valid.",
      )
      .argument("<dir>", "the version's directory")
      .addOption(
        new Option(
          "--format <format>",
          "what the directory holds (default: lerobot if it has meta/info.json, else jsonl)",
        ).choices(["jsonl", "lerobot"]),
      ),
  )
    .examples(
      "das-admin import path/to/kitchen-pick-place-1.1.0",
      "das-admin import ./so100_pick --dataset so100-pick --version 1.0.0 --title 'SO-100 pick' --episode-metadata outcomes.jsonl --upload",
    )
    .action(
      onDatabase(async ({ ctx }, dir: string, options: ImportOptions) => {
        if (formatOf(dir, options) === "jsonl") return importDirectory(ctx, dir, options);
        if (!options.dataset || !options.version)
          throw new UsageError("An import of a LeRobot dataset needs --dataset ID and --version X.Y.Z.");
        await importLeRobot(ctx, dir, options);
      }),
    );
}

/** The options under the help's "LeRobot datasets:" heading (the transfer's and withdrawn episodes' among them). */
function leRobotOptions(command: CliCommand): CliCommand {
  return command
    .optionsGroup("LeRobot datasets:")
    .option("--dataset <id>", "the dataset's id (required)", datasetIdValue)
    .option("--version <x.y.z>", "the version to release (required)", versionValue)
    .option("--title <text>", "the dataset's title (default: as it is; a new dataset: its id)")
    .option("--description <text>", "the dataset's description (default: as it is)")
    .option(
      "--released-at <time>",
      "release time, ISO 8601 with a time zone (default: now; on a re-import, as released)",
    )
    .option("--changelog <file>", "a JSON file with the changelog entries, as in version.json")
    .option(
      "--episode-metadata <jsonl>",
      "JSON Lines of {episode_index, outcome?, environment?, contributor?, has_recovery?}",
    )
    .option(
      "--annotations <jsonl>",
      "subtask spans in annotations.jsonl's format, keyed by episode_index or episode_id",
    )
    .option("--outcome <value>", "outcome of episodes that say none (default: unknown)", facetValue("outcome"))
    .option(
      "--environment <value>",
      "environment of episodes that say none (default: unknown)",
      facetValue("environment"),
    )
    .option(
      "--contributor <value>",
      "contributor of episodes that say none (default: unknown)",
      facetValue("contributor"),
    )
    .option(
      "--skip-incomplete-episodes",
      "leave out episodes whose files are missing (and report them) instead of refusing the version",
    )
    .option("--upload", "put every file into the object store first (resumable: objects already there are skipped)")
    .option("--concurrency <n>", "files hashed or uploaded at once, 1 to 64", wholeNumberFrom(1, 64), 8)
    .option(
      "--allow-withdrawn",
      "import episodes that were withdrawn (das-admin withdraw), once their contributor has consented anew",
    );
}

/** What the directory holds, refusing one that is not there, and LeRobot's options for an import directory. */
function formatOf(dir: string, options: ImportOptions): "jsonl" | "lerobot" {
  const found = statSync(dir, { throwIfNoEntry: false });
  if (!found)
    throw new UsageError(`${dir} does not exist: give the directory of the version to import (from ${process.cwd()}).`);
  if (!found.isDirectory())
    throw new UsageError(
      `${dir} is a file: give the directory of the version to import (a LeRobot dataset's holds meta/info.json).`,
    );
  const format = options.format ?? (existsSync(path.join(dir, "meta", "info.json")) ? "lerobot" : "jsonl");
  if (format === "jsonl") {
    const given = LEROBOT_ONLY.filter((name) => options[name] !== undefined);
    if (given.length)
      throw new UsageError(
        `${given.map(flagOf).join(", ")} ${given.length > 1 ? "are" : "is"} for LeRobot datasets, but ${dir} ${
          options.format ? "is imported with --format jsonl" : "has no meta/info.json"
        }, so it would be read as an import directory (docs/import-format.md). For a LeRobot dataset, give the directory that holds meta/info.json.`,
      );
  }
  return format;
}

/** An import directory (docs/import-format.md). */
async function importDirectory(ctx: Ctx, dir: string, options: ImportOptions): Promise<void> {
  const result = await verbs.importVersion((ctx.db as RootDb).$client, dir, {
    allowWithdrawnEpisodes: options.allowWithdrawn,
  });
  const what = `${result.datasetId}@${result.version}: ${result.episodes} episodes, ${result.annotations} annotations, ${result.files} files`;
  say(
    result.status === "imported"
      ? `Imported ${what}.`
      : `Unchanged: ${what} is already released with identical content.`,
  );
  if (result.versionNotices) say(newVersionNotices(result.versionNotices));
}

/** A LeRobot dataset, its files uploaded first with --upload; Ctrl-C rolls it back. */
async function importLeRobot(ctx: Ctx, dir: string, options: ImportOptions): Promise<void> {
  const controller = new AbortController();
  // Every transfer in flight, and the SDK's wait before each retry, listens for the interruption
  // on this one signal: more than Node's default of 10 is expected, not a leak.
  setMaxListeners(options.concurrency * 4 + 10, controller.signal);
  const stopListening = abortOnInterrupt(controller, "rolling back");
  const location = options.upload ? verbs.storeLocation() : undefined;
  const client = location ? verbs.s3Client(location) : undefined;
  try {
    const result = await verbs.importLeRobotVersion((ctx.db as RootDb).$client, {
      dir,
      datasetId: options.dataset!,
      version: options.version!,
      title: options.title,
      description: options.description,
      releasedAt: options.releasedAt,
      changelogFile: options.changelog,
      episodeMetadataFile: options.episodeMetadata,
      annotationsFile: options.annotations,
      defaults: { outcome: options.outcome, environment: options.environment, contributor: options.contributor },
      skipIncompleteEpisodes: options.skipIncompleteEpisodes,
      allowWithdrawnEpisodes: options.allowWithdrawn,
      upload:
        client && location
          ? { client, bucket: location.bucket, keyOf: (p) => verbs.objectKey(options.dataset!, options.version!, p) }
          : undefined,
      concurrency: options.concurrency,
      progress: (totals) => new Progress(totals.files, totals.bytes, process.stderr),
      signal: controller.signal,
    });
    for (const line of describeLeRobotImport(result, { uploaded: Boolean(options.upload) })) say(line);
  } catch (error) {
    explainFailedImport(error, options, controller.signal);
  } finally {
    client?.destroy();
    stopListening();
  }
}

/** A LeRobot import that failed: what to do about missing files, or an interruption; else the error itself. */
function explainFailedImport(error: unknown, options: ImportOptions, signal: AbortSignal): never {
  if (
    error instanceof ImportError &&
    !options.skipIncompleteEpisodes &&
    error.problems.some((p) => p.message.startsWith("file is missing"))
  ) {
    say(`das-admin: ${error.message}`);
    say(
      "To import the version without the episodes whose files are missing (they are listed in the summary), run the same command with --skip-incomplete-episodes; or put the missing files in place and run it again.",
    );
    throw new Exit(1);
  }
  if (signal.aborted) {
    say(
      "Interrupted: nothing was written to the catalog. Run the same command again to resume; files already in the store are not sent again.",
    );
    throw new Exit(130);
  }
  throw error;
}

const flagOf = (name: string) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** A default for an episode field, checked by the same rule as the field itself. */
function facetValue(field: "outcome" | "environment" | "contributor") {
  return (text: string): string => {
    const checked = checks.EpisodeLine.shape[field].safeParse(text);
    if (!checked.success)
      throw new InvalidArgumentError(`${checked.error.issues[0]!.message.replace(`${field} `, "")}.`);
    return text;
  };
}
