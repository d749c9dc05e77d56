// das – the API client's command line: list datasets, licences, versions, manifests, episodes and annotations, pull files, and sync them with withdrawals.
import { Option, type Command } from "commander";
import { showUnsafe } from "@/lib/characters";
import type { ApiClient, Wait } from "@/lib/client/api";
import { bytes, csvLine, shorten, table } from "@/lib/client/format";
import { cliProgram, runProgram } from "./cli/program";
import { Exit, say, UsageError } from "./cli/terminal";
import { apiKey, byteRate, commaList, serviceUrl, target, wholeNumberFrom, type Target } from "./cli/values";
import { episodeFilterFrom, episodeFilterOptions, type EpisodeFilterOptions } from "./cli/episode-filter";
import { filterValuesHint } from "./cli/episode-values";

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

const out = (text: string) => process.stdout.write(text);
// What a command needs is loaded when it runs: `das --help` and a usage error start in milliseconds.
const client = () => import("@/lib/client/api");
const pulling = () => import("@/lib/client/pull");
const syncing = () => import("@/lib/client/sync");
const TARGET = "<dataset@version>";

program
  .command("datasets")
  .summary("datasets your key holds a licence for")
  .description("List the datasets your key holds a licence for, with the versions it may read.")
  .option("--json", "print JSON instead of a table")
  .action(
    withApi(async (api, options: { json?: boolean }) => {
      const datasets = await api.listDatasets();
      if (options.json) return void out(`${JSON.stringify(datasets, null, 2)}\n`);
      if (!datasets.length) return void say("Your key holds no licence to any dataset.");
      out(
        table(
          ["DATASET", "TITLE", "LATEST", "LICENSED VERSIONS", "UPDATED"],
          datasets.map((d) => [
            d.dataset_id,
            shorten(d.title, 40),
            d.latest_licensed_version,
            d.licensed_versions.join(", "),
            d.updated_at.slice(0, 10),
          ]),
        ),
      );
    }),
  );

program
  .command("licences")
  .summary("the licences your key may use now, with their terms")
  .description(
    "List the licences your key may use now: each dataset version, when its licence began and ends, and the terms it was granted under (their title and SHA-256).",
  )
  .option("--json", "print JSON instead of a table")
  .action(
    withApi(async (api, options: { json?: boolean }) => {
      const licences = await api.listLicences();
      if (options.json) return void out(`${JSON.stringify(licences, null, 2)}\n`);
      if (!licences.length) return void say("Your key may use no licence now.");
      out(
        table(
          ["DATASET", "VERSION", "STARTS", "ENDS", "TERMS", "TERMS SHA256"],
          licences.map((l) => [
            l.dataset_id,
            l.version,
            l.starts_at.slice(0, 10),
            l.ends_at ? l.ends_at.slice(0, 16).replace("T", " ") + "Z" : "no end",
            l.terms ? shorten(l.terms.title, 40) : "-",
            l.terms?.sha256 ?? "-",
          ]),
        ),
      );
    }),
  );

program
  .command("versions")
  .summary("released versions of a dataset, newest first, with changelogs")
  .description(
    "List the released versions of a dataset, newest first: whether your key may read each, and its changelog.",
  )
  .argument("<dataset>", "the dataset's id")
  .option("--json", "print JSON instead of a table")
  .action(
    withApi(async (api, datasetId: string, options: { json?: boolean }) => {
      const versions = await api.listVersions(datasetId);
      if (options.json) return void out(`${JSON.stringify(versions, null, 2)}\n`);
      out(
        table(
          ["VERSION", "LICENSED", "RELEASED", "EPISODES", "CHANGELOG"],
          versions.map((v) => [
            v.version,
            v.licensed ? "yes" : "no",
            v.released_at.slice(0, 10),
            v.episode_count,
            shorten(v.changelog.map((c) => `${c.type}: ${c.description}`).join("; "), 80),
          ]),
        ),
      );
    }),
  );

program
  .command("manifest")
  .summary("every file of a version")
  .description("List every file of a version, with its episode, stream, size and SHA-256.")
  .argument(TARGET, "the version, e.g. kitchen-pick-place@1.1.0", target)
  .option("--json", "print the manifest as JSON")
  .action(
    withApi(async (api, { datasetId, version }: Target, options: { json?: boolean }) => {
      const manifest = await api.manifest(datasetId, version);
      if (options.json) return void out(`${JSON.stringify(manifest)}\n`);
      const format = manifest.format
        ? `; LeRobot ${manifest.format.codebase_version}, ${manifest.format.robot_type ?? "robot type not given"}, ${manifest.format.fps} fps`
        : "";
      // Every part of the line came from the server: escaped as a whole, as the table's cells are.
      out(
        `${showUnsafe(`${manifest.dataset_id}@${manifest.version}, released ${manifest.released_at}: ${manifest.episode_count} episodes, ${manifest.files.length} files, ${bytes(manifest.total_bytes)}; streams: ${manifest.streams.join(", ") || "none"}${format}`)}\n\n`,
      );
      // A file shared by several episodes (a LeRobot v3.0 video) says how many; --json lists them.
      const episodeOf = (f: (typeof manifest.files)[number]) =>
        f.episode_id ?? (f.episode_ids.length ? `${f.episode_ids.length} episodes` : "-");
      out(
        table(
          ["PATH", "EPISODE", "STREAM", "SIZE", "SHA256"],
          manifest.files.map((f) => [
            f.path,
            episodeOf(f),
            f.stream ?? "-",
            bytes(f.size_bytes),
            f.sha256.slice(0, 12),
          ]),
        ),
      );
    }),
  );

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
  .action(
    withApi(
      async (
        api,
        { datasetId, version }: Target,
        options: EpisodeFilterOptions & { format: "table" | "csv" | "jsonl" },
      ) => {
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
      },
    ),
  );

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

