// das-admin disclosures: the disclosure log, checked, digested, exported, and its months closed, archived and restored.
import { InvalidArgumentError, Option } from "commander";
import type { Ctx } from "@/lib/context";
import { DISCLOSURE_CHANNELS } from "@/lib/db/schema";
import type { DisclosureSearch } from "@/lib/disclosures/filter";
import type { RangeChecker, VerifyProgress } from "@/lib/disclosures/verify";
import { printList } from "../listing";
import type { CliCommand } from "../program";
import { Exit, say } from "../terminal";
import { positiveWholeNumber } from "../values";
import { organization } from "./lookups";
import { asOwner, checks, onDatabase, verbs } from "./session";

export function addDisclosuresCommands(program: CliCommand): void {
  const disclosures = program.group("disclosures", "The disclosure log: every download, hash-chained.");
  verifyCommand(disclosures);
  digestCommand(disclosures);
  exportCommand(disclosures);
  monthsCommand(disclosures);
  archiveCommand(disclosures);
  restoreCommand(disclosures);
}

function verifyCommand(disclosures: CliCommand): void {
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
}

function digestCommand(disclosures: CliCommand): void {
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
}

function exportCommand(disclosures: CliCommand): void {
  disclosures
    .command("export")
    .summary("stream the log, or part of it, to stdout")
    .description(
      "Stream the disclosure log, or the entries that match the filters, to stdout; the count goes to stderr.",
    )
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
}

function monthsCommand(disclosures: CliCommand): void {
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
}

function archiveCommand(disclosures: CliCommand): void {
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
        const result = await verbs.archiveMonth(ctx, options.month, archiveOptions(options.month));
        say(
          `Archived ${result.month}: ${result.entries} entries, ${result.tables.reduce((n, t) => n + t.bytes, 0).toLocaleString("en")} bytes in ${result.manifestKey} and beside it; its partitions are dropped.`,
        );
      }),
    );
}

function restoreCommand(disclosures: CliCommand): void {
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
        const result = await verbs.restoreMonth(ctx, options.month, archiveOptions(options.month));
        say(`Restored ${result.month}: ${result.entries} entries are in the database again.`);
      }),
    );
}

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

/** Where archive and restore find a month's archive and its digest's key, and how they say each step. */
function archiveOptions(month: string) {
  return {
    store: verbs.archiveStoreFromEnv(),
    publicKey: verbs.monthPublicKeyFromEnv(),
    onStep: (step: string) => say(`${month}: ${step}`),
  };
}

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
