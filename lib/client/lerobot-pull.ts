import { randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { rewriteDataRows, type DataTransform } from "../lerobot/data-rows";
import { canonicalJson } from "../canonical-json";
import { pathInside } from "../safe-path";
import type { PlanDocument, PlannedFile } from "./api";
import { fetchedPlace, ORIGINALS_DIR } from "./plan";
import type { Provenance, WrittenFile } from "./provenance";
import { sha256File } from "./transfer";

/**
 * What a pull of a LeRobot version adds to fetching its files, once every one of them is verified
 * on disk. The service decided it all (lib/views/plan.ts): meta/ comes rendered for the episodes
 * delivered whole, as a file like any other; a v3.0 data file LeRobot could not open as delivered
 * comes with a `transform`, carried out here (lib/lerobot/data-rows.ts) from its bytes as fetched,
 * which stay under .das/original/ (so a later run, or `das sync`, writes it again without fetching
 * it, which would be another disclosure).
 */

export type LeRobotPullResult = {
  codebase_version: string;
  /** The episodes `meta/` lists, as the version's LeRobot episode indices: the delivered episodes whose every file was delivered. */
  episode_indices: number[];
  /** Delivered episodes that were chosen, and those that came along in shared files. */
  requested: string[];
  co_delivered: string[];
  /** Co-delivered episodes left out of `meta/` (and of the data files LeRobot reads), because not every file of theirs was delivered. */
  left_out: string[];
  /** `meta/` as delivered (the version's own), written for the episodes delivered, or none (no episode was delivered whole). */
  meta: "as delivered" | "rewritten" | "none";
  /** The cameras `meta/info.json` declares, when --streams left some out (null: every camera of the version). */
  cameras: string[] | null;
  /** v3.0 data files written transformed for LeRobot (renumbered, or without the frames of episodes left out), or null: as delivered. */
  data_rewritten: {
    /** Written in this run, and those an earlier run had written that were kept. */
    written: number;
    kept: number;
    /** Episodes whose frames the written data files leave out. */
    dropped_episodes: string[];
  } | null;
  /** A v3.0 subset renumbered 0..k-1 for LeRobot, or null (indices as in the version). */
  renumbered: {
    episodes: { episode_id: string; original_episode_index: number; episode_index: number }[];
    data_files_written: number;
    data_files_kept: number;
  } | null;
  /** Data and video files meta/ points at that the plan does not write (none, unless the version's meta/ and its files disagree). */
  missing_files: string[];
  loads_as_is: boolean;
  loads_with_episode_list: boolean;
  note: string | null;
  /** Python that opens the directory with LeRobot. */
  open_with: string | null;
  provenance: string;
};

/**
 * Writes every transformed file of the plan from its bytes as fetched. A file an earlier run wrote
 * from the same bytes with the same transform, still as it wrote it, is kept.
 */
export async function writeTransformed(
  dir: string,
  plan: PlanDocument,
  earlier: Partial<Provenance> | null,
): Promise<{ written: WrittenFile[]; rewritten: number; kept: number; failed: { path: string; reason: string }[] }> {
  const out = { written: [] as WrittenFile[], rewritten: 0, kept: 0, failed: [] as { path: string; reason: string }[] };
  const leftOut = new Set(plan.lerobot?.left_out ?? []);
  for (const file of plan.files) {
    if (!file.transform) continue;
    try {
      const target = await pathInside(dir, file.path);
      const before = earlier?.written?.find((w) => w.path === file.path);
      if (before && before.from?.sha256 === file.sha256 && sameTransform(before.transform, file.transform)) {
        if ((await sha256File(target).catch(() => null)) === before.sha256) {
          out.written.push({ ...before, change: changeOf(file, leftOut, Boolean(plan.lerobot?.renumbering)) });
          out.kept++;
          continue;
        }
      }
      await mkdir(path.dirname(target), { recursive: true });
      const temporary = `${target}.${randomBytes(6).toString("hex")}.tmp`;
      try {
        await rewriteDataRows(await pathInside(dir, fetchedPlace(file)), temporary, file.transform, file.path);
        await rename(temporary, target);
      } finally {
        await rm(temporary, { force: true });
      }
      out.written.push({
        path: file.path,
        sha256: await sha256File(target),
        from: { path: fetchedPlace(file), sha256: file.sha256 },
        transform: file.transform,
        change: changeOf(file, leftOut, Boolean(plan.lerobot?.renumbering)),
      });
      out.rewritten++;
    } catch (error) {
      out.failed.push({ path: file.path, reason: (error as Error).message });
    }
  }
  return out;
}

const sameTransform = (a: DataTransform | undefined, b: DataTransform) =>
  a !== undefined && canonicalJson(a) === canonicalJson(b);

function changeOf(file: PlannedFile, leftOut: Set<string>, renumberedSubset: boolean): string {
  const transform = file.transform!;
  const dropped = file.episode_ids.filter((id) => leftOut.has(id));
  // A renumbered subset writes each data file renumbered, one whose episodes keep their indices too.
  const renumbered = renumberedSubset;
  const changes = [
    dropped.length
      ? `the frames of ${dropped.join(", ")} (not in meta/: not every file of theirs was delivered) left out`
      : null,
    renumbered ? `${transform.changed_columns.join(" and ")} renumbered as in renumbering.episodes` : null,
  ].filter(Boolean);
  return `${changes.join("; ")}; every other column, the schema, the key/value metadata and the row groups as delivered${dropped.length ? " (less the rows left out)" : ""}`;
}

/**
 * What an earlier run left that the plan no longer wants: a file under meta/ it does not list
 * (meta/ must describe exactly what LeRobot finds), a copy under .das/original/ of a file now kept
 * at its path, and an older das pull's copy of the version's meta/ under .das/original/meta.
 */
export async function removeLeftovers(dir: string, plan: PlanDocument, earlier: Partial<Provenance> | null) {
  const planned = new Set(plan.files.map((f) => f.path));
  const recorded = [...(earlier?.files ?? []).map((f) => f.path), ...(earlier?.written ?? []).map((w) => w.path)];
  for (const relative of new Set(recorded))
    if (relative.startsWith("meta/") && !planned.has(relative))
      await rm(await pathInside(dir, relative), { force: true });
  if (await hasOriginals(dir))
    for (const file of plan.files)
      if (!file.transform) await rm(await pathInside(dir, `${ORIGINALS_DIR}/${file.path}`), { force: true });
  await rm(await pathInside(dir, `${ORIGINALS_DIR}/meta`), { recursive: true, force: true });
}

const hasOriginals = async (dir: string) =>
  (await readdir(await pathInside(dir, ORIGINALS_DIR)).catch(() => [])).length > 0;

/** The summary of a LeRobot pull: the plan's, with what this run wrote. */
export function leRobotResult(
  plan: PlanDocument,
  outcome: { rewritten: number; kept: number },
  where: { dir: string; provenance: string; keepOriginalIndices: boolean },
): LeRobotPullResult | null {
  const l = plan.lerobot;
  if (!l) return null;
  const transformed = plan.files.filter((f) => f.transform);
  const leftOut = new Set(l.left_out);
  const dropped = [...new Set(transformed.flatMap((f) => f.episode_ids.filter((id) => leftOut.has(id))))].sort((a, b) =>
    Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  const counts = { data_files_written: outcome.rewritten, data_files_kept: outcome.kept };
  const root = JSON.stringify(path.resolve(where.dir));
  const repo = JSON.stringify(plan.dataset_id);
  const openWith = !l.episode_indices.length
    ? null
    : l.loads_as_is
      ? `LeRobotDataset(${repo}, root=${root})`
      : l.open_with_episodes
        ? `LeRobotDataset(${repo}, root=${root}, episodes=[${l.open_with_episodes.join(", ")}])`
        : null;
  const note = [
    l.note,
    where.keepOriginalIndices && !l.loads_as_is
      ? "das pull writes the data files renumbered 0..k-1 for LeRobot without --keep-original-indices."
      : null,
  ].filter(Boolean);
  return {
    codebase_version: l.codebase_version,
    episode_indices: l.episode_indices,
    requested: l.requested,
    co_delivered: l.co_delivered,
    left_out: l.left_out,
    meta: l.meta,
    cameras: l.cameras,
    data_rewritten: transformed.length
      ? { written: outcome.rewritten, kept: outcome.kept, dropped_episodes: dropped }
      : null,
    renumbered: l.renumbering ? { episodes: l.renumbering, ...counts } : null,
    missing_files: l.missing_files,
    loads_as_is: l.loads_as_is,
    loads_with_episode_list: l.loads_with_episode_list,
    note: note.join(" ") || null,
    open_with: openWith,
    provenance: where.provenance,
  };
}
