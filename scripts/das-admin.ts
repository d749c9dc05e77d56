// das-admin – the operator's command line: migrations, imports, organisations, licences, keys, users, demo data.
import { userInfo } from "node:os";
import { InvalidArgumentError } from "commander";
import type { Runtime } from "@/lib/dev/embedded-default";
import type { RootDb } from "@/lib/db/client";
import type { Ctx } from "@/lib/context";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { Option } from "commander";
import { AppError } from "@/lib/errors";
import { errorFields } from "@/lib/log";
import { ImportError } from "@/lib/catalog/import/problems";
import { Progress } from "@/lib/client/progress";
import { describeLeRobotImport, newVersionNotices } from "./cli/lerobot-import-summary";
import { VERSION_PATTERN } from "@/lib/catalog/semver";
import { setMaxListeners } from "node:events";
import type { TermsRecord } from "@/lib/admin/terms";
import type { UserRecord } from "@/lib/admin/users";
import type { OrganizationRecord } from "@/lib/admin/list-organizations";
import type { LicenceRecord } from "@/lib/admin/list-licences";
import type { KeyRecord } from "@/lib/admin/list-keys";
import { KEY_STATUSES, type KeyStatus } from "@/lib/admin/key-statuses";
import type { WebhookEndpointRecord } from "@/lib/admin/webhook-endpoints";
import type { DeliveryAttemptRecord } from "@/lib/notice-delivery/attempts";
import type { FileTrace } from "@/lib/fingerprints/trace";
import { tracedFiles } from "./cli/trace-files";
import { DATASET_LISTINGS, DISCLOSURE_CHANNELS, USER_ROLES, type DatasetListing, type UserRole } from "@/lib/db/schema";
import type { RangeChecker, VerifyProgress } from "@/lib/disclosures/verify";
import type { DisclosureSearch } from "@/lib/disclosures/filter";
import type * as Checks from "./cli/admin-checks";
import type * as Verbs from "./cli/admin-verbs";
import { cliProgram, runProgram } from "./cli/program";
import { choices, day, minute, printList, text } from "./cli/listing";
import { Exit, readPassword, say, UsageError } from "./cli/terminal";
import {
  datasetVersion,
  duration,
  positiveWholeNumber,
  repeatable,
  target,
  wholeNumberFrom,
  type Target,
} from "./cli/values";

/**
 * The verbs the commands work with (the database, the store, lib/'s verbs): loaded by `onDatabase`
 * when a command runs, so that `das-admin --help` and a usage error start without any of them.
 */
let verbs: typeof Verbs;

const program = cliProgram({
  name: "das-admin",
  usage: "<command>",
  description:
    "The operator's command line: database migrations, imports, organisations, licences, API keys, portal users, demo data and the disclosure log.",
  prefix: "das-admin: ",
  footer: `Uses DATABASE_URL, or the embedded PostgreSQL under .data/ when it is not set.
Exit codes: 0 done, 1 failed, 2 wrong usage.`,
});

/**
 * The rules some values are checked by as the command line is parsed (dataset ids, episode
 * fields, times, terms digests): loaded once the words name a command, before its options are
 * parsed, so that `das-admin --help` loads none of them.
 */
let checks: typeof Checks;
program.hook("preSubcommand", async () => {
  checks = await import("./cli/admin-checks");
});

/** A time to the second (UTC). */
const seconds = (at: Date) => `${at.toISOString().slice(0, 19).replace("T", " ")}Z`;

// One command is one block below: its words, arguments and options, and its work on the database.

program
  .command("migrate")
  .description("apply pending database migrations")
  .action(
    onDatabase(async ({ runtime }) => {
      // The embedded default migrated on start; a configured database is migrated here, by the
      // owner when DATABASE_OWNER_URL names one, which then grants the service's role its rows.
      if (!runtime.embedded.database) {
        const owner = process.env.DATABASE_OWNER_URL;
        if (!owner && process.env.DB_POOL_MODE === "transaction")
          throw new UsageError(
            "DATABASE_URL is a transaction-mode pooler: migrations hold a session's lock, so set DATABASE_OWNER_URL to the server itself.",
          );
        await verbs.migrateKeepingChain(owner ?? runtime.env.DATABASE_URL!, {
          serviceRole: owner ? verbs.userOf(runtime.env.DATABASE_URL!) : undefined,
        });
      }
      say("Database schema is up to date.");
    }),
  );

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
  )
  .optionsGroup("LeRobot datasets:")
  .option("--dataset <id>", "the dataset's id (required)", datasetIdValue)
  .option("--version <x.y.z>", "the version to release (required)", versionValue)
  .option("--title <text>", "the dataset's title (default: as it is; a new dataset: its id)")
  .option("--description <text>", "the dataset's description (default: as it is)")
  .option("--released-at <time>", "release time, ISO 8601 with a time zone (default: now; on a re-import, as released)")
  .option("--changelog <file>", "a JSON file with the changelog entries, as in version.json")
  .option(
    "--episode-metadata <jsonl>",
    "JSON Lines of {episode_index, outcome?, environment?, contributor?, has_recovery?}",
  )
  .option("--annotations <jsonl>", "subtask spans in annotations.jsonl's format, keyed by episode_index or episode_id")
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
  )
  .examples(
    "das-admin import path/to/kitchen-pick-place-1.1.0",
    "das-admin import ./so100_pick --dataset so100-pick --version 1.0.0 --title 'SO-100 pick' --episode-metadata outcomes.jsonl --upload",
  )
  .action(
    onDatabase(async ({ ctx }, dir: string, options: ImportOptions) => {
      const found = statSync(dir, { throwIfNoEntry: false });
      if (!found)
        throw new UsageError(
          `${dir} does not exist: give the directory of the version to import (from ${process.cwd()}).`,
        );
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
        return;
      }
      if (!options.dataset || !options.version)
        throw new UsageError("An import of a LeRobot dataset needs --dataset ID and --version X.Y.Z.");
      const controller = new AbortController();
      // Every transfer in flight, and the SDK's wait before each retry, listens for the interruption
      // on this one signal: more than Node's default of 10 is expected, not a leak.
      setMaxListeners(options.concurrency * 4 + 10, controller.signal);
      const interrupt = () => {
        if (controller.signal.aborted) process.exit(130);
        say("\nInterrupted: rolling back (press Ctrl-C again to quit at once).");
        controller.abort(new Error("interrupted"));
      };
      process.on("SIGINT", interrupt);
      process.on("SIGTERM", interrupt);
      const location = options.upload ? verbs.storeLocation() : undefined;
      const client = location ? verbs.s3Client(location) : undefined;
      try {
        const result = await verbs.importLeRobotVersion((ctx.db as RootDb).$client, {
          dir,
          datasetId: options.dataset,
          version: options.version,
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
              ? {
                  client,
                  bucket: location.bucket,
                  keyOf: (p) => verbs.objectKey(options.dataset!, options.version!, p),
                }
              : undefined,
          concurrency: options.concurrency,
          progress: (totals) => new Progress(totals.files, totals.bytes, process.stderr),
          signal: controller.signal,
        });
        for (const line of describeLeRobotImport(result, { uploaded: Boolean(options.upload) })) say(line);
      } catch (error) {
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
        if (controller.signal.aborted) {
          say(
            "Interrupted: nothing was written to the catalog. Run the same command again to resume; files already in the store are not sent again.",
          );
          throw new Exit(130);
        }
        throw error;
      } finally {
        client?.destroy();
        process.off("SIGINT", interrupt);
        process.off("SIGTERM", interrupt);
      }
    }),
  );

