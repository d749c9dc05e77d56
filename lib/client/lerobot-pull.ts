import { randomBytes } from "node:crypto";
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { writeSubsetMeta, type SubsetResult } from "../lerobot/subset";
import type { ManifestDocument, ManifestFile } from "./api";

/**
 * What `das pull` adds for a version imported from a LeRobot dataset: the delivered data and video
 * files stay byte-identical at their original paths (they are what the manifest and the disclosure
 * log describe); the version's `meta/` is kept as delivered under `.das/original/` (where LeRobot
 * does not look, and where a resumed pull finds it verified), and `meta/` is written for the
 * episodes actually delivered, so that LeRobot opens the directory as a dataset of them.
 * `das-provenance.json` names the downloads (disclosure-log entries) behind the files.
 */

export const ORIGINALS_DIR = ".das/original";
export const PROVENANCE_FILE = "das-provenance.json";

export type LeRobotFormat = NonNullable<ManifestDocument["format"]>;

/** Where a manifest file goes: the version's meta/ under .das/original/, everything else at its own path. */
export function placeOfLeRobotFile(file: ManifestFile): string {
  return file.episode_ids.length === 0 && file.path.startsWith("meta/") ? `${ORIGINALS_DIR}/${file.path}` : file.path;
}

export type DownloadRecord = { download_id: string; co_delivered_episode_ids: string[] };

export type LeRobotPullResult = {
  codebase_version: string;
  /** Every episode in the delivered files: the subset `meta/` describes, as LeRobot episode indices. */
  episode_indices: number[];
  /** Delivered episodes that were chosen, and those that came along in shared files. */
  requested: string[];
  co_delivered: string[];
  /** `meta/` as delivered (the whole version) or rewritten for the subset. */
  meta: "as delivered" | "rewritten";
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

/**
 * Writes `meta/` and the provenance file once every file of the pull is verified on disk. The
 * delivered episodes are every episode of every delivered episode file: the ones chosen and the
 * ones that came along in files they share (v3.0), which the metadata must then list too.
 */
export async function finishLeRobotPull(input: {
  dir: string;
  format: LeRobotFormat;
  manifest: ManifestDocument;
  inScope: ManifestFile[];
  chosen: Set<string> | null;
  /** The download each file of this run came from. */
  deliveredBy: Map<string, string>;
  downloads: DownloadRecord[];
}): Promise<LeRobotPullResult> {
  const { dir, manifest } = input;
  const datasetId = manifest.dataset_id;
  const delivered = [...new Set(input.inScope.flatMap((f) => f.episode_ids))].sort(byteOrder);
  const requested = delivered.filter((id) => input.chosen === null || input.chosen.has(id));
  const coDelivered = delivered.filter((id) => input.chosen !== null && !input.chosen.has(id));
  const indices = delivered.map((id) => episodeIndexOf(datasetId, id)).sort((a, b) => a - b);

  let subset: SubsetResult | null = null;
  const whole = delivered.length === manifest.episode_count;
  if (whole) await copyTree(path.join(dir, ORIGINALS_DIR, "meta"), path.join(dir, "meta"));
  else if (indices.length) subset = await writeSubsetMeta({ sourceRoot: path.join(dir, ORIGINALS_DIR), targetRoot: dir, episodes: indices });

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

  const provenance = path.join(dir, PROVENANCE_FILE);
  await writeProvenance(provenance, input, { delivered, requested, coDelivered, indices });
  return {
    codebase_version: input.format.codebase_version,
    episode_indices: indices,
    requested,
    co_delivered: coDelivered,
    meta: whole ? "as delivered" : "rewritten",
    loads_as_is: loadsAsIs,
    loads_with_episode_list: loadsWithList,
    note: [v2 ? "LeRobot reads v2.x datasets up to its 0.3 releases (or converts them to v3.0 with its converter)." : null, subset?.loader.note ?? null].filter(Boolean).join(" ") || null,
    open_with: openWith,
    provenance,
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
  /** Every file of the pull, with the download it came from (null when an earlier run fetched it and left no record). */
  files: { path: string; sha256: string; size_bytes: number; download_id: string | null }[];
  meta_originals: string;
};

async function writeProvenance(file: string, input: Parameters<typeof finishLeRobotPull>[0], episodes: { delivered: string[]; requested: string[]; coDelivered: string[]; indices: number[] }): Promise<void> {
  // A resumed pull keeps what earlier runs recorded for the files it did not fetch again.
  let earlier: Partial<Provenance> = {};
  try {
    earlier = JSON.parse(await readFile(file, "utf8")) as Provenance;
  } catch {
    earlier = {};
  }
  const sameVersion = earlier.dataset_id === input.manifest.dataset_id && earlier.version === input.manifest.version;
  const before = new Map((sameVersion ? (earlier.files ?? []) : []).map((f) => [`${f.path}\0${f.sha256}`, f.download_id]));
  const downloads = [...(sameVersion ? (earlier.downloads ?? []) : [])];
  for (const d of input.downloads) if (!downloads.some((e) => e.download_id === d.download_id)) downloads.push(d);
  const document: Provenance = {
    dataset_id: input.manifest.dataset_id,
    version: input.manifest.version,
    source_format: "lerobot",
    codebase_version: input.format.codebase_version,
    written_at: new Date().toISOString(),
    episodes: { requested: episodes.requested, co_delivered: episodes.coDelivered, episode_indices: episodes.indices },
    downloads,
    files: input.inScope.map((f) => ({
      path: f.path,
      sha256: f.sha256,
      size_bytes: f.size_bytes,
      download_id: input.deliveredBy.get(f.path) ?? before.get(`${f.path}\0${f.sha256}`) ?? null,
    })),
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

async function writeAtomically(target: string, content: string): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const temporary = `${target}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, content);
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
