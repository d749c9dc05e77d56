// das-admin – the operator's command line: migrations, imports, organisations, licences, keys, users, demo data.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { userInfo } from "node:os";
import { startEmbeddedDefault, type Runtime } from "@/lib/embedded-default";
import { createDb, sqlOf, type RootDb } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";
import type { Ctx } from "@/lib/context";
import { AppError } from "@/lib/errors";
import { errorFields } from "@/lib/log";
import { importVersion } from "@/lib/catalog/import/import-version";
import { ImportError } from "@/lib/catalog/import/problems";
import { createOrganization, organizationBySlug } from "@/lib/admin/organizations";
import { grantLicence, revokeLicence } from "@/lib/admin/licences";
import { issueKey, revokeKey } from "@/lib/admin/keys";
import { createUser } from "@/lib/admin/users";
import { USER_ROLES, type UserRole } from "@/lib/db/schema";
import { seedDemo } from "@/lib/demo/seed";
import { storeLocation } from "@/lib/storage/config";

import { verifyChain } from "@/lib/disclosures/verify";
import { exportDisclosures } from "@/lib/disclosures/export";
import { Exit, parseDuration, readPassword, say, UsageError } from "./cli/terminal";

const USAGE = `Usage: das-admin <command>

  migrate                                       apply pending database migrations
  import <dir>                                  import one dataset version (docs/import-format.md)
  org create <slug> [--name "..."]              create an organisation
  licence grant|revoke <org> <dataset> <version>
  key create <org> [--name N] [--expires-in 30d] [--scope <dataset>@<version>]...
                                                issue an API key; prints the secret alone on stdout
  key revoke <key-prefix>                       revoke a key by its display prefix (or key id)
  user create <email> --role admin|reviewer|licensee [--org <slug>] [--name "..."]
                                                create a portal user; password read from stdin
  seed [--episodes N]                           load deterministic demo data
  disclosures verify                            check the disclosure log's hash chain (exit 1 at the first bad entry)
  disclosures export --format csv|jsonl [--from ISO] [--to ISO] [--org slug] [--dataset id]
                                                stream the log (or part of it) to stdout

Uses DATABASE_URL, or the embedded PostgreSQL under .data/ when it is not set.`;

type Command = (ctx: Ctx, args: string[], runtime: Runtime) => Promise<void>;

const commands: Record<string, Command> = {
  migrate: async (_ctx, args, runtime) => {
    positionals(args, 0);
    // The embedded default migrated on start; a configured database is migrated here.
    if (!runtime.embedded.database) await migrateDatabase(runtime.env.DATABASE_URL!);
    say("Database schema is up to date.");
  },

  import: async (ctx, args) => {
    const [dir] = positionals(args, 1);
    const result = await importVersion((ctx.db as RootDb).$client, dir!);
    const what = `${result.datasetId}@${result.version}: ${result.episodes} episodes, ${result.annotations} annotations, ${result.files} files`;
    say(result.status === "imported" ? `Imported ${what}.` : `Unchanged: ${what} is already released with identical content.`);
  },

  "org create": async (ctx, args) => {
    const { values, positionals: [slug] } = parse(args, { name: { type: "string" } }, 1);
    const org = await createOrganization(ctx, { slug: slug!, name: values.name as string | undefined });
    say(`Created organisation ${org.slug} (${org.id}).`);
  },

  "licence grant": async (ctx, args) => {
    const [slug, datasetId, version] = positionals(args, 3);
    const org = await organizationBySlug(ctx, slug!);
    const licence = await grantLicence(ctx, { organizationId: org.id, datasetId: datasetId!, version: version! });
    say(`${licence.created ? "Granted" : "Already held:"} licence ${licence.id} for ${datasetId}@${version} to ${slug}.`);
  },

  "licence revoke": async (ctx, args) => {
    const [slug, datasetId, version] = positionals(args, 3);
    const org = await organizationBySlug(ctx, slug!);
    const licence = await revokeLicence(ctx, { organizationId: org.id, datasetId: datasetId!, version: version! });
    say(`Revoked licence ${licence.id} for ${datasetId}@${version} from ${slug}.`);
  },

  "key create": async (ctx, args) => {
    const { values, positionals: [slug] } = parse(args, { name: { type: "string" }, "expires-in": { type: "string" }, scope: { type: "string", multiple: true } }, 1);
    const org = await organizationBySlug(ctx, slug!);
    const scope = ((values.scope as string[] | undefined) ?? []).map((s) => {
      const match = /^([^@\s]+)@([^@\s]+)$/.exec(s);
      if (!match) throw new UsageError(`--scope takes <dataset_id>@<version>, not '${s}'.`);
      return { datasetId: match[1]!, version: match[2]! };
    });
    const expiresIn = values["expires-in"] as string | undefined;
    const key = await issueKey(ctx, {
      organizationId: org.id,
      name: (values.name as string | undefined) ?? "cli",
      expiresAt: expiresIn ? new Date(Date.now() + parseDuration(expiresIn)) : null,
      scope,
    });
    say(`Issued key ${key.prefix}… (${key.id}) for ${slug}${key.expiresAt ? `, expires ${key.expiresAt.toISOString()}` : ""}. It is shown only now:`);
    process.stdout.write(`${key.secret}\n`);
  },

  "key revoke": async (ctx, args) => {
    const [ref] = positionals(args, 1);
    const key = await revokeKey(ctx, ref!.startsWith("key_") ? { id: ref } : { prefix: ref });
    say(`Revoked key ${key.prefix}… (${key.id}).`);
  },

  "user create": async (ctx, args) => {
    const { values, positionals: [email] } = parse(args, { role: { type: "string" }, org: { type: "string" }, name: { type: "string" } }, 1);
    const role = values.role as UserRole | undefined;
    if (!role || !USER_ROLES.includes(role)) throw new UsageError(`--role must be one of ${USER_ROLES.join(", ")}.`);
    const org = values.org ? await organizationBySlug(ctx, values.org as string) : undefined;
    const password = await readPassword(`Password for ${email}: `);
    const user = await createUser(ctx, { email: email!, role, organizationId: org?.id, password, name: values.name as string | undefined });
    say(`Created ${user.role} ${user.email} (${user.id}).`);
  },

  "disclosures verify": async (ctx, args) => {
    positionals(args, 0);
    const report = await verifyChain(sqlOf(ctx.db));
    if (!report.intact) {
      say(`Disclosure log BROKEN at seq ${report.firstBadSeq}: ${report.reason}. ${report.count} entries before it verify.`);
      throw new Exit(1);
    }
    say(`Disclosure log intact: ${report.count} entries verified, head hash ${report.headHash}.`);
  },

  "disclosures export": async (ctx, args) => {
    const { values } = parse(args, { format: { type: "string" }, from: { type: "string" }, to: { type: "string" }, org: { type: "string" }, dataset: { type: "string" } }, 0);
    const format = values.format as string | undefined;
    if (format !== "csv" && format !== "jsonl") throw new UsageError("--format must be csv or jsonl.");
    const time = (name: "from" | "to") => {
      const text = values[name] as string | undefined;
      if (text === undefined) return undefined;
      const date = isoTime(text);
      if (!date) throw new UsageError(`--${name} takes an ISO 8601 date or date-time, not '${text}'.`);
      return date;
    };
    const org = values.org ? await organizationBySlug(ctx, values.org as string) : undefined;
    const filter = { from: time("from"), to: time("to"), organizationId: org?.id, datasetId: values.dataset as string | undefined };
    let rows = 0;
    for await (const line of exportDisclosures(sqlOf(ctx.db), filter, format)) {
      if (!process.stdout.write(line)) await new Promise<void>((resolve) => process.stdout.once("drain", () => resolve()));
      rows++;
    }
    say(`Exported ${format === "csv" ? rows - 1 : rows} entries.`);
  },

  seed: async (ctx, args, runtime) => {
    const { values } = parse(args, { episodes: { type: "string" } }, 0);
    const episodes = values.episodes === undefined ? undefined : Number(values.episodes);
    if (episodes !== undefined && !(Number.isInteger(episodes) && episodes > 0)) throw new UsageError("--episodes takes a positive whole number.");
    await seedDemo(ctx, { episodesPerVersion: episodes, appSecret: runtime.env.APP_SECRET!, store: storeLocation(), log: say });
  },
};

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date or date-time, or undefined. `new Date` alone would take '1' as 2001, '12/01/2026'
 * as 1 December and '2026-02-30' as 2 March: an export window a reviewer did not ask for.
 */
