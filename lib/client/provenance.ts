import { readFile } from "node:fs/promises";
import { writeAtomically } from "../lerobot/subset";
import { pathInside } from "../safe-path";
import type { ManifestDocument, ManifestFile } from "./api";
import type { DownloadRecord } from "./lerobot-pull";

/** The file in a pulled directory that says where its files came from; `das sync` reads it. */
export const PROVENANCE_FILE = "das-provenance.json";

/**
 * A file of the pull as the manifest (and so the disclosure log) describes it, where it is kept
 * byte for byte as delivered, and the download it came from (null when an earlier run fetched it
 * and left no record).
 */
export type ProvenanceFile = {
  path: string;
  sha256: string;
  size_bytes: number;
  /** The episodes the file holds (none: a file of the whole version), so that `das sync` can tell which files a withdrawal concerns. */
  episode_ids: string[];
  download_id: string | null;
  /** null: not kept as delivered (a LeRobot meta/ file cut down to the delivered episodes). */
  stored_at: string | null;
};

/**
 * What every provenance records, whatever the format: every download of the directory over all
 * runs, oldest first, and every file of the scope. A resumed or repeated pull keeps what earlier
 * runs recorded for the files it did not fetch again.
 */
export function pulledFiles(input: {
  earlier: { downloads?: DownloadRecord[]; files?: ProvenanceFile[] } | null;
  inScope: ManifestFile[];
  deliveredBy: Map<string, string>;
  downloads: DownloadRecord[];
  storedAt: (file: ManifestFile) => string | null;
}): { downloads: DownloadRecord[]; files: ProvenanceFile[] } {
  const before = new Map((input.earlier?.files ?? []).map((f) => [`${f.path}\0${f.sha256}`, f.download_id]));
  const downloads = [...(input.earlier?.downloads ?? [])];
  for (const d of input.downloads) if (!downloads.some((e) => e.download_id === d.download_id)) downloads.push(d);
  const files = input.inScope.map((f) => ({
    path: f.path,
    sha256: f.sha256,
    size_bytes: f.size_bytes,
    episode_ids: f.episode_ids,
    download_id: input.deliveredBy.get(f.path) ?? before.get(`${f.path}\0${f.sha256}`) ?? null,
    stored_at: input.storedAt(f),
  }));
  return { downloads, files };
}

/**
 * The provenance of a pull of a version in our own format: every download (disclosure-log entry)
 * behind the directory, and every file with its episodes and the download it came from. A LeRobot
 * pull writes a fuller one (lib/client/lerobot-pull.ts) under the same name; `das sync` reads
 * either to find the files a withdrawal notice concerns.
 */
export type FilesProvenance = {
  dataset_id: string;
  version: string;
  source_format: "files";
  written_at: string;
  downloads: DownloadRecord[];
  files: ProvenanceFile[];
};

export async function writeFilesProvenance(input: {
  dir: string;
  manifest: ManifestDocument;
  inScope: ManifestFile[];
  deliveredBy: Map<string, string>;
  downloads: DownloadRecord[];
}): Promise<void> {
  const file = await pathInside(input.dir, PROVENANCE_FILE);
  let earlier: Partial<FilesProvenance> | null = null;
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as Partial<FilesProvenance>;
    if (parsed.dataset_id === input.manifest.dataset_id && parsed.version === input.manifest.version) earlier = parsed;
  } catch {
    earlier = null;
  }
  const document: FilesProvenance = {
    dataset_id: input.manifest.dataset_id,
    version: input.manifest.version,
    source_format: "files",
    written_at: new Date().toISOString(),
    ...pulledFiles({ ...input, earlier, storedAt: (f) => f.path }),
  };
  await writeAtomically(file, `${JSON.stringify(document, null, 2)}\n`);
}