const store = program.group("store", "The object store that holds the files.");

store
  .command("check")
  .summary("find files of a version missing from the store, and whether the portal may read them")
  .description(
    "Check that the object store holds every file of a version's manifest at its size, and that a browser on the portal's origin may read the version's data tables (the episode page's plots fetch them with Range requests, which the store must allow by CORS; video plays without it). Exit 1 listing the files the store does not hold, or naming what its CORS answer lacks and printing on standard output the rule to set, as PutBucketCors takes it.",
  )
  .argument("<dataset@version>", "the version, e.g. kitchen-pick-place@1.1.0", target)
  .option(
    "--origin <url>",
    "the portal's origin as browsers reach it (default: AUTH_URL's origin, else http://localhost:PORT)",
    portalOrigin,
  )
  .examples(
    "das-admin store check so100-pick@1.0.0",
    "das-admin store check so100-pick@1.0.0 --origin https://das.example.com > cors.json",
  )
  .action(
    onDatabase(async ({ ctx }, { datasetId, version }: Target, options: { origin?: string }) => {
      const location = verbs.storeLocation();
      const client = verbs.s3Client(location);
      try {
        const report = await verbs.checkVersionStore(
          ctx,
          { datasetId, version },
          { client, bucket: location.bucket, keyOf: (p) => verbs.objectKey(datasetId, version, p) },
        );
        const bad = report.missing.length + report.wrongSize.length;
        if (!bad) say(`All ${report.files} files of ${datasetId}@${version} are in the store at their sizes.`);
        else {
          say(`${bad} of ${report.files} files of ${datasetId}@${version} are not in the store as the manifest says:`);
          const lines = [
            ...report.missing.map((p) => `  missing: ${p}`),
            ...report.wrongSize.map(
              (w) => `  wrong size: ${w.path} (${w.actual} bytes, the manifest says ${w.expected})`,
            ),
          ];
          for (const line of lines.slice(0, 100)) say(line);
          if (lines.length > 100) say(`  ... and ${lines.length - 100} more`);
        }
        const corsRight = await checkPortalReads(report.dataTable, {
          origin:
            options.origin ?? portalOrigin(process.env.AUTH_URL ?? `http://localhost:${process.env.PORT ?? 3000}`),
          bucket: location.bucket,
          key: (p) => verbs.objectKey(datasetId, version, p),
        });
        if (bad || !corsRight) throw new Exit(1);
      } finally {
        client.destroy();
      }
    }),
  );

/** An origin (scheme, host and port) from a URL, for --origin and AUTH_URL. */
function portalOrigin(text: string): string {
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol))
    throw new UsageError(`'${text}' is not the portal's address: write it as https://das.example.com.`);
  return new URL(text).origin;
}

/**
 * The CORS check of `store check`: the browser's preflight and read of a data table's signed URL
 * from the portal's origin. On a refusal, says what is missing and prints the rule (PutBucketCors's
 * JSON) on standard output, to be saved and applied as it is.
 */
async function checkPortalReads(
  table: string | null,
  target: { origin: string; bucket: string; key: (path: string) => string },
): Promise<boolean> {
  if (!table) {
    say(
      "The version has no data tables: the episode page reads nothing from the store by fetch (video needs no CORS).",
    );
    return true;
  }
  const [url] = await verbs.presigner().presignKeys([target.key(table)], { signingDate: new Date(), expiresIn: 300 });
  const cors = await verbs.checkStoreCors(url!, target.origin);
  if (cors.ok) {
    say(`A browser on ${target.origin} may read the data tables from the store (CORS allows it): the plots work.`);
    return true;
  }
  say(
    `The episode page on ${target.origin} cannot plot this version's data: ${cors.problem}. ` +
      `Set this CORS rule on bucket ${target.bucket} (printed on standard output), for example with ` +
      `\`aws s3api put-bucket-cors --bucket ${target.bucket} --cors-configuration file://cors.json\`:`,
  );
  process.stdout.write(`${JSON.stringify(verbs.corsConfiguration(target.origin), null, 2)}\n`);
  return false;
}

const org = program.group("org", "Organisations.");

org
  .command("create")
  .description("create an organisation")
  .argument("<slug>", "its short name: lower-case letters, digits and dashes")
  .option("--name <name>", "its display name")
  .examples('das-admin org create initech --name "Initech"')
  .action(
    onDatabase(async ({ ctx }, slug: string, options: { name?: string }) => {
      const created = await verbs.createOrganization(ctx, { slug, name: options.name });
      say(`Created organisation ${created.slug} (${created.id}).`);
    }),
  );

org
  .command("list")
  .description("list the organisations, with their users, active licences and live keys")
  .option("--json", "print JSON instead of a table")
  .examples("das-admin org list", "das-admin org list --json")
  .action(
    onDatabase(async ({ ctx }, options: { json?: boolean }) => {
      printList(await verbs.listOrganizations(ctx), {
        json: options.json,
        none: "No organisations yet: das-admin org create SLUG --name NAME makes one.",
        columns: [
          { header: "SLUG", cell: (o: OrganizationRecord) => o.slug },
          { header: "NAME", cell: (o) => text(o.name) },
          { header: "USERS", cell: (o) => o.user_count },
          { header: "LICENCES", cell: (o) => o.active_licence_count },
          { header: "KEYS", cell: (o) => o.live_key_count },
          { header: "CREATED", cell: (o) => day(o.created_at) },
        ],
      });
    }),
  );

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
  .action(
    onDatabase(
      async (
        { ctx },
        options: {
          contributor?: string;
          episodes?: string;
          dataset?: string;
          reason: string;
          dryRun?: boolean;
          json?: boolean;
        },
      ) => {
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
      },
    ),
  );

const licence = program.group("licence", "Licences of organisations to dataset versions.");

