import { randomBytes } from "node:crypto";
import { copyFile, mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { isSupportedVersion } from "../lerobot/format";
import { needsRenumbering, RENUMBERED_COLUMNS, writeAtomically, writeSubsetMeta, type SubsetResult } from "../lerobot/subset";
import type { ManifestDocument, ManifestFile } from "./api";
import { sha256File } from "./transfer";

/**
 * What `das pull` adds for a version imported from a LeRobot dataset, so that LeRobot opens the
 * directory as a dataset of the episodes delivered:
 *
 * - the version's `meta/` is kept as delivered under `.das/original/` (where LeRobot does not
 *   look, and where a resumed pull finds it verified), and `meta/` is written for the delivered
 *   episodes;
 * - video files stay byte-identical at their original paths, and so do data files, except for a
 *   v3.0 subset that is not episodes 0..k-1: LeRobot looks v3.0 episodes up by position, so such a
 *   subset is renumbered 0..k-1. Its data files are then kept as delivered under `.das/original/`
 *   too, and written renumbered at their original paths (`--keep-original-indices` keeps the
 *   delivered data files in place instead, and the indices as they are);
 * - `das-provenance.json` ties the directory to the disclosure log: the download behind every
 *   file, every delivered file's sha256 and where it is kept, every file written and what changed,
 *   and the mapping of the episode indices.
 */

export const ORIGINALS_DIR = ".das/original";
export const PROVENANCE_FILE = "das-provenance.json";

export type LeRobotFormat = NonNullable<ManifestDocument["format"]>;

/** A LeRobot data file (the frame parquet) of one or more episodes. */
const isDataFile = (file: ManifestFile) => file.stream === "data" && file.episode_ids.length > 0;
const original = (relative: string) => `${ORIGINALS_DIR}/${relative}`;

/** Where the files of a LeRobot pull go, decided from the manifest before anything is fetched. */
export type LeRobotLayout = {
  /** The delivered v3.0 subset is renumbered 0..k-1: its data files as delivered go to .das/original/. */
  renumber: boolean;
  keepOriginalIndices: boolean;
  /** Where a delivered file is kept, relative to the directory. */
  placeOf: (file: ManifestFile) => string;
  /**
   * Where an earlier pull into the directory may have kept the same file: a data file sits at its
   * own path or under .das/original/ depending on whether that pull renumbered. A verified copy
   * there is moved into place instead of being fetched again (a new disclosure).
   */
  alternativesOf: (file: ManifestFile) => string[];
};

export function leRobotLayout(manifest: ManifestDocument, inScope: ManifestFile[], options: { keepOriginalIndices?: boolean } = {}): LeRobotLayout {
  const keepOriginalIndices = options.keepOriginalIndices ?? false;
  const version = manifest.format?.codebase_version;
  const indices = deliveredEpisodes(manifest.dataset_id, inScope).indices;
  const renumber = !keepOriginalIndices && isSupportedVersion(version) && needsRenumbering(version, indices) && inScope.some(isDataFile);
  return {
    renumber,
    keepOriginalIndices,
    placeOf: (file) => (file.episode_ids.length === 0 && file.path.startsWith("meta/")) || (renumber && isDataFile(file)) ? original(file.path) : file.path,
    alternativesOf: (file) => (version === "v3.0" && isDataFile(file) ? [renumber ? file.path : original(file.path)] : []),
  };
}

export type DownloadRecord = { download_id: string; co_delivered_episode_ids: string[] };

export type LeRobotPullResult = {
  codebase_version: string;
  /** Every episode in the delivered files, as the version's LeRobot episode indices: the subset `meta/` describes. */
  episode_indices: number[];
  /** Delivered episodes that were chosen, and those that came along in shared files. */
  requested: string[];
  co_delivered: string[];
  /** `meta/` as delivered (the whole version) or rewritten for the subset. */
  meta: "as delivered" | "rewritten";
  /** A v3.0 subset renumbered 0..k-1 for LeRobot, or null (indices as in the version). */
  renumbered: {
    episodes: { episode_id: string; original_episode_index: number; episode_index: number }[];
    /** Data files written renumbered in this run, and those an earlier run had written that were kept. */
    data_files_written: number;
    data_files_kept: number;
  } | null;
  loads_as_is: boolean;
  loads_with_episode_list: boolean;
  note: string | null;
  /** Python that opens the directory with LeRobot. */
  open_with: string | null;
  provenance: string;
};

/** The LeRobot episode index behind one of our episode ids (`<dataset>-<index>`). */
export function episodeIndexOf(datasetId: string, episodeId: string): number {
  const rest = episodeId.startsWith(`${datasetId}-`) ? episodeId.slice(datasetId.length + 1) : "";
  if (!/^[0-9]+$/.test(rest)) throw new Error(`episode ${episodeId} is not named <dataset>-<episode_index>, as a LeRobot import names them`);
  return Number(rest);
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Every episode of the files in scope (byte order), and their LeRobot indices (ascending). */
function deliveredEpisodes(datasetId: string, inScope: ManifestFile[]) {
  const ids = [...new Set(inScope.flatMap((f) => f.episode_ids))].sort(byteOrder);
  const idOf = new Map(ids.map((id) => [episodeIndexOf(datasetId, id), id]));
  return { ids, idOf, indices: [...idOf.keys()].sort((a, b) => a - b) };
}

/**
 * Writes `meta/` (and, for a renumbered subset, the data files) and the provenance file once every
 * file of the pull is verified on disk. The delivered episodes are every episode of every
 * delivered episode file: the ones chosen and the ones that came along in files they share (v3.0),
 * which the metadata must then list too.
 */
export async function finishLeRobotPull(input: {
  dir: string;
  format: LeRobotFormat;
  manifest: ManifestDocument;
  inScope: ManifestFile[];
  layout: LeRobotLayout;
  chosen: Set<string> | null;
  /** The download each file of this run came from. */
  deliveredBy: Map<string, string>;
  downloads: DownloadRecord[];
}): Promise<LeRobotPullResult> {
  const { dir, manifest, layout } = input;
  const datasetId = manifest.dataset_id;
  const { ids: delivered, idOf, indices } = deliveredEpisodes(datasetId, input.inScope);
  const requested = delivered.filter((id) => input.chosen === null || input.chosen.has(id));
  const coDelivered = delivered.filter((id) => input.chosen !== null && !input.chosen.has(id));
  const provenanceFile = path.join(dir, PROVENANCE_FILE);
  const earlier = await earlierProvenance(provenanceFile, manifest);

  // A resumed pull of the same episodes keeps a renumbered data file it finds as it wrote it.
  const written = new Map<string, string>();
  const sameSubset = earlier?.renumbering && JSON.stringify(earlier.episodes?.episode_indices) === JSON.stringify(indices);
  const byPath = new Map(input.inScope.map((f) => [f.path, f]));
  const unchanged = async (relative: string) => {
    const before = sameSubset ? earlier.written?.find((w) => w.path === relative) : undefined;
    if (!before || before.from?.sha256 !== byPath.get(relative)?.sha256) return false;
    const now = await sha256File(path.join(dir, relative)).catch(() => null);
    if (now !== before.sha256) return false;
    written.set(relative, now);
    return true;
  };

  let subset: SubsetResult | null = null;
  const whole = delivered.length === manifest.episode_count;
  if (whole) await copyTree(path.join(dir, ORIGINALS_DIR, "meta"), path.join(dir, "meta"));
  else if (indices.length) subset = await writeSubsetMeta({ sourceRoot: path.join(dir, ORIGINALS_DIR), targetRoot: dir, episodes: indices, renumber: layout.renumber && { unchanged } });
  for (const relative of subset?.written ?? []) written.set(relative, await sha256File(path.join(dir, relative)));
  // Not renumbered: each data file is verified in place, so a copy an earlier, renumbering pull kept under .das/original/ is one too many.
  if (!layout.renumber) for (const file of input.inScope.filter(isDataFile)) await rm(path.join(dir, original(file.path)), { force: true });

  const renumbering = subset?.renumbering ?? null;
  const loadsAsIs = whole || (subset?.loader.loadsAsIs ?? false);
  const loadsWithList = whole || (subset?.loader.loadsWithEpisodeList ?? false);
  const v2 = input.format.codebase_version !== "v3.0";
  const root = JSON.stringify(path.resolve(dir));
  const repo = JSON.stringify(datasetId);
  const openWith = !indices.length
    ? null
    : loadsAsIs
      ? `LeRobotDataset(${repo}, root=${root})`
      : loadsWithList
        ? `LeRobotDataset(${repo}, root=${root}, episodes=[${indices.join(", ")}])`
        : null;
  const notes = [
    v2 ? "LeRobot reads v2.x datasets up to its 0.3 releases (or converts them to v3.0 with its converter)." : null,
    renumbering
      ? `Episodes renumbered 0..${indices.length - 1} for LeRobot (episode_index and index in the data files, the episode rows in meta/episodes); the data files as delivered are in ${ORIGINALS_DIR}/, the original indices in ${PROVENANCE_FILE}.`
      : null,
    subset?.loader.note ? `${subset.loader.note}${layout.keepOriginalIndices ? "; das pull does that without --keep-original-indices." : "."}` : null,
  ];

  const mapping = renumbering?.episodes.map((e) => ({ episode_id: idOf.get(e.originalEpisodeIndex)!, original_episode_index: e.originalEpisodeIndex, episode_index: e.episodeIndex })) ?? null;
  await writeProvenance(provenanceFile, input, earlier, { requested, coDelivered, indices, idOf, subset, written });
  return {
    codebase_version: input.format.codebase_version,
    episode_indices: indices,
    requested,
    co_delivered: coDelivered,
    meta: whole ? "as delivered" : "rewritten",
    renumbered: renumbering && {
      episodes: mapping!,
      data_files_written: renumbering.dataFiles.filter((f) => f.written).length,
      data_files_kept: renumbering.dataFiles.filter((f) => !f.written).length,
    },
    loads_as_is: loadsAsIs,
    loads_with_episode_list: loadsWithList,
    note: notes.filter(Boolean).join(" ") || null,
    open_with: openWith,
    provenance: provenanceFile,
  };
}

type Provenance = {
  dataset_id: string;
  version: string;
  source_format: "lerobot";
  codebase_version: string;
  written_at: string;
  episodes: { requested: string[]; co_delivered: string[]; episode_indices: number[] };
  /** Every download (disclosure-log entry) of this directory, over all runs, oldest first. */
  downloads: DownloadRecord[];
  /**
   * Every file of the pull as the manifest (and so the disclosure log) describes it, where it is
   * kept byte for byte as delivered, and the download it came from (null when an earlier run
   * fetched it and left no record).
   */
  files: { path: string; sha256: string; size_bytes: number; download_id: string | null; stored_at: string }[];
  /** A v3.0 subset renumbered 0..k-1, or null: each episode's index and frame range (`index`) in the version and here. */
  renumbering: {
    changed_columns: string[];
    episodes: {
      episode_id: string;
      original_episode_index: number;
      episode_index: number;
      original_dataset_from_index: number;
      original_dataset_to_index: number;
      dataset_from_index: number;
      dataset_to_index: number;
    }[];
  } | null;
  /** Files das pull wrote (not delivered), with what they were made from. */
  written: { path: string; sha256: string; from: { path: string; sha256: string } | null; change: string }[];
  meta_originals: string;
};

async function earlierProvenance(file: string, manifest: ManifestDocument): Promise<Partial<Provenance> | null> {
  try {
    const document = JSON.parse(await readFile(file, "utf8")) as Partial<Provenance>;
    return document.dataset_id === manifest.dataset_id && document.version === manifest.version ? document : null;
  } catch {
    return null;
  }
}

async function writeProvenance(
  file: string,
  input: Parameters<typeof finishLeRobotPull>[0],
  earlier: Partial<Provenance> | null,
  result: { requested: string[]; coDelivered: string[]; indices: number[]; idOf: Map<number, string>; subset: SubsetResult | null; written: Map<string, string> },
): Promise<void> {
  // A resumed pull keeps what earlier runs recorded for the files it did not fetch again.
  const before = new Map((earlier?.files ?? []).map((f) => [`${f.path}\0${f.sha256}`, f.download_id]));
  const downloads = [...(earlier?.downloads ?? [])];
  for (const d of input.downloads) if (!downloads.some((e) => e.download_id === d.download_id)) downloads.push(d);
  const byPath = new Map(input.inScope.map((f) => [f.path, f]));
  const renumbering = result.subset?.renumbering ?? null;
  const dataFiles = new Set(renumbering?.dataFiles.map((f) => f.path));
  const document: Provenance = {
    dataset_id: input.manifest.dataset_id,
    version: input.manifest.version,
    source_format: "lerobot",
    codebase_version: input.format.codebase_version,
    written_at: new Date().toISOString(),
    episodes: { requested: result.requested, co_delivered: result.coDelivered, episode_indices: result.indices },
    downloads,
    files: input.inScope.map((f) => ({
      path: f.path,
      sha256: f.sha256,
      size_bytes: f.size_bytes,
      download_id: input.deliveredBy.get(f.path) ?? before.get(`${f.path}\0${f.sha256}`) ?? null,
      stored_at: input.layout.placeOf(f),
    })),
    renumbering: renumbering && {
      changed_columns: [...RENUMBERED_COLUMNS],
      episodes: renumbering.episodes.map((e) => ({
        episode_id: result.idOf.get(e.originalEpisodeIndex)!,
        original_episode_index: e.originalEpisodeIndex,
        episode_index: e.episodeIndex,
        original_dataset_from_index: e.originalFrom,
        original_dataset_to_index: e.originalTo,
        dataset_from_index: e.from,
        dataset_to_index: e.to,
      })),
    },
    written: [...result.written].sort(([a], [b]) => byteOrder(a, b)).map(([relative, sha256]) => {
      const delivered = dataFiles.has(relative) ? byPath.get(relative) : undefined;
      return delivered
        ? {
            path: relative,
            sha256,
            from: { path: input.layout.placeOf(delivered), sha256: delivered.sha256 },
            change: `${RENUMBERED_COLUMNS.join(" and ")} renumbered as in renumbering.episodes; every other column, the schema, the key/value metadata and the row groups as delivered`,
          }
        : { path: relative, sha256, from: null, change: `written for the delivered episodes from the version's meta/ in ${ORIGINALS_DIR}/meta` };
    }),
    meta_originals: ORIGINALS_DIR,
  };
  await writeAtomically(file, `${JSON.stringify(document, null, 2)}\n`);
}

async function copyTree(from: string, to: string): Promise<void> {
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) await copyTree(source, target);
    else if (entry.isFile()) {
      await mkdir(to, { recursive: true });
      const temporary = `${target}.${randomBytes(6).toString("hex")}.tmp`;
      await copyFile(source, temporary);
      await rename(temporary, target);
    }
  }
}
