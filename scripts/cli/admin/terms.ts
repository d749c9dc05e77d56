// das-admin terms: the terms documents (data-use agreements) licences are granted under.
import { existsSync, readFileSync, statSync } from "node:fs";
import type { TermsRecord } from "@/lib/admin/terms";
import { day, printList, text } from "../listing";
import type { CliCommand } from "../program";
import { say, UsageError } from "../terminal";
import { onDatabase, verbs } from "./session";
import { datasetIdValue, termsSha256 } from "./values";

export function addTermsCommands(program: CliCommand): void {
  const terms = program.group("terms", "Terms documents (data-use agreements) licences are granted under.");
  addCommand(terms);
  listCommand(terms);
  showCommand(terms);
}

function addCommand(terms: CliCommand): void {
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
}

function listCommand(terms: CliCommand): void {
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
}

function showCommand(terms: CliCommand): void {
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
}

/** The text of a terms file, refused as a usage error when it is not a readable UTF-8 file. */
function readTermsFile(file: string): string {
  if (!existsSync(file) || !statSync(file).isFile()) throw new UsageError(`--file ${file}: no such file.`);
  const bytes = readFileSync(file);
  const body = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  if (!Buffer.from(body, "utf8").equals(bytes)) throw new UsageError(`--file ${file}: not UTF-8 text.`);
  return body;
}
