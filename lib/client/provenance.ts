import { readFile } from "node:fs/promises";
import { writeAtomically } from "../lerobot/subset";
import { pathInside } from "../safe-path";
import type { ManifestDocument, ManifestFile } from "./api";
import { PROVENANCE_FILE, type DownloadRecord } from "./lerobot-pull";

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
  files: {
    path: string;
    sha256: string;
    size_bytes: number;
    episode_ids: string[];
    download_id: string | null;
    stored_at: string | null;
  }[];
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
  // A resumed or repeated pull keeps what earlier runs recorded for the files it did not fetch again.
  const before = new Map((earlier?.files ?? []).map((f) => [`${f.path}\0${f.sha256}`, f.download_id]));
  const downloads = [...(earlier?.downloads ?? [])];
  for (const d of input.downloads) if (!downloads.some((e) => e.download_id === d.download_id)) downloads.push(d);
  const document: FilesProvenance = {
    dataset_id: input.manifest.dataset_id,
    version: input.manifest.version,
    source_format: "files",
    written_at: new Date().toISOString(),
    downloads,
    files: input.inScope.map((f) => ({
      path: f.path,
      sha256: f.sha256,
      size_bytes: f.size_bytes,
      episode_ids: f.episode_ids,
      download_id: input.deliveredBy.get(f.path) ?? before.get(`${f.path}\0${f.sha256}`) ?? null,
      stored_at: f.path,
    })),
  };
  await writeAtomically(file, `${JSON.stringify(document, null, 2)}\n`);
}
