// das-admin trace: the licence a leaked file came from.
import { InvalidArgumentError } from "commander";
import type { FileTrace } from "@/lib/fingerprints/trace";
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { tracedFiles } from "../trace-files";
import { onDatabase, verbs } from "./session";

export function addTraceCommand(program: CliCommand): void {
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
}

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

function probability(text: string): number {
  const p = Number(text);
  if (!(p > 0 && p < 1)) throw new InvalidArgumentError("takes a probability between 0 and 1, e.g. 1e-6.");
  return p;
}
