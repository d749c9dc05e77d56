/**
 * Subtask spans: where each subtask of an episode starts and ends, read from the data files'
 * frame columns (`language_persistent` / `language_events`, or `subtask_index` into
 * meta/subtasks.parquet), as info.json declares.
 */
import { datasetBatches, openDatasetParquet } from "./dataset-parquet";
import { type Located, namedFiles } from "./episode-record";
import type { Findings } from "./findings";
import { type Info, INFO_PATH, plainValue, SUBTASKS_PATH } from "./format";
import type { SubtaskSource } from "./info";
import { type DatasetDirectory, unsafePath } from "./walk";

export type SubtaskSpan = { episode_index: number; label: string; start_s: number; end_s: number };

export async function* subtaskSpans(
  directory: DatasetDirectory,
  info: Info,
  source: SubtaskSource | null,
  records: AsyncIterable<Located>,
  findings: Findings,
): AsyncGenerator<SubtaskSpan> {
  if (!source) return;
  const lengths = new Map<number, number>();
  const dataFiles = new Set<string>();
  for await (const { record } of records) {
    lengths.set(record.episode_index, record.length);
    for (const [relative, stream] of namedFiles(info, record))
      if (stream === "data" && !unsafePath(relative)) dataFiles.add(relative);
  }
  const labels = source === "subtask_index" ? await subtaskLabels(directory, findings) : undefined;
  if (source === "subtask_index" && !labels) return;

  // Per episode, the moments a subtask starts (label) or annotation stops (null), in frame order.
  const changes = new Map<number, { t: number; label: string | null }[]>();
  const seenPersistent = new Set<number>();
  const last = new Map<number, number | null>();
  for (const relative of dataFiles) {
    const parquet = await openDatasetParquet(directory, findings, relative);
    if (!parquet) continue;
    const columns =
      source === "subtask_index"
        ? ["subtask_index"]
        : ["language_persistent", "language_events"].filter((c) => parquet.columns.includes(c));
    if (!columns.every((c) => parquet.columns.includes(c)) || !columns.length) {
      findings.report({
        file: relative,
        line: 0,
        message: `info.json declares ${source === "language" ? "language columns" : "subtask_index"}, but this file has no such column`,
      });
      continue;
    }
    for await (const { first, rows } of datasetBatches(findings, relative, parquet, [
      "episode_index",
      "timestamp",
      ...columns,
    ])) {
      for (const [i, raw] of rows.entries()) {
        findings.signal?.throwIfAborted();
        const row = plainValue(raw) as Record<string, unknown>;
        const line = first + i + 1;
        const episode = row.episode_index;
        const t = row.timestamp;
        if (typeof episode !== "number" || !lengths.has(episode)) continue;
        if (typeof t !== "number") {
          findings.report({ file: relative, line, message: "timestamp must be a number" });
          continue;
        }
        const list = changes.get(episode) ?? [];
        changes.set(episode, list);
        if (source === "subtask_index") {
          // -1 (or null) marks frames without a subtask; a run of one index is one span.
          const index = typeof row.subtask_index === "number" && row.subtask_index >= 0 ? row.subtask_index : null;
          if (last.has(episode) && last.get(episode) === index) continue;
          last.set(episode, index);
          const label = index === null ? null : labels![index];
          if (label === undefined) {
            findings.report({ file: relative, line, message: `subtask_index ${index} is not in ${SUBTASKS_PATH}` });
            list.push({ t, label: null });
          } else list.push({ t, label });
          continue;
        }
        // Persistent rows carry the moment they start and are the same list on every frame of the
        // episode (the first frame's is enough); event rows start at the frame they sit on.
        const persistent = seenPersistent.has(episode)
          ? []
          : languageRows(row.language_persistent).map((entry) => ({ entry, at: entry.timestamp }));
        seenPersistent.add(episode);
        const events = languageRows(row.language_events).map((entry) => ({ entry, at: t as unknown }));
        for (const { entry, at } of [...persistent, ...events]) {
          if (entry.style !== "subtask") continue;
          if (typeof at !== "number")
            findings.report({ file: relative, line, message: "a subtask row without a timestamp" });
          else list.push({ t: at, label: typeof entry.content === "string" ? entry.content : "" });
        }
      }
    }
  }
  for (const episode of [...changes.keys()].sort((a, b) => a - b)) {
    const duration = round(lengths.get(episode)! / info.fps);
    // A persistent subtask holds until the next one starts, the last one until the episode ends.
    const points = changes
      .get(episode)!
      .map((p) => ({ ...p, t: round(p.t) }))
      .sort((a, b) => a.t - b.t);
    for (const [i, point] of points.entries()) {
      if (point.label === null) continue;
      // A subtask with no label still ends the one before it (a persistent row holds until
      // replaced); a span without a label says nothing, so none is made.
      if (!point.label.trim()) {
        findings.notice(
          "subtask rows without a label (empty content): no span, and the subtask before ends there",
          `episode ${episode} at ${point.t} s`,
        );
        continue;
      }
      if (point.t > duration) {
        findings.report({
          file: INFO_PATH,
          line: 0,
          message: `episode ${episode}: subtask ${JSON.stringify(point.label.slice(0, 80))} starts at ${point.t} s, after the episode's end (${duration} s)`,
        });
        continue;
      }
      yield {
        episode_index: episode,
        label: point.label,
        start_s: point.t,
        end_s: Math.min(points[i + 1]?.t ?? duration, duration),
      };
    }
  }
}

/** Labels by position, as LeRobot resolves them (`subtasks.iloc[subtask_index]`). */
async function subtaskLabels(directory: DatasetDirectory, findings: Findings): Promise<string[] | undefined> {
  const parquet = await openDatasetParquet(directory, findings, SUBTASKS_PATH);
  if (!parquet) return undefined;
  // pandas writes the label as the frame's index; its metadata names the column.
  const pandas = parquet.metadata.key_value_metadata?.find((kv) => kv.key === "pandas")?.value;
  let column: string | undefined;
  try {
    const index = pandas ? (JSON.parse(pandas) as { index_columns?: unknown[] }).index_columns?.[0] : undefined;
    if (typeof index === "string") column = index;
  } catch {
    // Not pandas metadata after all: fall back to the column names below.
  }
  column ??= ["subtask", "__index_level_0__", "task"].find((c) => parquet.columns.includes(c));
  if (!column || !parquet.columns.includes(column)) {
    findings.report({ file: SUBTASKS_PATH, line: 0, message: "no label column (the subtask text) found" });
    return undefined;
  }
  const labels: string[] = [];
  for await (const { rows } of datasetBatches(findings, SUBTASKS_PATH, parquet, [column]))
    for (const row of rows) labels.push(row[column] === null || row[column] === undefined ? "" : String(row[column]));
  return labels;
}

function languageRows(value: unknown): { style?: unknown; content?: unknown; timestamp?: unknown }[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => !!v && typeof v === "object") : [];
}

/** float32 frame timestamps to whole microseconds: 2.0999999046325684 is 2.1. */
const round = (seconds: number) => Math.round(seconds * 1e6) / 1e6;