licence
  .command("grant")
  .summary("grant a licence to a dataset version, for a term and under terms")
  .description(
    "Grant an organisation a licence to a dataset version (nothing changes if it holds one: `licence end` moves its end). " +
      "A date is a UTC day: --from starts at its beginning, --until includes the whole day; an instant (with its zone) is taken as it is, --until's excluded.",
  )
  .argument("<org>", "the organisation's slug")
  .argument("<dataset>", "the dataset's id")
  .argument("<version>", "the version, e.g. 1.1.0")
  .option("--from <date>", "usable from this date or instant (default: now)", termStart)
  .option("--until <date>", "usable until this date (included) or instant (default: no end)", termEnd)
  .option("--terms <sha256>", "the terms document it is granted under (das-admin terms list)", termsSha256)
  .examples(
    "das-admin licence grant acme-robotics kitchen-pick-place 2.0.0",
    "das-admin licence grant acme-robotics kitchen-pick-place 2.0.0 --from 2026-01-01 --until 2026-12-31 --terms 3f5c...",
  )
  .action(
    onDatabase(
      async (
        { ctx },
        slug: string,
        datasetId: string,
        version: string,
        options: { from?: Date; until?: Date; terms?: string },
      ) => {
        const holder = await organization(ctx, slug);
        await releasedVersion(ctx, datasetId, version);
        const granted = await verbs.grantLicence(ctx, {
          organizationId: holder.id,
          datasetId,
          version,
          startsAt: options.from,
          endsAt: options.until ?? null,
          termsSha256: options.terms ?? null,
        });
        const held = (await verbs.listLicences(ctx, { organizationId: holder.id })).find((l) => l.id === granted.id)!;
        say(
          `${granted.created ? "Granted" : "Already held:"} licence ${granted.id} for ${datasetId}@${version} to ${slug}, ` +
            `${termOf(held)}${held.terms_sha256 ? `, under terms ${held.terms_sha256}` : ""}.`,
        );
        if (!granted.created && (options.from || options.until || options.terms))
          say(
            `Its term and terms were left as they are; das-admin licence end ${slug} ${datasetId} ${version} --at DATE moves its end.`,
          );
      },
    ),
  );

licence
  .command("end")
  .summary("end a licence early, or extend it")
  .description(
    "Move the end of an organisation's licence (not revoked) to a date or instant: earlier ends it early, later extends it, even after it ended. A date includes the whole UTC day. Audited.",
  )
  .argument("<org>", "the organisation's slug")
  .argument("<dataset>", "the dataset's id")
  .argument("<version>", "the version, e.g. 1.1.0")
  .requiredOption("--at <date>", "usable until this date (included) or instant (excluded)", termEnd)
  .examples(
    "das-admin licence end acme-robotics kitchen-pick-place 2.0.0 --at 2026-06-30",
    "das-admin licence end acme-robotics kitchen-pick-place 2.0.0 --at 2026-03-01T12:00:00Z",
  )
  .action(
    onDatabase(async ({ ctx }, slug: string, datasetId: string, version: string, options: { at: Date }) => {
      const holder = await organization(ctx, slug);
      await releasedVersion(ctx, datasetId, version);
      const ended = await verbs.endLicence(ctx, { organizationId: holder.id, datasetId, version, endsAt: options.at });
      say(
        `Licence ${ended.id} for ${datasetId}@${version} of ${slug} now ends at ${ended.endsAt.toISOString()} ` +
          `(it ${ended.previousEndsAt ? `ended at ${ended.previousEndsAt.toISOString()}` : "had no end"}).`,
      );
    }),
  );

licence
  .command("revoke")
  .summary("revoke a licence to a dataset version")
  .description("Revoke an organisation's licence to a dataset version.")
  .argument("<org>", "the organisation's slug")
  .argument("<dataset>", "the dataset's id")
  .argument("<version>", "the version, e.g. 1.1.0")
  .examples("das-admin licence revoke acme-robotics kitchen-pick-place 1.0.0")
  .action(
    onDatabase(async ({ ctx }, slug: string, datasetId: string, version: string) => {
      const holder = await organization(ctx, slug);
      await releasedVersion(ctx, datasetId, version);
      const revoked = await verbs.revokeLicence(ctx, { organizationId: holder.id, datasetId, version });
      say(`Revoked licence ${revoked.id} for ${datasetId}@${version} from ${slug}.`);
    }),
  );

licence
  .command("list")
  .description("list the licences, active and revoked, by organisation and dataset version")
  .option("--org <slug>", "only this organisation's")
  .option("--active", "only licences usable now: not revoked, started and not ended")
  .option("--json", "print JSON instead of a table")
  .examples("das-admin licence list", "das-admin licence list --org acme-robotics --active")
  .action(
    onDatabase(async ({ ctx }, options: { org?: string; active?: boolean; json?: boolean }) => {
      const holder = options.org ? await organization(ctx, options.org) : undefined;
      const licences = (await verbs.listLicences(ctx, { organizationId: holder?.id })).filter(
        (l) => !options.active || licenceStatus(l) === "active",
      );
      printList(licences, {
        json: options.json,
        none: `No ${options.active ? "active " : ""}licences${holder ? ` of ${holder.slug}` : ""}: das-admin licence grant ORG DATASET VERSION grants one.`,
        columns: [
          { header: "ORGANISATION", cell: (l: LicenceRecord) => l.organization_slug },
          { header: "DATASET", cell: (l) => l.dataset_id },
          { header: "VERSION", cell: (l) => l.version },
          { header: "STATUS", cell: (l) => licenceStatus(l) },
          { header: "GRANTED", cell: (l) => day(l.granted_at) },
          { header: "STARTS", cell: (l) => minute(l.starts_at) },
          { header: "ENDS", cell: (l) => minute(l.ends_at) },
          { header: "TERMS", cell: (l) => (l.terms_sha256 ? l.terms_sha256.slice(0, 12) : "") },
          { header: "REVOKED", cell: (l) => day(l.revoked_at) },
        ],
      });
    }),
  );

const terms = program.group("terms", "Terms documents (data-use agreements) licences are granted under.");

terms
  .command("add")
  .summary("add a terms document from a Markdown file")
  .description(
    "Add a terms document: its title and the exact text of a Markdown file, identified by the SHA-256 of those bytes. Documents never change: a new wording is a new document. Adding the same text again returns the one there.",
  )
  .requiredOption("--title <title>", "its title")
  .requiredOption("--file <path>", "the Markdown file (UTF-8)")
  .option("--dataset <id>", "the one dataset it is for (default: any)", datasetIdValue)
  .examples('das-admin terms add --title "Data-use agreement 2026" --file dua-2026.md [--dataset kitchen-pick-place]')
  .action(
    onDatabase(async ({ ctx }, options: { title: string; file: string; dataset?: string }) => {
      const bytes = readTermsFile(options.file);
      const added = await verbs.addTerms(ctx, {
        title: options.title,
        body: bytes,
        datasetId: options.dataset ?? null,
      });
      say(
        `${added.created ? "Added" : "Already there:"} terms '${added.document.title}' (${added.document.bytes} bytes${added.document.dataset_id ? `, for ${added.document.dataset_id}` : ""}).`,
      );
      process.stdout.write(`${added.document.sha256}\n`);
    }),
  );

terms
  .command("list")
  .description("list the terms documents, newest first")
  .option("--json", "print JSON instead of a table")
  .examples("das-admin terms list", "das-admin terms list --json")
  .action(
    onDatabase(async ({ ctx }, options: { json?: boolean }) => {
      printList(await verbs.listTerms(ctx), {
        json: options.json,
        none: "No terms documents yet: das-admin terms add --title T --file F adds one.",
        columns: [
          { header: "SHA256", cell: (t: TermsRecord) => t.sha256 },
          { header: "TITLE", cell: (t) => text(t.title, 40) },
          { header: "DATASET", cell: (t) => t.dataset_id ?? "any" },
          { header: "BYTES", cell: (t) => t.bytes },
          { header: "ADDED", cell: (t) => day(t.created_at) },
          { header: "BY", cell: (t) => text(t.created_by, 30) },
        ],
      });
    }),
  );

