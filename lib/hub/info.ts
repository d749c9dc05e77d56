import { parse as parseYaml } from "yaml";
import type { Ctx } from "../context";
import { cachedRead } from "../cache/read-cache";
import { getObjectBytes, s3Client } from "../storage/client";
import { storeLocation } from "../storage/config";
import { log } from "../log";
import { delivered, lookUpStored } from "../views/files";
import type { VersionView } from "../views/view";
import { fileEntry } from "./entries";
import { refsOf, NAMESPACE, type Repository } from "./repository";
import { allFiles } from "./tree";

/**
 * A repository's info at a revision (`GET /api/datasets/{repo}[/revision/{rev}]`) and its refs
 * (`GET .../refs`), as the clients read them. `siblings` lists every file of the revision, as the
 * Hub does up to 50,000 files; beyond that it is left out and the clients list the tree instead
 * (huggingface_hub 0.35 does exactly that when `siblings` is missing or longer).
 */

export const MAX_SIBLINGS = 50_000;
/** A README larger than this is not read for its card. */
const MAX_CARD_BYTES = 1_000_000;

export type RepoInfo = {
  _id: string;
  id: string;
  author: string;
  sha: string;
  lastModified: string;
  createdAt: string;
  private: true;
  gated: false;
  disabled: false;
  downloads: 0;
  likes: 0;
  tags: string[];
  usedStorage: number;
  cardData?: Record<string, unknown>;
  siblings?: {
    rfilename: string;
    size?: number;
    blobId?: string;
    lfs?: { sha256: string; size: number; pointerSize: number };
  }[];
};

/**
 * Without `blobs` the info names paths only, so it answers while a fingerprinted version's copies
 * are still being made (the clients then retry each file's 503 on their own); with them, sizes
 * and sha256s are the caller's own copies'.
 */
export async function repoInfo(ctx: Ctx, view: VersionView, options: { blobs: boolean }): Promise<RepoInfo> {
  const stored = await allFiles(ctx, view, MAX_SIBLINGS);
  const files = stored && options.blobs ? await delivered(ctx, view, stored) : stored;
  const card = await cardData(ctx, view);
  const released = view.version.releasedAt.toISOString();
  return {
    _id: view.sha.slice(0, 24),
    id: `${NAMESPACE}/${view.datasetId}`,
    author: NAMESPACE,
    sha: view.sha,
    lastModified: released,
    createdAt: released,
    private: true,
    gated: false,
    disabled: false,
    downloads: 0,
    likes: 0,
    tags: view.version.format ? ["LeRobot", `codebase:${view.version.format.codebase_version}`] : [],
    usedStorage: view.version.totalBytes,
    ...(card ? { cardData: card } : {}),
    ...(files
      ? {
          siblings: files.map((f) => {
            if (!options.blobs) return { rfilename: f.path };
            const entry = fileEntry(view, f, false);
            return {
              rfilename: f.path,
              size: f.size_bytes,
              blobId: entry.oid,
              lfs: { sha256: f.sha256, size: f.size_bytes, pointerSize: entry.lfs.pointerSize },
            };
          }),
        }
      : {}),
  };
}

export type RefsDocument = {
  branches: RefEntry[];
  tags: RefEntry[];
  converts: [];
};
type RefEntry = { name: string; ref: string; targetCommit: string };

export async function repoRefs(ctx: Ctx, repo: Repository): Promise<RefsDocument> {
  const { branches, tags } = await refsOf(ctx, repo);
  const entry = (r: { name: string; ref: string; view: VersionView }) => ({
    name: r.name,
    ref: r.ref,
    targetCommit: r.view.sha,
  });
  // `converts` is read without a default by the clients: always there, always empty.
  return { branches: branches.map(entry), tags: tags.map(entry), converts: [] };
}

/**
 * The YAML front matter of the revision's README.md (a dataset card's metadata), or undefined
 * when it has none, it is too large or not valid YAML: the card is information, never a reason
 * to refuse the info.
 */
function cardData(ctx: Ctx, view: VersionView): Promise<Record<string, unknown> | undefined> {
  // The README is the version's own (never rendered, the same front matter in every licence's copy).
  return cachedRead(ctx, "datasets", ["hub-card", view.version.versionId], async () => {
    const found = await lookUpStored(ctx, view, null, "README.md");
    if (!("file" in found) || found.file.size_bytes > MAX_CARD_BYTES || found.file.episode_ids.length) return null;
    try {
      const location = storeLocation();
      const client = s3Client(location);
      try {
        return frontMatter((await getObjectBytes(client, location.bucket, found.file.objectKey)).toString("utf8"));
      } finally {
        client.destroy();
      }
    } catch (error) {
      log.warn("dataset card not read", {
        dataset_id: view.datasetId,
        version: view.version.version,
        error: (error as Error).name,
      });
      return null;
    }
  }).then((card) => card ?? undefined);
}

/** The mapping between a leading `---` line and the next, or null. */
export function frontMatter(text: string): Record<string, unknown> | null {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\s*(\r?\n|$)/.exec(text);
  if (!match) return null;
  try {
    const value: unknown = parseYaml(match[1]!, { maxAliasCount: 100 });
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
