// das-admin licence: licences of organisations to dataset versions, their terms and their ends.
import { InvalidArgumentError } from "commander";
import type { LicenceRecord } from "@/lib/admin/list-licences";
import type { Ctx } from "@/lib/context";
import { day, minute, printList } from "../listing";
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { organization, organizationIfGiven, releasedVersion } from "./lookups";
import { checks, onDatabase, verbs } from "./session";
import { termsSha256 } from "./values";

export function addLicenceCommands(program: CliCommand): void {
  const licence = program.group("licence", "Licences of organisations to dataset versions.");
  grantCommand(licence);
  endCommand(licence);
  revokeCommand(licence);
  listCommand(licence);
}

function grantCommand(licence: CliCommand): void {
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
          const licensed = await licensedVersion(ctx, slug, datasetId, version);
          const granted = await verbs.grantLicence(ctx, {
            ...licensed,
            startsAt: options.from,
            endsAt: options.until ?? null,
            termsSha256: options.terms ?? null,
          });
          const held = (await verbs.listLicences(ctx, { organizationId: licensed.organizationId })).find(
            (l) => l.id === granted.id,
          )!;
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
}

function endCommand(licence: CliCommand): void {
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
        const ended = await verbs.endLicence(ctx, {
          ...(await licensedVersion(ctx, slug, datasetId, version)),
          endsAt: options.at,
        });
        say(
          `Licence ${ended.id} for ${datasetId}@${version} of ${slug} now ends at ${ended.endsAt.toISOString()} ` +
            `(it ${ended.previousEndsAt ? `ended at ${ended.previousEndsAt.toISOString()}` : "had no end"}).`,
        );
      }),
    );
}

function revokeCommand(licence: CliCommand): void {
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
        const revoked = await verbs.revokeLicence(ctx, await licensedVersion(ctx, slug, datasetId, version));
        say(`Revoked licence ${revoked.id} for ${datasetId}@${version} from ${slug}.`);
      }),
    );
}

function listCommand(licence: CliCommand): void {
  licence
    .command("list")
    .description("list the licences, active and revoked, by organisation and dataset version")
    .option("--org <slug>", "only this organisation's")
    .option("--active", "only licences usable now: not revoked, started and not ended")
    .option("--json", "print JSON instead of a table")
    .examples("das-admin licence list", "das-admin licence list --org acme-robotics --active")
    .action(
      onDatabase(async ({ ctx }, options: { org?: string; active?: boolean; json?: boolean }) => {
        const holder = await organizationIfGiven(ctx, options.org);
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
}

/** The organisation and the released version a licence command names, refused with the names there are. */
async function licensedVersion(ctx: Ctx, slug: string, datasetId: string, version: string) {
  const holder = await organization(ctx, slug);
  await releasedVersion(ctx, datasetId, version);
  return { organizationId: holder.id, datasetId, version };
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