type PullOptions = EpisodeFilterOptions & {
  dir: string;
  episodes?: string[];
  streams?: string[];
  concurrency: number;
  limitRate?: number;
  keepOriginalIndices?: boolean;
  json?: boolean;
};

episodeFilterOptions(
  program
    .command("pull")
    .summary("download files, verified against the manifest; run it again to resume")
    .description(
      "Download the files of a version (or of the episodes and streams chosen), each verified against the manifest's size and SHA-256 before it is renamed into place. Run the same command again after an interruption: verified files are kept, partial files are continued.",
    )
    .argument(TARGET, "the version, e.g. kitchen-pick-place@1.1.0", target)
    .needs("--dir <dir>", "where the files go"),
)
  .option("--episodes <ids>", "only these episodes (comma-separated ids)", commaList)
  .option(
    "--streams <streams>",
    "only these streams (comma-separated), e.g. wrist_cam,joints; a LeRobot version needs data among them",
    commaList,
  )
  .option("--concurrency <n>", "files transferred at once, 1 to 64", wholeNumberFrom(1, 64), 4)
  .option("--limit-rate <rate>", "bytes per second over all transfers, e.g. 500k, 2M, 1.5G", byteRate)
  .option(
    "--keep-original-indices",
    "LeRobot v3.0: keep a subset's data files byte for byte where LeRobot reads them, with the version's episode indices, rather than renumber the episodes 0..k-1 and drop the frames of episodes left out of meta/ (LeRobot then opens only a subset of episodes 0..k-1, with its episode list if the data files hold others)",
  )
  .option("--json", "print the summary as JSON on stdout")
  .examples(
    "das pull kitchen-pick-place@1.1.0 --dir ./kpp",
    "das pull kitchen-pick-place@1.1.0 --outcome failure --streams wrist_cam --dir ./kpp-failures --concurrency 8 --limit-rate 20M",
  )
  .action(
    withApi(async (api, { datasetId, version }: Target, options: PullOptions) => {
      const filter = episodeFilterFrom(options);
      const controller = new AbortController();
      const interrupt = () => {
        if (controller.signal.aborted) process.exit(130);
        say("\nInterrupted: finishing up (press Ctrl-C again to quit at once).");
        controller.abort(new Error("interrupted"));
      };
      process.on("SIGINT", interrupt);
      process.on("SIGTERM", interrupt);
      const { describeSummary, pull } = await pulling();
      const summary = await pull({
        api,
        datasetId,
        version,
        dir: options.dir,
        filter,
        episodeIds: options.episodes,
        streams: options.streams,
        concurrency: options.concurrency,
        limitRate: options.limitRate,
        keepOriginalIndices: options.keepOriginalIndices,
        signal: controller.signal,
      });
      process.stderr.write(describeSummary(summary));
      if (options.json) out(`${JSON.stringify(summary, null, 2)}\n`);
      if (summary.interrupted) throw new Exit(130);
      if (summary.failed.length) throw new Exit(1);
    }),
  );

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

// Every command reads the API: each takes the connection options, after its own in its help.
for (const command of program.commands) {
  command
    .optionsGroup("Connection:")
    .option("--url <url>", "the service's address (default: $DAS_API_URL)")
    .option("--key <key>", "your API key, das_... (default: $DAS_API_KEY)");
}

/** A command's work, given an API client for --url and --key (or DAS_API_URL and DAS_API_KEY). */
function withApi<A extends unknown[]>(work: (api: ApiClient, ...args: A) => Promise<void>) {
  return async function (this: Command, ...args: A) {
    const { url = process.env.DAS_API_URL, key = process.env.DAS_API_KEY } = this.opts<{
      url?: string;
      key?: string;
    }>();
    if (!url)
      throw new UsageError("Set DAS_API_URL (or --url) to the service's address, e.g. https://das.example.com.");
    if (!key) throw new UsageError("Set DAS_API_KEY (or --key) to your API key (das_...).");
    const given = this.opts<{ url?: string; key?: string }>();
    const baseUrl = serviceUrl(url, given.url ? "--url" : "DAS_API_URL");
    const { ApiClient } = await client();
    await work(new ApiClient({ baseUrl, key: apiKey(key, given.key ? "--key" : "DAS_API_KEY"), onWait }), ...args);
  };
}

/** Seconds in a table, to the hundredth: 11.433333333333334 is 11.43 (--format csv and jsonl keep every digit). */
const seconds = (value: number) => Math.round(value * 100) / 100;

/** Writes to stdout, waiting when the reader is slower than the API. */
function write(text: string): Promise<void> | void {
  if (!process.stdout.write(text)) return new Promise((resolve) => process.stdout.once("drain", () => resolve()));
}

function onWait(wait: Wait): void {
  const why =
    wait.status === "network"
      ? "the API is unreachable"
      : wait.status === 429
        ? "rate limited (429)"
        : "the service is unavailable (503)";
  say(`${wait.what}: ${why}; waiting ${wait.seconds} s (attempt ${wait.attempt}).`);
}

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  // `das episodes ... | head`: the reader has gone, which is not an error.
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const code = await runProgram(program, process.argv.slice(2), async (error) => {
  const [{ ApiError, TransportError }, { PullError }, { SyncError }] = await Promise.all([
    client(),
    pulling(),
    syncing(),
  ]);
  if (error instanceof ApiError) return error.toString();
  if (error instanceof TransportError || error instanceof PullError || error instanceof SyncError) return error.message;
  return `das: ${(error as Error)?.stack ?? String(error)}`;
});
process.exit(code);