terms
  .command("show")
  .description("print a terms document's text exactly as added (its title and origin on stderr)")
  .argument("<sha256>", "the document's SHA-256", termsSha256)
  .option("--json", "print JSON (with the text) instead")
  .examples("das-admin terms show 3f5c... > terms.md")
  .action(
    onDatabase(async ({ ctx }, sha256: string, options: { json?: boolean }) => {
      const document = await verbs.requireTerms(ctx, sha256);
      if (options.json) return void process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
      say(
        `'${document.title}', ${document.dataset_id ? `for ${document.dataset_id}` : "for any dataset"}, added ${document.created_at} by ${document.created_by}.`,
      );
      process.stdout.write(document.body);
    }),
  );

const key = program.group("key", "API keys of organisations.");

key
  .command("create")
  .summary("issue an API key (the secret alone on stdout)")
  .description(
    "Issue an API key for an organisation. The secret is printed alone on stdout, and only now; what was done goes to stderr.",
  )
  .argument("<org>", "the organisation's slug")
  .option("--name <name>", "a name to tell the key by", "cli")
  .option("--expires-in <duration>", "expire after this long: 90s, 15m, 12h, 30d or 2w (default: never)", duration)
  .option(
    "--scope <dataset@version>",
    "narrow the key to one licensed version; repeat for more (default: every licence)",
    repeatable(datasetVersion),
  )
  .examples(
    "das-admin key create acme-robotics --name training --expires-in 90d",
    "das-admin key create acme-robotics --scope kitchen-pick-place@1.1.0 > key.txt",
  )
  .action(
    onDatabase(async ({ ctx }, slug: string, options: { name: string; expiresIn?: number; scope?: Target[] }) => {
      const holder = await organization(ctx, slug);
      const issued = await verbs.issueKey(ctx, {
        organizationId: holder.id,
        name: options.name,
        expiresAt: options.expiresIn ? new Date(Date.now() + options.expiresIn) : null,
        scope: options.scope ?? [],
      });
      say(
        `Issued key ${issued.prefix}… (${issued.id}) for ${slug}${issued.expiresAt ? `, expires ${issued.expiresAt.toISOString()}` : ""}. It is shown only now:`,
      );
      process.stdout.write(`${issued.secret}\n`);
    }),
  );

key
  .command("revoke")
  .description("revoke an API key by its display prefix or its id")
  .argument("<key>", "the key's prefix as shown (das_AbCdEfGh) or its id (key_...)")
  .examples("das-admin key revoke das_AbCdEfGh")
  .action(
    onDatabase(async ({ ctx }, ref: string) => {
      const revoked = await verbs.revokeKey(ctx, ref.startsWith("key_") ? { id: ref } : { prefix: ref });
      say(`Revoked key ${revoked.prefix}… (${revoked.id}).`);
    }),
  );

key
  .command("list")
  .summary("list the API keys (never their secrets)")
  .description(
    "List the API keys, newest first: prefix, organisation, name, status, expiry, last use and narrowing. A key's secret is shown only when it is issued and is never stored, so never listed.",
  )
  .option("--org <slug>", "only this organisation's")
  .addOption(new Option("--status <status>", "only keys of this status").choices(KEY_STATUSES))
  .option("--json", "print JSON instead of a table")
  .examples("das-admin key list", "das-admin key list --org acme-robotics --status active --json")
  .action(
    onDatabase(async ({ ctx }, options: { org?: string; status?: KeyStatus; json?: boolean }) => {
      const holder = options.org ? await organization(ctx, options.org) : undefined;
      printList(await verbs.listKeys(ctx, { organizationId: holder?.id, status: options.status }), {
        json: options.json,
        none: `No ${options.status ? `${options.status} ` : ""}API keys${holder ? ` of ${holder.slug}` : ""}: das-admin key create ORG issues one.`,
        columns: [
          { header: "KEY", cell: (k: KeyRecord) => `${k.prefix}…` },
          { header: "ORGANISATION", cell: (k) => k.organization_slug },
          { header: "NAME", cell: (k) => text(k.name, 30) },
          { header: "STATUS", cell: (k) => k.status },
          { header: "EXPIRES", cell: (k) => day(k.expires_at) },
          { header: "LAST USED", cell: (k) => minute(k.last_used_at) },
          {
            header: "SCOPE",
            cell: (k) => (k.narrowed ? k.scope.map((s) => `${s.dataset_id}@${s.version}`).join(", ") : "all licences"),
          },
        ],
      });
    }),
  );

const webhook = program.group(
  "webhook",
  "Webhook endpoints that organisations' notices are posted to, and every attempt.",
);

webhook
  .command("add")
  .summary("register a webhook endpoint (the signing secret alone on stdout)")
  .description(
    "Register a URL that the organisation's notices are posted to, signed per the Standard Webhooks specification. The signing secret (whsec_...) is printed alone on stdout, and only now. A URL whose host resolves to a loopback, private or link-local address is refused unless WEBHOOKS_ALLOW_PRIVATE=1. Audited.",
  )
  .requiredOption("--org <slug>", "the organisation's slug")
  .argument("<url>", "an http:// or https:// URL")
  .option("--description <text>", "what the endpoint is, for the listing")
  .examples("das-admin webhook add --org acme-robotics https://hooks.acme.example/das > whsec.txt")
  .action(
    onDatabase(async ({ ctx }, url: string, options: { org: string; description?: string }) => {
      const holder = await organization(ctx, options.org);
      const added = await verbs.addWebhookEndpoint(ctx, {
        organizationId: holder.id,
        url,
        description: options.description,
      });
      say(`Added webhook ${added.id} for ${holder.slug}: ${added.url}. Its signing secret is shown only now:`);
      process.stdout.write(`${added.secret}\n`);
    }),
  );

webhook
  .command("list")
  .description("list the webhook endpoints (never their secrets)")
  .option("--org <slug>", "only this organisation's")
  .option("--all", "removed endpoints too")
  .option("--json", "print JSON instead of a table")
  .examples("das-admin webhook list --org acme-robotics")
  .action(
    onDatabase(async ({ ctx }, options: { org?: string; all?: boolean; json?: boolean }) => {
      const holder = options.org ? await organization(ctx, options.org) : undefined;
      printList(await verbs.listWebhookEndpoints(ctx, { organizationId: holder?.id, includeRemoved: options.all }), {
        json: options.json,
        none: `No webhook endpoints${holder ? ` of ${holder.slug}` : ""}: das-admin webhook add --org SLUG URL registers one.`,
        columns: [
          { header: "ID", cell: (w: WebhookEndpointRecord) => w.id },
          { header: "ORGANISATION", cell: (w) => w.organization_slug },
          { header: "URL", cell: (w) => text(w.url, 60) },
          { header: "DESCRIPTION", cell: (w) => text(w.description) },
          { header: "ADDED", cell: (w) => day(w.created_at.toISOString()) },
          { header: "REMOVED", cell: (w) => day(w.removed_at?.toISOString() ?? null) },
        ],
      });
    }),
  );

