import { randomBytes } from "node:crypto";
import { copyFile, mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import {
  listedEpisodes,
  needsRenumbering,
  RENUMBERED_COLUMNS,
  writeAtomically,
  writeSubsetMeta,
  type SubsetResult,
} from "../lerobot/subset";
import type { ManifestDocument, ManifestFile } from "./api";
import { pathInside } from "../safe-path";
import { sha256File } from "./transfer";
import { PROVENANCE_FILE, pulledFiles, type ProvenanceFile } from "./provenance";

/**
 * What `das pull` adds for a version imported from a LeRobot dataset, so that LeRobot opens the
 * directory as a dataset of the episodes delivered:
 *
 * - the version's `meta/` is kept as delivered under `.das/original/` (where LeRobot does not
 *   look, and where a resumed pull finds it verified), and `meta/` is written for the complete
 *   episodes: those whose every file (the data and each camera pulled) was delivered. In v3.0 a
 *   file holds several episodes, and the data and each camera group them differently, so some
 *   episodes that came along in a delivered file lack another of their files; LeRobot would fail
 *   on them, so meta/ leaves them out (they stay disclosed, and in the provenance);
 * - video files stay byte-identical at their original paths, and so do data files, except in v3.0
 *   where LeRobot could not open them as delivered: a subset that is not episodes 0..k-1 (LeRobot
 *   looks v3.0 episodes up by position) is renumbered 0..k-1, and the frames of episodes meta/
 *   leaves out are dropped. The data files are then kept as delivered under `.das/original/` too,
 *   and written again at their original paths (`--keep-original-indices` keeps the delivered data
 *   files in place instead, and the indices as they are);
 * - `das-provenance.json` ties the directory to the disclosure log: the download behind every
 *   file, every delivered file's sha256 and where it is kept, every file written and what changed,
 *   and the mapping of the episode indices.
 */

export const ORIGINALS_DIR = ".das/original";
export { PROVENANCE_FILE };

export type LeRobotFormat = NonNullable<ManifestDocument["format"]>;

/** A LeRobot data file (the frame parquet) of one or more episodes. */
const isDataFile = (file: ManifestFile) => file.stream === "data" && file.episode_ids.length > 0;
const original = (relative: string) => `${ORIGINALS_DIR}/${relative}`;

/** Where the files of a LeRobot pull go, decided from the manifest before anything is fetched. */
export type LeRobotLayout = {
  /** v3.0 data files written again for LeRobot (renumbered 0..k-1, frames of episodes meta/ leaves out dropped): as delivered they go to .das/original/. */
  rewrite: boolean;
  keepOriginalIndices: boolean;
  /** The cameras (video features) meta/ keeps when --streams leaves some out; undefined: every one. */
  videoKeys: string[] | undefined;
  episodes: DeliveredEpisodes;
  /** Where a delivered file is kept, relative to the directory. */
  placeOf: (file: ManifestFile) => string;
  /**
   * Where an earlier pull into the directory may have kept the same file: a data file sits at its
   * own path or under .das/original/ depending on whether that pull rewrote it. A verified copy
   * there is moved into place instead of being fetched again (a new disclosure).
   */
  alternativesOf: (file: ManifestFile) => string[];
  /**
   * A file of the version's meta/ that an earlier pull into the directory cut down to the episodes
   * it delivered (see trimOriginalMeta): the sha256 it then kept (null: none of its episodes was
   * delivered, so nothing was kept), which stands for the delivered file as long as this pull
   * delivers no other episode. Fetching it again would be another disclosure.
   */
  trimmedCopyOf: (file: ManifestFile) => { sha256: string | null } | undefined;
};

export type DeliveredEpisodes = {
  /** Every episode of the delivered files (byte order). */
  delivered: string[];
  /** Delivered episodes with every file of the streams pulled delivered too: those meta/ lists. */
  complete: string[];
  /** Delivered episodes lacking a file (one shared with episodes not chosen, in v3.0): left out of meta/. */
  incomplete: string[];
  /** The complete episodes' LeRobot indices, ascending. */
  indices: number[];
  idOf: Map<number, string>;
};

/**
 * The delivered episodes, and which of them are complete: an episode is complete when every file
 * of the manifest that holds it, in a stream meta/ describes (the data, each camera pulled), is
 * in scope. The chosen episodes always are (every file holding them is in scope).
 */
function deliveredEpisodes(manifest: ManifestDocument, inScope: ManifestFile[], streams: string[]): DeliveredEpisodes {
  const delivered = [...new Set(inScope.flatMap((f) => f.episode_ids))].sort(byteOrder);
  const inScopePaths = new Set(inScope.map((f) => f.path));
  const lacking = new Set<string>();
  for (const file of manifest.files) {
    if (file.stream !== null && streams.includes(file.stream) && !inScopePaths.has(file.path))
      for (const id of file.episode_ids) lacking.add(id);
  }
  const complete = delivered.filter((id) => !lacking.has(id));
  const idOf = new Map(complete.map((id) => [episodeIndexOf(manifest.dataset_id, id), id]));
  return {
    delivered,
    complete,
    incomplete: delivered.filter((id) => lacking.has(id)),
    indices: [...idOf.keys()].sort((a, b) => a - b),
    idOf,
  };
}

export function leRobotLayout(
  manifest: ManifestDocument,
  inScope: ManifestFile[],
  options: { keepOriginalIndices?: boolean; streams?: string[]; trimmed?: TrimmedOriginals | null } = {},
): LeRobotLayout {
  const keepOriginalIndices = options.keepOriginalIndices ?? false;
  const version = manifest.format?.codebase_version;
  const cameras = (manifest.format?.cameras ?? []).filter((c) => c.storage === "video").map((c) => c.key);
  const videoKeys =
    options.streams && cameras.some((key) => !options.streams!.includes(key))
      ? cameras.filter((key) => options.streams!.includes(key))
      : undefined;
  const episodes = deliveredEpisodes(manifest, inScope, options.streams ?? manifest.streams);
  const complete = new Set(episodes.complete);
  const trimmedFor = new Set(options.trimmed?.episode_indices);
  const trimmed =
    options.trimmed && episodes.delivered.every((id) => trimmedFor.has(episodeIndexOf(manifest.dataset_id, id)))
      ? new Map(options.trimmed.files.map((f) => [`${f.path}\0${f.sha256}`, f.kept_sha256]))
      : null;
  // LeRobot reads every frame under data/ (with no episode list), and looks v3.0 episodes up by position.
  const holdsOthers = inScope.some((f) => isDataFile(f) && f.episode_ids.some((id) => !complete.has(id)));
  const rewrite =
    !keepOriginalIndices &&
    version === "v3.0" &&
    inScope.some(isDataFile) &&
    (needsRenumbering(version, episodes.indices) || holdsOthers);
  return {
    rewrite,
    keepOriginalIndices,
    videoKeys,
    episodes,
    placeOf: (file) =>
      (file.episode_ids.length === 0 && file.path.startsWith("meta/")) || (rewrite && isDataFile(file))
        ? original(file.path)
        : file.path,
    alternativesOf: (file) =>
      version === "v3.0" && isDataFile(file) ? [rewrite ? file.path : original(file.path)] : [],
    trimmedCopyOf: (file) => {
      const kept = trimmed?.get(`${file.path}\0${file.sha256}`);
      return kept === undefined ? undefined : { sha256: kept };
    },
  };
}

export type DownloadRecord = { download_id: string; co_delivered_episode_ids: string[] };

export type LeRobotPullResult = {
  codebase_version: string;
  /** The episodes `meta/` lists, as the version's LeRobot episode indices: the delivered episodes whose every file was delivered. */
  episode_indices: number[];
  /** Delivered episodes that were chosen, and those that came along in shared files. */
  requested: string[];
  co_delivered: string[];
  /** Co-delivered episodes left out of `meta/` (and of the data files LeRobot reads), because not every file of theirs was delivered. */
  left_out: string[];
  /** `meta/` as delivered (the whole version) or rewritten for the subset. */
  meta: "as delivered" | "rewritten";
  /** The cameras `meta/info.json` declares, when --streams left some out (null: every camera of the version). */
  cameras: string[] | null;
  /** v3.0 data files written again for LeRobot (renumbered, or without the frames of episodes left out), or null: as delivered. */
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
    /** Data files written renumbered in this run, and those an earlier run had written that were kept. */
    data_files_written: number;
    data_files_kept: number;
  } | null;
  /** Data and video files meta/ points at that are not in the directory (none, unless the version's meta/ and its manifest disagree). */
  missing_files: string[];
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
  if (!/^[0-9]+$/.test(rest))
    throw new Error(`episode ${episodeId} is not named <dataset>-<episode_index>, as a LeRobot import names them`);
  return Number(rest);
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Writes `meta/` (and, for a rewritten v3.0 subset, the data files) and the provenance file once
 * every file of the pull is verified on disk. The delivered episodes are every episode of every
 * delivered episode file: the ones chosen and the ones that came along in files they share
 * (v3.0). meta/ lists those of them whose every file is on disk, and nothing else: the metadata
 * must describe exactly what LeRobot will find.
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
  const { delivered, incomplete, idOf, indices } = layout.episodes;
  const requested = delivered.filter((id) => input.chosen === null || input.chosen.has(id));
  const coDelivered = delivered.filter((id) => input.chosen !== null && !input.chosen.has(id));
  const provenanceFile = await pathInside(dir, PROVENANCE_FILE);
  const earlier = await earlierProvenance(provenanceFile, manifest);

  // A resumed pull of the same episodes keeps a data file it finds as it wrote it.
  const written = new Map<string, string>();
  const sameSubset = JSON.stringify(earlier?.episodes?.episode_indices) === JSON.stringify(indices);
  const byPath = new Map(input.inScope.map((f) => [f.path, f]));
  const unchanged = async (relative: string) => {
    const before = sameSubset ? earlier?.written?.find((w) => w.path === relative) : undefined;
    if (!before || before.from?.sha256 !== byPath.get(relative)?.sha256) return false;
    const now = await pathInside(dir, relative)
      .then(sha256File)
      .catch(() => null);
    if (now !== before.sha256) return false;
    written.set(relative, now);
    return true;
  };

  let subset: SubsetResult | null = null;
  const originals = path.join(dir, ORIGINALS_DIR);
  // The version's own meta/ serves as it is only if it lists exactly these episodes (after an import
  // with --skip-incomplete-episodes it also lists those the version left out) and every camera.
  const asDelivered = indices.length ? await listedEpisodes(originals) : null;
  // A copy an earlier run cut down is not the version's own: meta/ is written from it, as that run did.
  const whole =
    !earlier?.meta_originals_trimmed &&
    asDelivered !== null &&
    !layout.rewrite &&
    !layout.videoKeys &&
    JSON.stringify(asDelivered.episodes) === JSON.stringify(indices);
  if (whole) await copyTree(dir, `${ORIGINALS_DIR}/meta`, "meta");
  else if (indices.length)
    subset = await writeSubsetMeta({
      sourceRoot: originals,
      targetRoot: dir,
      episodes: indices,
      videoKeys: layout.videoKeys,
      // Only the delivered data files are read and written again, wherever the metadata points.
      rewriteData: layout.rewrite && {
        unchanged,
        dataFiles: new Set(input.inScope.filter(isDataFile).map((f) => f.path)),
      },
    });
  for (const relative of subset?.written ?? [])
    written.set(relative, await sha256File(await pathInside(dir, relative)));
  // Not rewritten: each data file is verified in place, so a copy an earlier, rewriting pull kept under .das/original/ is one too many.
  if (!layout.rewrite)
    for (const file of input.inScope.filter(isDataFile))
      await rm(await pathInside(dir, original(file.path)), { force: true });

  // What LeRobot opens is what meta/ points at: checked on disk, not assumed.
  const missingFiles: string[] = [];
  for (const relative of whole ? asDelivered.referencedFiles : (subset?.referencedFiles ?? [])) {
    // A file the metadata places outside the directory (through a link) is as good as missing.
    if (
      !(await pathInside(dir, relative)
        .then(stat)
        .catch(() => null))
    )
      missingFiles.push(relative);
  }
  const rewrite = subset?.rewrite ?? null;
  const renumbering = rewrite?.renumbered ? rewrite : null;
  const loadsAsIs = !missingFiles.length && (whole || (subset?.loader.loadsAsIs ?? false));
  const loadsWithList = !missingFiles.length && (whole || (subset?.loader.loadsWithEpisodeList ?? false));
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
  const droppedEpisodes = [...new Set(rewrite?.dataFiles.flatMap((f) => f.droppedEpisodes) ?? [])]
    .sort((a, b) => a - b)
    .map((e) => `${datasetId}-${String(e).padStart(6, "0")}`);
  const notes = [
    v2 ? "LeRobot reads v2.x datasets up to its 0.3 releases (or converts them to v3.0 with its converter)." : null,
    missingFiles.length
      ? `meta/ points at ${missingFiles.length} file(s) that are not in the directory (${missingFiles.slice(0, 5).join(", ")}${missingFiles.length > 5 ? ", ..." : ""}): LeRobot would try to fetch them from the Hub.`
      : null,
    renumbering
      ? `Episodes renumbered 0..${indices.length - 1} for LeRobot (episode_index and index in the data files, the episode rows in meta/episodes); the data files as delivered are in ${ORIGINALS_DIR}/, the original indices in ${PROVENANCE_FILE}.`
      : null,
    rewrite && droppedEpisodes.length
      ? `The data files LeRobot reads leave out the frames of the episodes meta/ does not list; as delivered they are in ${ORIGINALS_DIR}/.`
      : null,
    layout.videoKeys
      ? `meta/info.json declares only the cameras pulled (${layout.videoKeys.join(", ") || "none"}); the others are left out of it and of meta/stats.json, as LeRobot's remove_feature does.`
      : null,
    subset?.loader.note
      ? `${subset.loader.note}${layout.keepOriginalIndices ? "; das pull does that without --keep-original-indices." : "."}`
      : null,
  ];

  const mapping =
    renumbering?.episodes.map((e) => ({
      episode_id: idOf.get(e.originalEpisodeIndex)!,
      original_episode_index: e.originalEpisodeIndex,
      episode_index: e.episodeIndex,
    })) ?? null;
  // The version's meta/ describes every episode; only the delivered ones may stay in the directory.
  const trimmed = await trimOriginalMeta(
    dir,
    input.inScope,
    layout.episodes.delivered.map((id) => episodeIndexOf(datasetId, id)),
    Boolean(earlier?.meta_originals_trimmed),
  );
  await writeProvenance(provenanceFile, input, earlier, {
    trimmed,
    requested,
    coDelivered,
    leftOut: incomplete,
    indices,
    idOf,
    subset,
    written,
  });
  return {
    codebase_version: input.format.codebase_version,
    episode_indices: indices,
    requested,
    co_delivered: coDelivered,
    left_out: incomplete,
    meta: whole ? "as delivered" : "rewritten",
    cameras: layout.videoKeys ?? null,
    data_rewritten: rewrite && {
      written: rewrite.dataFiles.filter((f) => f.written).length,
      kept: rewrite.dataFiles.filter((f) => !f.written).length,
      dropped_episodes: droppedEpisodes,
    },
    renumbered: renumbering && {
      episodes: mapping!,
      data_files_written: renumbering.dataFiles.filter((f) => f.written).length,
      data_files_kept: renumbering.dataFiles.filter((f) => !f.written).length,
    },
    missing_files: missingFiles,
    loads_as_is: loadsAsIs,
    loads_with_episode_list: loadsWithList,
    note: notes.filter(Boolean).join(" ") || null,
    open_with: openWith,
    provenance: provenanceFile,
  };
}

