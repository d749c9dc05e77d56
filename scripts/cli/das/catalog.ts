// das datasets, licences, versions and manifest: what the key may read.
import { showUnsafe } from "@/lib/characters";
import { bytes, shorten, table } from "@/lib/client/format";
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { target, type Target } from "../values";
import { out, TARGET, withApi } from "./connection";

export function addCatalogCommands(program: CliCommand): void {
  datasetsCommand(program);
  licencesCommand(program);
  versionsCommand(program);
  manifestCommand(program);
}

function datasetsCommand(program: CliCommand): void {
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
}

function licencesCommand(program: CliCommand): void {
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
              l.ends_at ? `${l.ends_at.slice(0, 16).replace("T", " ")}Z` : "no end",
              l.terms ? shorten(l.terms.title, 40) : "-",
              l.terms?.sha256 ?? "-",
            ]),
          ),
        );
      }),
    );
}

function versionsCommand(program: CliCommand): void {
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
}

function manifestCommand(program: CliCommand): void {
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
}
