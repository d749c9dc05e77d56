import { bytes } from "@/lib/client/format";
import type { LeRobotImportResult } from "@/lib/catalog/import/lerobot/source";

/** How many skipped episodes and missing files the summary names before it counts the rest. */
const NAMED = 20;

/** Where each default came from, in the words of the command line. */
const SOURCES = {
  metadata: "from --episode-metadata",
  record: "from the episode records",
  option: (field: string) => `from --${field.replace("_", "-")}`,
  fallback: (field: string) => `set to ${field === "has_recovery" ? "false" : "'unknown'"}`,
};

/** What an import says of the notices of its new version (lib/notices/new-version.ts). */
export function newVersionNotices(organizations: number): string {
  return `Told ${organizations} organisation${organizations === 1 ? "" : "s"} holding a licence for an earlier version (a notice each).`;
}

/** The lines `das-admin import` prints for a LeRobot import (stderr). */
export function describeLeRobotImport(r: LeRobotImportResult, options: { uploaded: boolean }): string[] {
  const what = `${r.datasetId}@${r.version} (LeRobot ${r.codebaseVersion}): ${r.episodes} episodes, ${r.annotations} annotations, ${r.files} files`;
  const lines = [
    r.status === "imported" ? `Imported ${what}.` : `Unchanged: ${what} is already released with identical content.`,
  ];
  if (r.versionNotices) lines.push(`  ${newVersionNotices(r.versionNotices)}`);
  // The sources are counted as the episodes are read, before the incomplete ones are left out.
  if (r.skippedCount && Object.values(r.defaults).some((t) => t.metadata + t.record + t.option + t.fallback)) {
    const read = r.episodes + r.skippedCount;
    lines.push(
      `  Where each field came from, over the ${read} episodes read (${r.episodes} imported, ${r.skippedCount} skipped below):`,
    );
  }
  for (const [field, tally] of Object.entries(r.defaults)) {
    const parts = [
      tally.metadata && `${tally.metadata} ${SOURCES.metadata}`,
      tally.record && `${tally.record} ${SOURCES.record}`,
      tally.option && `${tally.option} ${SOURCES.option(field)}`,
      tally.fallback && `${tally.fallback} ${SOURCES.fallback(field)}`,
    ].filter(Boolean);
    if (parts.length) lines.push(`  ${field}: ${parts.join(", ")}`);
  }
  for (const n of r.notices) {
    // The first places are examples; a notice counts every one.
    lines.push(
      `  Note: ${n.message}: ${n.count}${n.examples.length ? ` (${n.examples.join(", ")}${n.count > n.examples.length ? ", ..." : ""})` : ""}`,
    );
  }
  if (r.skippedCount) {
    lines.push(`  Skipped ${r.skippedCount} incomplete episode(s) (--skip-incomplete-episodes):`);
    for (const s of r.skipped.slice(0, NAMED)) lines.push(`    ${s.episode_id}: ${s.reason}`);
    if (r.skippedCount > NAMED) lines.push(`    ... and ${r.skippedCount - NAMED} more`);
  }
  if (r.missingCount) {
    lines.push(`  ${r.missingCount} file(s) the metadata names are missing from the directory:`);
    for (const p of r.missingFiles.slice(0, NAMED)) lines.push(`    ${p}`);
    if (r.missingCount > NAMED) lines.push(`    ... and ${r.missingCount - NAMED} more`);
  }
  const t = r.transfer;
  if (t && options.uploaded) {
    lines.push(
      `  Store: ${t.uploaded} file(s) uploaded (${bytes(t.bytesUploaded)}) in ${t.seconds.toFixed(1)} s, ${t.skipped} already there with the same size and sha256.`,
    );
  } else if (t) {
    lines.push(
      `  Hashed ${t.files} file(s) in ${t.seconds.toFixed(1)} s. Without --upload they must be in the store already: check with das-admin store check ${r.datasetId}@${r.version}`,
    );
  }
  return lines;
}