export type Provenance = {
  dataset_id: string;
  version: string;
  source_format: "lerobot";
  codebase_version: string;
  written_at: string;
  /** `left_out`: co-delivered episodes meta/ does not list (not every file of theirs was delivered); `episode_indices`: those it lists, by their indices in the version. */
  episodes: { requested: string[]; co_delivered: string[]; left_out: string[]; episode_indices: number[] };
  /** Every download (disclosure-log entry) of this directory, over all runs, oldest first. */
  downloads: DownloadRecord[];
  /** Every file of the pull (stored_at null: a meta/ file cut down, see meta_originals_trimmed). */
  files: ProvenanceFile[];
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
  /** The version's meta/ under meta_originals cut down to the delivered episodes, or null: kept as delivered (every episode it lists was delivered). */
  meta_originals_trimmed: TrimmedOriginals | null;
};

/**
 * The version's meta/ as kept under .das/original/ once cut down to the delivered episodes: for
 * each file of the manifest, the sha256 delivered and the sha256 kept (null: not kept, none of its
 * episodes was delivered).
 */
export type TrimmedOriginals = {
  episode_indices: number[];
  files: { path: string; sha256: string; kept_sha256: string | null }[];
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
  result: {
    requested: string[];
    coDelivered: string[];
    leftOut: string[];
    indices: number[];
    idOf: Map<number, string>;
    subset: SubsetResult | null;
    written: Map<string, string>;
    trimmed: TrimmedOriginals | null;
  },
): Promise<void> {
  const byPath = new Map(input.inScope.map((f) => [f.path, f]));
  const cutDown = new Set(result.trimmed?.files.filter((f) => f.kept_sha256 !== f.sha256).map((f) => f.path));
  const rewrite = result.subset?.rewrite ?? null;
  const renumbering = rewrite?.renumbered ? rewrite : null;
  const dataFiles = new Map(rewrite?.dataFiles.map((f) => [f.path, f]));
  const idOf = (e: number) => `${input.manifest.dataset_id}-${String(e).padStart(6, "0")}`;
  const document: Provenance = {
    dataset_id: input.manifest.dataset_id,
    version: input.manifest.version,
    source_format: "lerobot",
    codebase_version: input.format.codebase_version,
    written_at: new Date().toISOString(),
    episodes: {
      requested: result.requested,
      co_delivered: result.coDelivered,
      left_out: result.leftOut,
      episode_indices: result.indices,
    },
    ...pulledFiles({ ...input, earlier, storedAt: (f) => (cutDown.has(f.path) ? null : input.layout.placeOf(f)) }),
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
    written: [...result.written]
      .sort(([a], [b]) => byteOrder(a, b))
      .map(([relative, sha256]) => {
        const rewritten = dataFiles.get(relative);
        const delivered = rewritten ? byPath.get(relative) : undefined;
        if (!rewritten || !delivered)
          return {
            path: relative,
            sha256,
            from: null,
            change: `written for the delivered episodes from the version's meta/ in ${ORIGINALS_DIR}/meta`,
          };
        const changes = [
          rewritten.droppedEpisodes.length
            ? `the frames of ${rewritten.droppedEpisodes.map(idOf).join(", ")} (not in meta/: not every file of theirs was delivered) left out`
            : null,
          renumbering ? `${RENUMBERED_COLUMNS.join(" and ")} renumbered as in renumbering.episodes` : null,
        ].filter(Boolean);
        return {
          path: relative,
          sha256,
          from: { path: input.layout.placeOf(delivered), sha256: delivered.sha256 },
          change: `${changes.join("; ")}; every other column, the schema, the key/value metadata and the row groups as delivered${rewritten.droppedEpisodes.length ? " (less the rows left out)" : ""}`,
        };
      }),
    meta_originals: ORIGINALS_DIR,
    meta_originals_trimmed: result.trimmed,
  };
  await writeAtomically(file, `${JSON.stringify(document, null, 2)}\n`);
}