webhook
  .command("remove")
  .description("stop delivering to a webhook endpoint (its attempts stay listed); audited")
  .argument("<id>", "the endpoint's id (whk_...)")
  .option("--org <slug>", "refuse unless it is this organisation's")
  .examples("das-admin webhook remove whk_4fQ... --org acme-robotics")
  .action(
    onDatabase(async ({ ctx }, id: string, options: { org?: string }) => {
      const holder = options.org ? await organization(ctx, options.org) : undefined;
      const removed = await verbs.removeWebhookEndpoint(ctx, { id, organizationId: holder?.id });
      say(`Removed webhook ${removed.id} (${removed.url}).`);
    }),
  );

webhook
  .command("attempts")
  .description("list delivery attempts of notices, webhook and email, newest first")
  .option("--org <slug>", "only to this organisation")
  .option("--endpoint <id>", "only to this webhook endpoint")
  .option("--notice <id>", "only of this notice")
  .option("--limit <n>", "at most this many, 1 to 10000", wholeNumberFrom(1, 10_000), 50)
  .option("--json", "print JSON instead of a table")
  .examples("das-admin webhook attempts --org acme-robotics", "das-admin webhook attempts --notice ntc_... --json")
  .action(
    onDatabase(
      async ({ ctx }, options: { org?: string; endpoint?: string; notice?: string; limit: number; json?: boolean }) => {
        const holder = options.org ? await organization(ctx, options.org) : undefined;
        const attempts = await verbs.listDeliveryAttempts(ctx, {
          organizationId: holder?.id,
          endpointId: options.endpoint,
          noticeId: options.notice,
          limit: options.limit,
        });
        printList(attempts, {
          json: options.json,
          none: "No delivery attempts yet.",
          columns: [
            { header: "TIME", cell: (a: DeliveryAttemptRecord) => seconds(a.attempted_at) },
            { header: "CHANNEL", cell: (a) => a.channel },
            { header: "ORGANISATION", cell: (a) => a.organization_slug },
            { header: "TO", cell: (a) => (a.endpoint_id ? `${a.endpoint_id} ${text(a.endpoint_url, 40)}` : "users") },
            { header: "NOTICE", cell: (a) => a.notice_id },
            { header: "TRY", cell: (a) => a.attempt },
            {
              header: "RESULT",
              cell: (a) => (a.delivered ? `delivered ${a.status_code ?? ""}`.trim() : text(a.error ?? "failed", 50)),
            },
            { header: "NEXT TRY", cell: (a) => (a.next_retry_at ? seconds(a.next_retry_at) : "-") },
          ],
        });
      },
    ),
  );

program
  .command("worker")
  .summary("deliver queued notices and make licences' copies until stopped")
  .description(
    "Work the job queue in this process until interrupted (SIGINT or SIGTERM), finishing the work in flight: notice deliveries (webhooks, email), the hourly schedule of licence-end warnings and reminders of withdrawal notices not acknowledged, and the licences' copies of fingerprinted versions. Every server started with npm start already runs both workers unless NOTICE_WORKER=off or COPY_WORKER=off: run this where the servers do not.",
  )
  .examples("NOTICE_WORKER=off COPY_WORKER=off npm start   # and elsewhere: das-admin worker")
  .action(
    onDatabase(async ({ ctx, runtime }) => {
      const url = runtime.env.DATABASE_URL!;
      const workers = [
        await verbs.startNoticeWorker({ url, db: ctx.db }),
        await verbs.startCopyWorker({ url, db: ctx.db }),
      ];
      say("Delivering notices and making licences' copies; press Ctrl-C to stop.");
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      say("Stopping: finishing the work in flight.");
      await Promise.all(workers.map((w) => w.stop()));
    }),
  );

const user = program.group("user", "Users of the portal.");

user
  .command("create")
  .summary("create a portal user (password on stdin)")
  .description("Create a portal user. The password is read from stdin: piped, or typed at a hidden prompt.")
  .argument("<email>", "the address they sign in with")
  .needs("--role <role>", "what they may do", USER_ROLES)
  .option("--org <slug>", "the organisation a licensee belongs to")
  .option("--name <name>", "their display name")
  .examples("echo 'a long password' | das-admin user create carol@acme.example --role licensee --org acme-robotics")
  .action(
    onDatabase(async ({ ctx }, email: string, options: { role: UserRole; org?: string; name?: string }) => {
      const holder = options.org ? await organization(ctx, options.org) : undefined;
      const password = await readPassword(`Password for ${email}: `);
      const created = await verbs.createUser(ctx, {
        email,
        role: options.role,
        organizationId: holder?.id,
        password,
        name: options.name,
      });
      say(`Created ${created.role} ${created.email} (${created.id}).`);
    }),
  );

user
  .command("list")
  .description("list the portal users by email, with their role, organisation and whether they are disabled")
  .addOption(new Option("--role <role>", "only users of this role").choices(USER_ROLES))
  .option("--org <slug>", "only this organisation's members")
  .option("--json", "print JSON instead of a table")
  .examples("das-admin user list", "das-admin user list --role licensee --org acme-robotics")
  .action(
    onDatabase(async ({ ctx }, options: { role?: UserRole; org?: string; json?: boolean }) => {
      const holder = options.org ? await organization(ctx, options.org) : undefined;
      printList(await verbs.listUsers(ctx, { role: options.role, organizationId: holder?.id }), {
        json: options.json,
        none: "No portal users match: das-admin user create EMAIL --role ROLE creates one.",
        columns: [
          { header: "EMAIL", cell: (u: UserRecord) => u.email },
          { header: "ROLE", cell: (u) => u.role },
          { header: "ORGANISATION", cell: (u) => u.organization_slug ?? "-" },
          { header: "NAME", cell: (u) => text(u.name, 30) },
          { header: "STATUS", cell: (u) => (u.disabled_at ? "disabled" : "active") },
          { header: "CREATED", cell: (u) => day(u.created_at) },
        ],
      });
    }),
  );

const dataset = program.group("dataset", "Datasets and their released versions.");

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

program
  .command("trace")
  .summary("name the licence a leaked file came from")
  .description(
    "Name the licence (organisation, dataset, version, licence id, the downloads that delivered it) that each file came from: by its sha256 for a licence's copy delivered as it was; by the token a copy carries while its metadata or trailer survives; and for a frame table that was changed (a subset or reordering of rows, a cast to float64, a re-save by pandas or pyarrow, a conversion to CSV) by testing each licence's mark against it, with a p-value (multiplied by the number of licences tested): a licence is named below --alpha, otherwise 'no licence'. A directory (a LeRobot dataset, a Hugging Face snapshot) is read file by file. Exit 0 when every file was read, whatever was found.",
  )
  .argument("<file...>", "files or directories")
  .option("--json", "print one JSON document: {files: [...]}")
  .option("--alpha <p>", "name a licence when its p-value is below this", probability, 1e-6)
  .examples("das-admin trace leaked.parquet", "das-admin trace --json ~/Downloads/suspicious-dataset")
  .action(
    onDatabase(async ({ ctx }, inputs: string[], options: { json?: boolean; alpha: number }) => {
      const traced: FileTrace[] = [];
      for await (const file of tracedFiles(inputs)) {
        const trace = await verbs.traceFile(ctx, file, { alpha: options.alpha });
        traced.push(trace);
        if (!options.json) say(describeTrace(trace));
      }
      if (options.json) process.stdout.write(`${JSON.stringify({ files: traced }, null, 2)}\n`);
    }),
  );

