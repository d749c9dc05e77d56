// das pull: a version's files, or those chosen, downloaded and verified against the manifest.
import { episodeFilterFrom, episodeFilterOptions, type EpisodeFilterOptions } from "../episode-filter";
import type { CliCommand } from "../program";
import { abortOnInterrupt, Exit } from "../terminal";
import { byteRate, commaList, target, wholeNumberFrom, type Target } from "../values";
import { out, pulling, TARGET, withApi } from "./connection";

type PullOptions = EpisodeFilterOptions & {
  dir: string;
  episodes?: string[];
  streams?: string[];
  concurrency: number;
  limitRate?: number;
  keepOriginalIndices?: boolean;
  json?: boolean;
};

export function addPullCommand(program: CliCommand): void {
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
        abortOnInterrupt(controller, "finishing up");
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
}