/** Copies the files under `from` to `to` (both relative to `dir`), every path checked to stay inside it. */
async function copyTree(dir: string, from: string, to: string): Promise<void> {
  for (const entry of await readdir(await pathInside(dir, from), { withFileTypes: true })) {
    const source = `${from}/${entry.name}`;
    const target = `${to}/${entry.name}`;
    if (entry.isDirectory()) await copyTree(dir, source, target);
    else if (entry.isFile()) {
      const into = await pathInside(dir, target);
      await mkdir(path.dirname(into), { recursive: true });
      const temporary = `${into}.${randomBytes(6).toString("hex")}.tmp`;
      await copyFile(await pathInside(dir, source), temporary);
      await rename(temporary, into);
    }
  }
}

/** What an earlier pull into `dir` kept of the version's meta/ when it cut it down, or null. */
export async function earlierTrimmedOriginals(
  dir: string,
  manifest: ManifestDocument,
): Promise<TrimmedOriginals | null> {
  const earlier = await pathInside(dir, PROVENANCE_FILE)
    .then((file) => earlierProvenance(file, manifest))
    .catch(() => null);
  return earlier?.meta_originals_trimmed ?? null;
}

/**
 * Cuts the version's meta/ kept under .das/original/ down to the delivered episodes, when it lists
 * others: the server delivers the whole version's meta/ (every episode's length, statistics, tasks
 * and files), but what stays in the directory is metadata of the episodes delivered (and so
 * disclosed) only. It is written as writeSubsetMeta writes a subset, with the version's indices,
 * which is all a later run needs to write meta/ again for these episodes or fewer. A file none of
 * whose episodes was delivered is not kept.
 */