/** One file's trace for a person: the verdict, and who and when for each licence named. */
function describeTrace(t: FileTrace): string {
  const lines = [`${t.file}: ${t.verdict} (${t.detail})`];
  for (const l of t.licences) {
    const p = l.mark
      ? `, p = ${l.mark.p_value === 0 ? `1e${Math.round(l.mark.log10_p_value)}` : l.mark.p_value.toExponential(1)}`
      : "";
    lines.push(
      `  licence ${l.licence_id} of ${l.organization_slug} (${l.organization_name}) for ${l.dataset_id}@${l.version}${l.revoked ? ", revoked" : ""}${p}`,
    );
    for (const d of l.deliveries.slice(0, 10))
      lines.push(
        `    delivered by ${d.id} (${d.channel}) at ${d.occurred_at}${d.api_key_id ? ` to key ${d.api_key_id}` : d.user_id ? ` to user ${d.user_id}` : ""}`,
      );
    if (l.deliveries.length > 10) lines.push(`    and ${l.deliveries.length - 10} more deliveries`);
  }
  return lines.join("\n");
}

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

const disclosures = program.group("disclosures", "The disclosure log: every download, hash-chained.");

disclosures
  .command("verify")
  .summary("check the log's hash chain; exit 1 at a bad entry")
  .description(
    "Check the disclosure log's hash chain; exit 1 naming the first entry that does not verify. By default only the entries after the last verified checkpoint (and that the checkpoint's entry still holds its hash); --full walks every entry from the first, printing progress (what a periodic job runs); --digests also checks the log against every signed head digest in the object store.",
  )
  .option("--full", "walk every entry from the first, not only those after the last checkpoint")
  .option("--digests", "check every signed head digest and the log against each (includes --full)")
  .option(
    "--threads <n>",
    "threads of a full walk, each with a database connection (default: one per core)",
    positiveWholeNumber,
  )
  .examples(
    "das-admin disclosures verify",
    "das-admin disclosures verify --full",
    "DIGEST_PUBLIC_KEY=reviewers.pem das-admin disclosures verify --digests",
  )
  .action(
    onDatabase(async ({ ctx, runtime }, options: { full?: boolean; digests?: boolean; threads?: number }) => {
      const progress = progressPrinter();
      // A full walk is spread over threads, each with a connection of its own; an incremental one is short.
      // On the read replica when there is one (DATABASE_REPLICA_URL): the walk's reads then never
      // evict what the primary serves from memory; the checkpoint it reaches is written on the primary.
      const ranges =
        options.full || options.digests
          ? verbs.parallelRangeChecker(process.env.DATABASE_REPLICA_URL || runtime.env.DATABASE_URL!, {
              threads: options.threads,
            })
          : undefined;
      try {
        await verify(ctx, options, progress, ranges);
      } finally {
        await ranges?.close();
      }
    }),
  );

async function verify(
  ctx: Ctx,
  options: { full?: boolean; digests?: boolean },
  progress: (p: VerifyProgress) => void,
  ranges: RangeChecker | undefined,
) {
  if (options.digests) {
    const result = await verbs.verifyDigests(ctx, verbs.digestConfigFromEnv("verify"), {
      onProgress: progress,
      ranges,
    });
    if (result.findings.length) {
      say(
        `Disclosure log does NOT agree with its digests (${result.findings.length} ${result.findings.length === 1 ? "finding" : "findings"}):`,
      );
      for (const finding of result.findings) say(`  - ${finding}`);
      throw new Exit(1);
    }
    say(
      `Disclosure log agrees with all ${result.digests} digests (newest ${result.newest!.key}, seq ${result.newest!.digest.seq}); ` +
        `the chain verifies from the first entry to seq ${result.head!.count}, head hash ${result.head!.headHash}.`,
    );
    return;
  }
  const verification = await verbs.verifyChainDetailed(ctx, {
    mode: options.full ? "full" : "incremental",
    onProgress: options.full ? progress : undefined,
    ranges,
  });
  const report = verification.report;
  if (!report.intact) {
    say(
      `Disclosure log BROKEN at seq ${report.firstBadSeq}: ${report.reason}. ${report.count} entries before it verify.`,
    );
    throw new Exit(1);
  }
  const from = verification.from;
  if (!from) {
    say(`Disclosure log intact: ${report.count} entries verified, head hash ${report.headHash}.`);
  } else {
    say(
      `Disclosure log intact: ${report.count} entries, head hash ${report.headHash}; ${verification.entriesChecked} new entries verified after seq ${from.seq}, ` +
        `whose hash still matches its verification of ${from.verifiedAt.toISOString()}. --full walks every entry.`,
    );
  }
}

disclosures
  .command("digest")
  .summary("write a signed digest of the log's head to the object store")
  .description(
    "Write a signed digest of the disclosure log's head (seq, hash, time, link to the previous digest) to DIGEST_BUCKET under DIGEST_PREFIX, signed with DIGEST_SIGNING_KEY. With --public-key, print the public key reviewers verify digests with (PEM, to stdout) instead.",
  )
  .option("--public-key", "print the public key (PEM) and write nothing")
  .examples("das-admin disclosures digest", "das-admin disclosures digest --public-key > digest-public-key.pem")
  .action(
    onDatabase(async ({ ctx }, options: { publicKey?: boolean }) => {
      if (options.publicKey) {
        const key = verbs.digestPublicKeyFromEnv();
        process.stdout.write(verbs.publicKeyPem(key));
        say(`Public key sha256 ${verbs.publicKeySha256(key)}.`);
        return;
      }
      const result = await verbs.writeHeadDigest(ctx, verbs.digestConfigFromEnv("sign"));
      if (!result.written) {
        say("Nothing to digest: the disclosure log is empty.");
        return;
      }
      say(
        `Digest written: s3://${result.bucket}/${result.key} (seq ${result.digest.seq}, hash ${result.digest.hash}).`,
      );
    }),
  );

/** A long walk's progress on stderr, at most once a second (a short walk prints none). */
function progressPrinter() {
  let lastPrinted = performance.now();
  return (p: VerifyProgress) => {
    if (performance.now() - lastPrinted < 1000) return;
    lastPrinted = performance.now();
    say(
      `verified ${p.entriesDone.toLocaleString("en")} entries (to seq ${p.seq}), ${p.entriesPerSecond.toLocaleString("en")} entries/s`,
    );
  };
}

