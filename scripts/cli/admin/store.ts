// das-admin store: the object store that holds the files.
import type { CliCommand } from "../program";
import { Exit, say, UsageError } from "../terminal";
import { positiveWholeNumber, target, type Target } from "../values";
import { onDatabase, verbs } from "./session";

export function addStoreCommands(program: CliCommand): void {
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
            say(
              `${bad} of ${report.files} files of ${datasetId}@${version} are not in the store as the manifest says:`,
            );
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

  store
    .command("collect")
    .summary("delete rendered meta/ of views unused for the retention, and store objects no view names")
    .description(
      "A view of a LeRobot version with withdrawals (or a fingerprinted licence's, or a camera subset's) has its meta/ rendered into the store under _rendered/<sha256>; every withdrawal makes new views and leaves the old ones unused. Delete the views not used for RENDERED_VIEW_RETENTION_DAYS (default 7; at least 1, far longer than a signed URL's 15 minutes) with their rows, then every rendered object no remaining view names, from the store and then the database. A view asked for after that is rendered again. Each server does the same every RENDERED_COLLECTION_INTERVAL_MINUTES.",
    )
    .option(
      "--retention-days <days>",
      "collect views unused for this many days (default: RENDERED_VIEW_RETENTION_DAYS)",
      positiveWholeNumber,
    )
    .option("--json", "print what was collected as JSON")
    .examples("das-admin store collect", "das-admin store collect --retention-days 30 --json")
    .action(
      onDatabase(async ({ ctx }, options: { retentionDays?: number; json?: boolean }) => {
        const collected = await verbs.collectRenderedViews(ctx, { retentionDays: options.retentionDays });
        if (options.json) process.stdout.write(`${JSON.stringify(collected)}\n`);
        say(
          `Collected ${collected.views} view(s) unused for ${collected.retention_days} day(s) (${collected.files} rendered file row(s)) and deleted ${collected.objects} object(s) no remaining view names from the store.`,
        );
      }),
    );
}

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