function isoTime(text: string): Date | undefined {
  const match = ISO_TIME.exec(text);
  const date = new Date(text);
  if (!match || Number.isNaN(date.getTime())) return undefined;
  const [, year, month, day] = match.map(Number);
  const calendar = new Date(Date.UTC(year!, month! - 1, day!));
  return calendar.getUTCMonth() === month! - 1 && calendar.getUTCDate() === day ? date : undefined;
}

function parse(args: string[], options: NonNullable<ParseArgsConfig["options"]>, count: number) {
  try {
    const parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
    if (parsed.positionals.length !== count) throw new UsageError(`Expected ${count} argument(s), got ${parsed.positionals.length}.`);
    return parsed;
  } catch (error) {
    throw error instanceof UsageError ? error : new UsageError((error as Error).message);
  }
}

const positionals = (args: string[], count: number) => parse(args, {}, count).positionals;

function findCommand(argv: string[]): [Command, string[]] | undefined {
  const two = argv.slice(0, 2).join(" ");
  if (commands[two]) return [commands[two]!, argv.slice(2)];
  const one = argv[0];
  if (one && commands[one] && !Object.keys(commands).some((name) => name.startsWith(`${one} `))) return [commands[one]!, argv.slice(1)];
  return undefined;
}

async function main(argv: string[]): Promise<number> {
  if (!argv.length || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    process.stdout.write(`${USAGE}\n`);
    return argv.length ? 0 : 2;
  }
  const found = findCommand(argv);
  if (!found) {
    say(`das-admin: unknown command '${argv.slice(0, 2).join(" ")}'.\n\n${USAGE}`);
    return 2;
  }
  let runtime: Runtime | undefined;
  let db: RootDb | undefined;
  try {
    runtime = await startEmbeddedDefault();
    // From here on every module reads the same configuration, embedded parts included.
    Object.assign(process.env, runtime.env);
    db = createDb(runtime.env.DATABASE_URL!, { max: 4 });
    const ctx: Ctx = { db, requestId: `cli_${Date.now()}`, principal: { kind: "operator", name: process.env.DAS_OPERATOR ?? userInfo().username, organizationId: null } };
    await found[0](ctx, found[1], runtime);
    return 0;
  } catch (error) {
    if (error instanceof Exit) return error.code;
    if (error instanceof UsageError) say(`das-admin: ${error.message}\n\n${USAGE}`);
    else if (error instanceof ImportError || error instanceof AppError) say(`das-admin: ${error.message}`);
    // What the log may say of it (errorFields): a database error's message, detail and parameters may hold secrets.
    else say(`das-admin: ${errorFields(error).error}`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    await db?.$client.end({ timeout: 5 });
    await runtime?.stop();
  }
}

// Exit as soon as the command is done, with its code, rather than when the last socket closes.
process.exit(await main(process.argv.slice(2)));