disclosures
  .command("export")
  .summary("stream the log, or part of it, to stdout")
  .description("Stream the disclosure log, or the entries that match the filters, to stdout; the count goes to stderr.")
  .needs("--format <format>", "CSV or JSON Lines", ["csv", "jsonl"])
  .option("--from <time>", "entries at or after this date (UTC) or ISO 8601 instant", timeBound)
  .option("--to <time>", "entries up to and including this date (the whole UTC day) or ISO 8601 instant", timeBound)
  .option("--org <slug>", "entries of this organisation ('-': none, that is reviewers' and admins' previews)")
  .option("--key <prefix>", "entries made with the API key of this prefix")
  .option("--user <email>", "entries made by this portal user")
  .option("--dataset <id>", "entries of this dataset")
  .option("--version <version>", "entries of this version (of any dataset, or of --dataset)")
  .option("--episode <id>", "entries that disclosed this episode")
  .option("--contributor <name>", "entries that disclosed any of this contributor's episodes")
  .addOption(new Option("--channel <channel>", "entries of this channel").choices(DISCLOSURE_CHANNELS))
  .option("--licence <id>", "entries delivered under this licence")
  .option("--terms <sha256>", "entries delivered under a licence with this terms document")
  .examples(
    "das-admin disclosures export --format csv --from 2026-01-01 --org acme-robotics > acme-2026.csv",
    "das-admin disclosures export --format jsonl --contributor op-7 --channel api",
  )
  .action(
    onDatabase(async ({ ctx }, options: ExportOptions) => {
      // An operator's typo names no organisation: said so, rather than exporting nothing.
      if (options.org && options.org !== checks.NO_ORGANIZATION) await organization(ctx, options.org);
      const { format: _format, ...search } = options;
      const { filter, problems } = verbs.disclosureFilter(search);
      if (problems.length) throw new Error(problems.join(" "));
      let rows = 0;
      for await (const text of verbs.exportDisclosures(ctx, filter, options.format, { onRows: (n) => (rows += n) })) {
        if (!process.stdout.write(text))
          await new Promise<void>((resolve) => process.stdout.once("drain", () => resolve()));
      }
      say(`Exported ${rows} entries.`);
    }),
  );

disclosures
  .command("months")
  .summary("make the log's months ahead, close the months that have ended, and list them")
  .description(
    "The log is partitioned by month (UTC). Make the current month and the next three where missing, close every month that has ended (walk the chain through its last entry, record a checkpoint there and, with DIGEST_SIGNING_KEY, a signed digest of what it held in the archive bucket), then list every month: online or archived, and what a closed one holds. Each server does the same every DISCLOSURE_MONTHS_INTERVAL_MINUTES.",
  )
  .option("--json", "print the months as JSON")
  .examples("das-admin disclosures months", "das-admin disclosures months --json")
  .action(
    onDatabase(async ({ ctx }, options: { json?: boolean }) => {
      const made = await verbs.ensureMonthsAhead(verbs.sqlOf(ctx.db));
      if (made) say(`Made ${made} partitions ahead.`);
      const closed = await verbs.closeEndedMonths(ctx, {
        store: verbs.archiveStoreFromEnv(),
        signingKey: verbs.monthSigningKeyFromEnv(),
      });
      for (const m of closed)
        say(
          `Closed ${m.month}: ${m.entries} entries, seq ${m.firstSeq} to ${m.lastSeq}${m.digestKey ? `, digest ${m.digestKey}` : ", no digest (no DIGEST_SIGNING_KEY)"}.`,
        );
      printList(await verbs.listMonths(ctx), {
        json: options.json,
        none: "The log has no months yet.",
        columns: [
          { header: "MONTH", cell: (m) => m.month },
          { header: "WHERE", cell: (m) => (m.archive === "archived" ? "archived" : m.online ? "online" : "-") },
          { header: "CLOSED", cell: (m) => (m.closed ? "yes" : "no") },
          { header: "ENTRIES", cell: (m) => (m.closed ? m.closed.entries : "") },
          { header: "SEQ", cell: (m) => (m.closed ? `${m.closed.firstSeq}-${m.closed.lastSeq}` : "") },
          { header: "DIGEST", cell: (m) => m.closed?.digestKey ?? "" },
        ],
      });
    }),
  );

disclosures
  .command("archive")
  .summary("move a closed month of the log to the object store")
  .description(
    "Export a closed month's five partitions (entries, episodes, files, both summaries) with COPY, gzipped, into DISCLOSURE_ARCHIVE_BUCKET under DISCLOSURE_ARCHIVE_PREFIX/YYYY-MM/ beside the month's signed digest, with a manifest; read the archive back and check it (every object's SHA-256 and rows, the chain from the hash before the month to its last hash, the digest's signature); only then detach the partitions (concurrently), record the month as archived and drop them. Runs as the tables' owner (DATABASE_OWNER_URL). Never the month holding the chain's newest entry; never a month without its checkpoint and digest.",
  )
  .needs("--month <month>", "the month, YYYY-MM (UTC)", monthValue)
  .examples("das-admin disclosures archive --month 2026-11")
  .action(
    asOwner(async (ctx, options: { month: string }) => {
      const result = await verbs.archiveMonth(ctx, options.month, {
        store: verbs.archiveStoreFromEnv(),
        publicKey: verbs.monthPublicKeyFromEnv(),
        onStep: (step) => say(`${options.month}: ${step}`),
      });
      say(
        `Archived ${result.month}: ${result.entries} entries, ${result.tables.reduce((n, t) => n + t.bytes, 0).toLocaleString("en")} bytes in ${result.manifestKey} and beside it; its partitions are dropped.`,
      );
    }),
  );

disclosures
  .command("restore")
  .summary("attach an archived month of the log again")
  .description(
    "Read an archived month from the object store, check it as archive does, and attach it again as the month's partitions (as the tables' owner, DATABASE_OWNER_URL); `verify --full` then walks it as before it was archived.",
  )
  .needs("--month <month>", "the month, YYYY-MM (UTC)", monthValue)
  .examples("das-admin disclosures restore --month 2026-11")
  .action(
    asOwner(async (ctx, options: { month: string }) => {
      const result = await verbs.restoreMonth(ctx, options.month, {
        store: verbs.archiveStoreFromEnv(),
        publicKey: verbs.monthPublicKeyFromEnv(),
        onStep: (step) => say(`${options.month}: ${step}`),
      });
      say(`Restored ${result.month}: ${result.entries} entries are in the database again.`);
    }),
  );

type ExportOptions = { format: "csv" | "jsonl" } & Pick<
  DisclosureSearch,
  | "from"
  | "to"
  | "org"
  | "key"
  | "user"
  | "dataset"
  | "version"
  | "episode"
  | "contributor"
  | "channel"
  | "licence"
  | "terms"
>;

/** The organisation of a slug, or a refusal that names the slugs there are. */
async function organization(ctx: Ctx, slug: string) {
  try {
    return await verbs.organizationBySlug(ctx, slug);
  } catch (error) {
    if (!(error instanceof AppError && error.code === "not_found")) throw error;
    const slugs = (await verbs.listOrganizations(ctx)).map((o) => o.slug);
    throw new AppError(
      "not_found",
      slugs.length
        ? `No organisation '${slug}'. The organisations are: ${choices(slugs)} (das-admin org list).`
        : `No organisation '${slug}': there are none yet. das-admin org create ${slug} makes it.`,
    );
  }
}

/** Checks that a dataset has the version, or refuses naming the datasets or versions there are. */
async function releasedVersion(ctx: Ctx, datasetId: string, version: string): Promise<void> {
  const all = await verbs.listVersionChoices(ctx);
  const versions = all.filter((v) => v.dataset_id === datasetId).map((v) => v.version);
  if (versions.includes(version)) return;
  if (versions.length)
    throw new AppError(
      "not_found",
      `Dataset '${datasetId}' has no version '${version}'. Its versions are: ${choices(versions)}.`,
    );
  const datasets = [...new Set(all.map((v) => v.dataset_id))];
  throw new AppError(
    "not_found",
    datasets.length
      ? `No dataset '${datasetId}'. The datasets are: ${choices(datasets)} (das-admin dataset list shows their versions).`
      : `No dataset '${datasetId}': none is imported yet (das-admin import DIR).`,
  );
}

