/** Episode records of a v2.0 / v2.1 dataset: meta/episodes.jsonl, one JSON object a line. */
import { parseJsonLine } from "../json-document";
import { readLines } from "../read-lines";
import { EpisodeRecord, type Located } from "./episode-record";
import type { Findings } from "./findings";
import { V2_EPISODES_PATH } from "./format";
import type { DatasetDirectory } from "./walk";

/** Every episode line that reads as a record, in file order; each other line reported at its number. */
export async function* v2Records(directory: DatasetDirectory, findings: Findings): AsyncGenerator<Located> {
  const file = await directory.realFile(V2_EPISODES_PATH);
  if (!file) return;
  // The importer's own line reader: invalid UTF-8 and over-long lines are refused at their line, never replaced.
  for await (const line of readLines(file, undefined, findings.signal)) {
    findings.signal?.throwIfAborted();
    if ("problem" in line) {
      findings.report({ file: V2_EPISODES_PATH, line: line.number, message: line.problem });
      continue;
    }
    if (!line.text.trim()) continue;
    const parsed = parseJsonLine(V2_EPISODES_PATH, line.number, line.text, EpisodeRecord);
    if (parsed.value) yield { record: parsed.value, file: V2_EPISODES_PATH, line: line.number };
    else parsed.problems.forEach((p) => findings.report(p));
  }
}
