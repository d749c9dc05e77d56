// das-admin dataset: datasets, their released versions, their listing in the portal and their fingerprinting.
import { InvalidArgumentError } from "commander";
import { DATASET_LISTINGS, type DatasetListing } from "@/lib/db/schema";
import { day, printList, text } from "../listing";
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { onDatabase, verbs } from "./session";
import { datasetIdValue, versionValue } from "./values";

export function addDatasetCommands(program: CliCommand): void {
  const dataset = program.group("dataset", "Datasets and their released versions.");
  listCommand(dataset);
  listingCommand(dataset);
  fingerprintCommand(dataset);
}

function listCommand(dataset: CliCommand): void {
  dataset
    .command("list")
    .description("list the datasets and their released versions, newest first")
    .option("--json", "print JSON instead of a table (one record per dataset, its versions inside)")
    .examples("das-admin dataset list", "das-admin dataset list --json")
    .action(
      onDatabase(async ({ ctx }, options: { json?: boolean }) => {
        const listings = new Map((await verbs.listDatasetListings(ctx)).map((d) => [d.dataset_id, d.listing]));
        const datasets = (await verbs.listDatasetVersions(ctx)).map((d) => ({
          ...d,
          listing: listings.get(d.dataset_id)!,
        }));
        if (options.json) return printList(datasets, { json: true, none: "", columns: [] });
        // A row per version: what `licence grant` and `store check` take.
        printList(
          datasets.flatMap((d) =>
            d.versions.map((v, i) => ({
              ...v,
              dataset_id: d.dataset_id,
              title: i ? "" : d.title,
              listing: i ? "" : d.listing,
            })),
          ),
          {
            none: "No datasets yet: das-admin import DIR imports a version (das-admin seed loads the demo's).",
            columns: [
              { header: "DATASET", cell: (v) => v.dataset_id },
              { header: "VERSION", cell: (v) => v.version },
              { header: "RELEASED", cell: (v) => day(v.released_at) },
              { header: "EPISODES", cell: (v) => v.episode_count },
              { header: "LISTING", cell: (v) => v.listing },
              { header: "TITLE", cell: (v) => text(v.title, 50) },
            ],
          },
        );
      }),
    );
}

function listingCommand(dataset: CliCommand): void {
  dataset
    .command("listing")
    .summary("list or unlist a dataset in the portal")
    .description(
      "Set whether the portal shows a dataset beyond its licensees. listed: every signed-in member of an organisation sees its title, description, versions, episode counts and charts (never its episodes or files) and may request a licence. unlisted (the default): only organisations holding a licence see it. The API is unaffected. Audited when it changes.",
    )
    .argument("<dataset>", "the dataset's id", datasetIdValue)
    .argument("<listing>", `one of ${DATASET_LISTINGS.join(", ")}`, listingValue)
    .examples(
      "das-admin dataset listing kitchen-pick-place listed",
      "das-admin dataset listing kitchen-pick-place unlisted",
    )
    .action(
      onDatabase(async ({ ctx }, datasetId: string, listing: DatasetListing) => {
        const set = await verbs.setDatasetListing(ctx, { datasetId, listing });
        say(
          set.changed
            ? `${datasetId} is now ${listing} (it was ${set.previous}).`
            : `${datasetId} was already ${listing}.`,
        );
      }),
    );
}

function fingerprintCommand(dataset: CliCommand): void {
  dataset
    .command("fingerprint")
    .summary("give each licence its own marked copies of a version's files, or show how far they are")
    .description(
      "Turn a version's fingerprinting on or off, or (with neither) show it and, per licence, how many of its files have their copy. On: every licence receives its own copy of every file (a keyed mark of at most one float step in the data parquet's float columns; a trailer of its own on videos and other files), made ahead of use by the job queue; downloads, previews and manifests hand each licence its own, and `das-admin trace` names the licence a leaked file came from. Until a licence's copies are made its downloads of the version answer 503. Off: the originals again; the copies stay for trace. On again enqueues any copy not made yet. Audited when it changes.",
    )
    .argument("<dataset>", "the dataset's id", datasetIdValue)
    .argument("<version>", "the version, e.g. 1.0.0", versionValue)
    .argument("[on|off]", "on or off; left out: show it", onOffValue)
    .option("--json", "print JSON instead of a table")
    .examples(
      "das-admin dataset fingerprint kitchen-pick-place 1.1.0 on",
      "das-admin dataset fingerprint kitchen-pick-place 1.1.0",
    )
    .action(
      onDatabase(
        async ({ ctx }, datasetId: string, version: string, on: boolean | undefined, options: { json?: boolean }) => {
          if (on !== undefined) {
            const set = await verbs.setFingerprinting(ctx, { datasetId, version, on });
            say(
              `${datasetId}@${version}: fingerprinting ${on ? "on" : "off"}${set.changed ? "" : " (it already was)"}${on ? `; ${set.jobs} copies enqueued` : ""}.`,
            );
            if (!options.json) return;
          }
          const status = await verbs.fingerprintStatus(ctx, { datasetId, version });
          if (options.json) return void process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
          say(`${datasetId}@${version}: fingerprinting ${status.fingerprinted ? "on" : "off"}, ${status.files} files.`);
          printList(status.licences, {
            none: "No licences for this version.",
            columns: [
              { header: "LICENCE", cell: (l) => l.licence_id },
              { header: "ORGANISATION", cell: (l) => l.organization_slug },
              { header: "COPIES", cell: (l) => `${l.copies}/${l.files}` },
              { header: "BYTES", cell: (l) => l.copy_bytes },
              { header: "STATUS", cell: (l) => (l.revoked ? "revoked" : "active") },
            ],
          });
        },
      ),
    );
}

function onOffValue(text: string): boolean {
  if (text !== "on" && text !== "off") throw new InvalidArgumentError("takes on or off.");
  return text === "on";
}

function listingValue(text: string): DatasetListing {
  if (!(DATASET_LISTINGS as readonly string[]).includes(text))
    throw new InvalidArgumentError(`takes one of ${DATASET_LISTINGS.join(", ")}.`);
  return text as DatasetListing;
}