const flagOf = (name: string) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

function datasetIdValue(text: string): string {
  if (!checks.DATASET_ID_PATTERN.test(text))
    throw new InvalidArgumentError("takes a dataset id: lower-case letters, digits, '.', '_' or '-' (at most 100).");
  return text;
}

function versionValue(text: string): string {
  if (!VERSION_PATTERN.test(text))
    throw new InvalidArgumentError("takes a version of three dot-separated numbers, e.g. 1.2.0.");
  return text;
}

/** A default for an episode field, checked by the same rule as the field itself. */
function facetValue(field: "outcome" | "environment" | "contributor") {
  return (text: string): string => {
    const checked = checks.EpisodeLine.shape[field].safeParse(text);
    if (!checked.success)
      throw new InvalidArgumentError(`${checked.error.issues[0]!.message.replace(`${field} `, "")}.`);
    return text;
  };
}

/** --month: a month of the log, YYYY-MM, checked here so that a bad one is a usage error. */
function monthValue(text: string): string {
  if (!checks.parseMonth(text)) throw new InvalidArgumentError(`takes a month like 2026-11, not '${text}'.`);
  return text;
}

/** --from and --to: a date or an instant as the disclosure filter reads them, checked here so that a bad one is a usage error. */
function timeBound(text: string): string {
  if (!checks.parseTimeBound(text))
    throw new InvalidArgumentError(`takes an ISO 8601 date or date-time, not '${text}'.`);
  return text;
}

/** --from: a date (the start of that UTC day) or an instant with its zone. */
function termStart(text: string): Date {
  const bound = checks.parseTimeBound(text);
  if (!bound) throw new InvalidArgumentError(`takes an ISO 8601 date or date-time with its zone, not '${text}'.`);
  return bound.at;
}

/** --until and --at: a date includes the whole UTC day (the licence ends at the next midnight); an instant is the end itself. */
function termEnd(text: string): Date {
  const bound = checks.parseTimeBound(text);
  if (!bound) throw new InvalidArgumentError(`takes an ISO 8601 date or date-time with its zone, not '${text}'.`);
  return bound.wholeDay ? new Date(bound.at.getTime() + 86_400_000) : bound.at;
}

function onOffValue(text: string): boolean {
  if (text !== "on" && text !== "off") throw new InvalidArgumentError("takes on or off.");
  return text === "on";
}

function probability(text: string): number {
  const p = Number(text);
  if (!(p > 0 && p < 1)) throw new InvalidArgumentError("takes a probability between 0 and 1, e.g. 1e-6.");
  return p;
}

function listingValue(text: string): DatasetListing {
  if (!(DATASET_LISTINGS as readonly string[]).includes(text))
    throw new InvalidArgumentError(`takes one of ${DATASET_LISTINGS.join(", ")}.`);
  return text as DatasetListing;
}

function termsSha256(text: string): string {
  if (!checks.TERMS_SHA256_PATTERN.test(text))
    throw new InvalidArgumentError(
      "takes a terms document's SHA-256: 64 lower-case hex digits (das-admin terms list).",
    );
  return text;
}

/** The text of a terms file, refused as a usage error when it is not a readable UTF-8 file. */
function readTermsFile(file: string): string {
  if (!existsSync(file) || !statSync(file).isFile()) throw new UsageError(`--file ${file}: no such file.`);
  const bytes = readFileSync(file);
  const body = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  if (!Buffer.from(body, "utf8").equals(bytes)) throw new UsageError(`--file ${file}: not UTF-8 text.`);
  return body;
}

/** A licence's term, as the operator reads it. */
function termOf(l: LicenceRecord): string {
  return `usable from ${l.starts_at}${l.ends_at ? ` until ${l.ends_at}` : ", with no end"}`;
}

function licenceStatus(l: LicenceRecord, now = Date.now()): string {
  if (l.revoked_at) return "revoked";
  if (Date.parse(l.starts_at) > now) return "not started";
  if (l.ends_at && Date.parse(l.ends_at) <= now) return "ended";
  return "active";
}

/**
 * A command's work on the database: DATABASE_URL, or the embedded default (started for it and
 * stopped after it). Only a command line that parsed gets here, so a usage error starts nothing.
 */
function onDatabase<A extends unknown[]>(work: (session: { ctx: Ctx; runtime: Runtime }, ...args: A) => Promise<void>) {
  return async (...args: A) => {
    let runtime: Runtime | undefined;
    let db: RootDb | undefined;
    let replica: RootDb | undefined;
    try {
      verbs = await import("./cli/admin-verbs");
      runtime = await verbs.startEmbeddedDefault();
      // From here on every module reads the same configuration, embedded parts included.
      Object.assign(process.env, runtime.env);
      db = verbs.createDb(runtime.env.DATABASE_URL!, { max: 4 });
      // The log's long reads (exports, walks) go to the read replica when there is one.
      if (process.env.DATABASE_REPLICA_URL) replica = verbs.createDb(process.env.DATABASE_REPLICA_URL, { max: 4 });
      const ctx: Ctx = {
        db,
        requestId: `cli_${Date.now()}`,
        principal: { kind: "operator", name: process.env.DAS_OPERATOR ?? userInfo().username, organizationId: null },
        ...(replica ? { replica } : {}),
      };
      await work({ ctx, runtime }, ...args);
    } finally {
      await replica?.$client.end({ timeout: 5 });
      await db?.$client.end({ timeout: 5 });
      await runtime?.stop();
    }
  };
}

/**
 * A command that changes the log's tables themselves (detach, attach): on the owner's connection,
 * DATABASE_OWNER_URL, or DATABASE_URL when one role does both (the embedded default has both).
 */
function asOwner<A extends unknown[]>(work: (ctx: Ctx, ...args: A) => Promise<void>) {
  return onDatabase(async ({ ctx }, ...args: A) => {
    const url = process.env.DATABASE_OWNER_URL ?? process.env.DATABASE_URL!;
    const owner = verbs.createDb(url, { max: 2 });
    try {
      await work({ ...ctx, db: owner }, ...args);
    } finally {
      await owner.$client.end({ timeout: 5 });
    }
  });
}

/**
 * What went wrong: an AppError's or ImportError's message is written for operators; anything else
 * is described as the log would describe it (errorFields), since a database error's message,
 * detail and parameters may hold secrets.
 */
function describe(error: unknown): string {
  if (error instanceof AppError || error instanceof ImportError) return error.message;
  // A store's error comes from a command's work, so from the verbs it loaded.
  if (verbs && error instanceof verbs.StoreError) return error.message;
  return errorFields(error).error || "the command failed without saying why";
}

// Exit as soon as the command is done, with its code, rather than when the last socket closes.
process.exit(await runProgram(program, process.argv.slice(2), (error) => `das-admin: ${describe(error)}`));