export async function trimOriginalMeta(
  dir: string,
  inScope: Pick<ManifestFile, "path" | "sha256" | "episode_ids">[],
  delivered: number[],
  trimmedBefore: boolean,
): Promise<TrimmedOriginals | null> {
  const originals = await pathInside(dir, ORIGINALS_DIR);
  const listed = (await listedEpisodes(originals)).episodes;
  const kept = new Set(delivered);
  const keep = listed.filter((e) => kept.has(e));
  // Cut down by an earlier run: cut again, so that the provenance keeps describing what is kept.
  if (keep.length === listed.length && !trimmedBefore) return null;
  const metaFiles = inScope.filter((f) => f.episode_ids.length === 0 && f.path.startsWith("meta/"));
  const staging = await pathInside(dir, `${ORIGINALS_DIR}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    if (keep.length) await writeSubsetMeta({ sourceRoot: originals, targetRoot: staging, episodes: keep });
    const files: TrimmedOriginals["files"] = [];
    for (const file of metaFiles) {
      const place = await pathInside(dir, original(file.path));
      const cut = path.join(staging, ...file.path.split("/"));
      const sha256 = await sha256File(cut).catch(() => null);
      if (sha256 === null) await rm(place, { force: true });
      else await rename(cut, place);
      files.push({ path: file.path, sha256: file.sha256, kept_sha256: sha256 });
    }
    // A file of the version's meta/ that is not in the manifest was not delivered: nothing of it stays.
    for (const relative of await filesBelow(originals, "meta"))
      if (!metaFiles.some((f) => f.path === relative)) await rm(path.join(originals, relative), { force: true });
    return { episode_indices: keep, files };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function filesBelow(root: string, relative: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(root, relative), { withFileTypes: true }).catch(() => [])) {
    const below = `${relative}/${entry.name}`;
    if (entry.isDirectory()) out.push(...(await filesBelow(root, below)));
    else out.push(below);
  }
  return out;
}
