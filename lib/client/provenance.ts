import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import type { DataTransform } from "../lerobot/data-rows";
import { pathInside } from "../safe-path";
import type { PlanDocument, PlanRequestBody } from "./api";
import { fetchedPlace, PROVENANCE_FILE } from "./plan";

/**
 * `das-provenance.json`: what ties a pulled directory to the disclosure log. Every download behind
 * it (over all runs, oldest first), every file of the plan with its episodes, the download it came
 * from and where its bytes as fetched are kept, every file das wrote itself (a v3.0 data file
 * transformed as the plan said) with what it was made from, and what was asked for. `das sync`
 * reads it to find the files a withdrawal notice concerns, and asks for a plan of what is left.
 */

export { PROVENANCE_FILE };

export type DownloadRecord = { download_id: string; co_delivered_episode_ids: string[] };

export type ProvenanceFile = {
  path: string;
  sha256: string;
  size_bytes: number;
  /** The episodes the file holds (none: a file of the whole version, or meta/ written for the pull), so that `das sync` can tell which files a withdrawal concerns. */
  episode_ids: string[];
  /** The download it came from; null for a file the plan handed out by URL (of no episode), or one an earlier run fetched and left no record of. */
  download_id: string | null;
  /** Where its bytes as fetched are kept (its path, or under .das/original/ when das wrote it transformed); null in an older das pull's provenance. */
  stored_at: string | null;
};

/** A file das wrote (not fetched): a v3.0 data file transformed as the plan said. */
export type WrittenFile = {
  path: string;
  sha256: string;
  from: { path: string; sha256: string } | null;
  transform?: DataTransform;
  change: string;
};

/** What `das sync` keeps of each sync: the notice and counts only (the episodes' ids stay with the acknowledgement on the server). */
export type SyncRecord = { notice_id: string; episodes: number; deleted_files: number; synced_at: string };

export type Renumbering = {
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
};

export type Provenance = {
  dataset_id: string;
  version: string;
  /** The revision of the version (the Hub protocol's sha of the view) the plan was made from. */
  revision?: string;
  source_format: "lerobot" | "files";
  codebase_version?: string;
  written_at: string;
  /** What was asked for; a plan of it is what a later `das pull` (and `das sync`, for what is left) carries out. */
  request?: PlanRequestBody;
  /** A LeRobot version: the episodes delivered; `left_out`: those meta/ does not list (not every file of theirs was delivered); `episode_indices`: those it lists, by their indices in the version. */
  episodes?: { requested: string[]; co_delivered: string[]; left_out: string[]; episode_indices: number[] };
  downloads: DownloadRecord[];
  files: ProvenanceFile[];
  /** A LeRobot v3.0 subset renumbered 0..k-1, or null: each episode's index and frame range (`index`) in the version and here. */
  renumbering?: Renumbering | null;
  written?: WrittenFile[];
  withdrawals?: SyncRecord[];
};

/** The directory's provenance if it is of this version (a pull into a directory of another starts afresh), else null. */
export async function earlierProvenance(
  dir: string,
  datasetId: string,
  version: string,
): Promise<Partial<Provenance> | null> {
  try {
    const document = JSON.parse(await readFile(await pathInside(dir, PROVENANCE_FILE), "utf8")) as Partial<Provenance>;
    return document.dataset_id === datasetId && document.version === version ? document : null;
  } catch {
    return null;
  }
}

/**
 * The provenance of a plan carried out: every file of the plan, the downloads of this run after
 * those of earlier runs, and for a file this run did not fetch, the download an earlier run
 * recorded for the same bytes. Sync records (`withdrawals`) are kept.
 */
export function provenanceOf(input: {
  plan: PlanDocument;
  request: PlanRequestBody;
  earlier: Partial<Provenance> | null;
  deliveredBy: Map<string, string>;
  downloads: DownloadRecord[];
  written: WrittenFile[];
}): Provenance {
  const { plan, earlier } = input;
  const before = new Map((earlier?.files ?? []).map((f) => [`${f.path}\0${f.sha256}`, f.download_id]));
  const downloads = [...(earlier?.downloads ?? [])];
  for (const d of input.downloads) if (!downloads.some((e) => e.download_id === d.download_id)) downloads.push(d);
  const lerobot = plan.lerobot;
  return {
    dataset_id: plan.dataset_id,
    version: plan.version,
    revision: plan.revision,
    source_format: lerobot ? "lerobot" : "files",
    ...(lerobot ? { codebase_version: lerobot.codebase_version } : {}),
    written_at: new Date().toISOString(),
    request: input.request,
    ...(lerobot
      ? {
          episodes: {
            requested: lerobot.requested,
            co_delivered: lerobot.co_delivered,
            left_out: lerobot.left_out,
            episode_indices: lerobot.episode_indices,
          },
        }
      : {}),
    downloads,
    files: plan.files.map((f) => ({
      path: f.path,
      sha256: f.sha256,
      size_bytes: f.size_bytes,
      episode_ids: f.episode_ids,
      download_id: input.deliveredBy.get(f.path) ?? before.get(`${f.path}\0${f.sha256}`) ?? null,
      stored_at: fetchedPlace(f),
    })),
    ...(lerobot ? { renumbering: renumberingOf(plan), written: input.written } : {}),
    ...(earlier?.withdrawals ? { withdrawals: earlier.withdrawals } : {}),
  };
}

/** Each renumbered episode's index and frame range before and after, from the plan's transforms. */
function renumberingOf(plan: PlanDocument): Renumbering | null {
  const mapping = plan.lerobot?.renumbering;
  if (!mapping) return null;
  const idOf = new Map(mapping.map((e) => [e.original_episode_index, e.episode_id]));
  const episodes = plan.files
    .flatMap((f) => f.transform?.episodes ?? [])
    .sort((a, b) => a.new_episode_index - b.new_episode_index)
    .map((e) => ({
      episode_id: idOf.get(e.episode_index) ?? "",
      original_episode_index: e.episode_index,
      episode_index: e.new_episode_index,
      original_dataset_from_index: e.index_from,
      original_dataset_to_index: e.index_from + e.length,
      dataset_from_index: e.new_index_from,
      dataset_to_index: e.new_index_from + e.length,
    }));
  return { changed_columns: plan.files.find((f) => f.transform)?.transform?.changed_columns ?? [], episodes };
}

/** Writes the provenance beside its place and renames it there: a reader never sees half of it. */
export async function writeProvenance(dir: string, document: Provenance): Promise<string> {
  const file = await pathInside(dir, PROVENANCE_FILE);
  const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(document, null, 2)}\n`);
    await rename(temporary, file);
  } finally {
    await rm(temporary, { force: true });
  }
  return file;
}
