import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import {
  needsRenumbering,
  RENUMBERED_COLUMNS,
  writeAtomically,
  writeSubsetMeta,
  type DataRewrite,
} from "../lerobot/subset";
import { pathInside } from "../safe-path";
import type { ApiClient, NoticeDocument } from "./api";
import {
  ORIGINALS_DIR,
  PROVENANCE_FILE,
  trimOriginalMeta,
  type Provenance,
  type TrimmedOriginals,
} from "./lerobot-pull";
import type { FilesProvenance } from "./provenance";
import { sha256File } from "./transfer";

type WithdrawalNoticeDocument = Extract<NoticeDocument, { kind: "withdrawal" }>;

/** What `das sync` did (or, with --dry-run, would do) to a pulled directory. */
export type SyncResult = {
  dir: string;
  dataset_id: string;
  version: string;
  dry_run: boolean;
  /** The notices that concern this directory's downloads. */
  notices: { notice_id: string; episode_ids: string[]; acknowledgement_id: string | null }[];
  /** Withdrawn episodes that were in the directory. */
  withdrawn_episodes: string[];
  /** Episodes not withdrawn whose files went too, because a deleted file also held them (LeRobot v3.0). */
  also_removed: string[];
  /** Paths deleted (or that would be), relative to the directory. */
  deleted: string[];
  /** A LeRobot directory: meta/ written again for the episodes left, or removed when none is left; null for other formats. */
  meta: "rewritten" | "removed" | null;
};

/** A directory `das sync` cannot work on (no provenance, or one from before episodes were recorded). */
export class SyncError extends Error {
  override name = "SyncError";
}

/**
 * What the directory keeps of each sync: the notice and counts only. The episodes' ids (and the
 * paths of their files, which may hold them) stay with the acknowledgement on the server, so that
 * nothing under the directory names a withdrawn episode any more.
 */
export type SyncRecord = { notice_id: string; episodes: number; deleted_files: number; synced_at: string };

type AnyProvenance = (Provenance | FilesProvenance) & { withdrawals?: SyncRecord[] };

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Brings a pulled directory in line with the withdrawal notices addressed to the key's
 * organisation: reads the directory's provenance (which download delivered which file of which
 * episodes), takes the notices naming one of those downloads, deletes every file that holds a
 * withdrawn episode (a shared v3.0 file takes the other episodes it holds with it), writes a
 * LeRobot directory's meta/ again for the episodes left so that it still loads, records what it did
 * in the provenance, and acknowledges each notice with the paths it deleted (one acknowledged
 * already only when this run deleted something). Every path it touches
 * is resolved inside the directory (lib/safe-path.ts), whatever the provenance says. With
 * `dryRun` it changes nothing and acknowledges nothing.
 */
export async function sync(options: {
  api: ApiClient;
  dir: string;
  dryRun?: boolean;
  statement?: string;
}): Promise<SyncResult> {
  const { api, dir } = options;
  const provenanceFile = await pathInside(dir, PROVENANCE_FILE);
  let provenance: AnyProvenance;
  try {
    provenance = JSON.parse(await readFile(provenanceFile, "utf8")) as AnyProvenance;
  } catch {
    throw new SyncError(
      `${dir} has no readable ${PROVENANCE_FILE}: das sync works on a directory das pull wrote (it says which download delivered which file).`,
    );
  }
  if (!Array.isArray(provenance.files) || provenance.files.some((f) => !Array.isArray(f.episode_ids)))
    throw new SyncError(
      `${PROVENANCE_FILE} in ${dir} does not say which episodes each file holds (an older das pull wrote it): pull the version again into a new directory.`,
    );
  const ours = new Set([
    ...(provenance.downloads ?? []).map((d) => d.download_id),
    ...provenance.files.map((f) => f.download_id).filter((id): id is string => id !== null),
  ]);
  // Only a withdrawal asks for deletion; the other kinds (a new version, a licence ending) just tell.
  const notices = (await api.listNotices()).filter(
    (n): n is WithdrawalNoticeDocument => n.kind === "withdrawal" && n.deliveries.some((d) => ours.has(d.download_id)),
  );
  const withdrawn = new Set(notices.flatMap((n) => n.episode_ids));
  const doomed = provenance.files.filter((f) => f.episode_ids.some((id) => withdrawn.has(id)));
  const removedEpisodes = new Set(doomed.flatMap((f) => f.episode_ids));
  const inDirectory = new Set(provenance.files.flatMap((f) => f.episode_ids));

  // Every place a doomed file is kept: where it was delivered to, its copy as delivered, and what das pull wrote from it.
  const doomedPlaces = new Set(doomed.flatMap((f) => [f.path, ...(f.stored_at ? [f.stored_at] : [])]));
  const writtenFrom =
    "written" in provenance
      ? provenance.written.filter((w) => doomedPlaces.has(w.path) || (w.from && doomedPlaces.has(w.from.path)))
      : [];
  const candidates = [...new Set([...doomedPlaces, ...writtenFrom.map((w) => w.path)])].sort(byteOrder);
  const deleted: string[] = [];
  for (const relative of candidates) {
    const place = await pathInside(dir, relative);
    if (await stat(place).catch(() => null)) deleted.push(relative);
  }

  const lerobot = provenance.source_format === "lerobot" ? (provenance as Provenance) : null;
  const remaining = lerobot
    ? lerobot.episodes.episode_indices.filter(
        (index) => !removedEpisodes.has(`${lerobot.dataset_id}-${String(index).padStart(6, "0")}`),
      )
    : [];
  const result: SyncResult = {
    dir,
    dataset_id: provenance.dataset_id,
    version: provenance.version,
    dry_run: Boolean(options.dryRun),
    notices: notices.map((n) => ({
      notice_id: n.notice_id,
      episode_ids: ownEpisodes(n, inDirectory),
      acknowledgement_id: null,
    })),
    withdrawn_episodes: [...withdrawn].filter((id) => inDirectory.has(id)).sort(byteOrder),
    also_removed: [...removedEpisodes].filter((id) => !withdrawn.has(id)).sort(byteOrder),
    deleted,
    meta: lerobot && doomed.length ? (remaining.length ? "rewritten" : "removed") : null,
  };
  if (options.dryRun || !notices.length) return result;

  for (const relative of deleted) await rm(await pathInside(dir, relative), { force: true });
  const keptFiles = provenance.files.filter((f) => !doomed.includes(f));
  const written = new Map<string, { sha256: string; from: { path: string; sha256: string } | null }>();
  let renumbered: DataRewrite | null = null;
  let trimmed: TrimmedOriginals | null = null;
  if (lerobot && doomed.length) {
    // meta/ is das pull's, written from the version's own under .das/original/: written again for what is left.
    const meta = await pathInside(dir, "meta");
    const staging = await pathInside(dir, `.das/sync.${randomBytes(6).toString("hex")}.tmp`);
    try {
      if (remaining.length) {
        // v3.0 opens by position: episodes that are no longer 0..k-1 need their data files renumbered,
        // as das pull does, from the copies as delivered under .das/original/.
        const dataFiles = keptFiles.filter((f) => f.path.startsWith("data/") && f.episode_ids.length);
        const rewrite =
          lerobot.codebase_version === "v3.0" && (lerobot.renumbering !== null || needsRenumbering("v3.0", remaining));
        if (rewrite)
          for (const f of dataFiles) {
            if (f.stored_at !== f.path) continue;
            const kept = await pathInside(dir, `${ORIGINALS_DIR}/${f.path}`);
            await mkdir(path.dirname(kept), { recursive: true });
            await rename(await pathInside(dir, f.path), kept);
            f.stored_at = `${ORIGINALS_DIR}/${f.path}`;
          }
        const subset = await writeSubsetMeta({
          sourceRoot: await pathInside(dir, ORIGINALS_DIR),
          targetRoot: staging,
          episodes: remaining,
          videoKeys: await videoKeysOf(dir),
          rewriteData: rewrite && { dataFiles: new Set(dataFiles.map((f) => f.path)) },
        });
        await rm(meta, { recursive: true, force: true });
        await rename(await pathInside(staging, "meta"), meta);
        for (const relative of subset.written) {
          const into = await pathInside(dir, relative);
          if (!relative.startsWith("meta/")) {
            await mkdir(path.dirname(into), { recursive: true });
            await rename(await pathInside(staging, relative), into);
          }
          const delivered = dataFiles.find((f) => f.path === relative);
          written.set(relative, {
            sha256: await sha256File(into),
            from: delivered?.stored_at ? { path: delivered.stored_at, sha256: delivered.sha256 } : null,
          });
        }
        renumbered = subset.rewrite?.renumbered ? subset.rewrite : null;
      } else await rm(meta, { recursive: true, force: true });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    // The version's meta/ kept under .das/original/ still lists the withdrawn episodes (their
    // lengths, statistics, tasks): cut down to the episodes left, as das pull cuts it to those delivered.
    trimmed = await trimOriginalMeta(
      dir,
      keptFiles.filter((f) => f.episode_ids.length === 0 && f.path.startsWith("meta/")),
      remaining,
      true,
    );
  }

  const syncedAt = new Date().toISOString();
  const cutDown = new Set(trimmed?.files.filter((f) => f.kept_sha256 !== f.sha256).map((f) => f.path));
  const next: AnyProvenance = {
    ...provenance,
    downloads: (provenance.downloads ?? []).map((d) => ({
      ...d,
      co_delivered_episode_ids: d.co_delivered_episode_ids.filter((id) => !removedEpisodes.has(id)),
    })),
    files: keptFiles.map((f) => (cutDown.has(f.path) ? { ...f, stored_at: null } : f)),
    withdrawals: [
      ...(provenance.withdrawals ?? []).map(withoutEpisodeIds),
      ...notices.map((n) => ({
        notice_id: n.notice_id,
        episodes: ownEpisodes(n, inDirectory).length,
        deleted_files: deleted.length,
        synced_at: syncedAt,
      })),
    ],
  } as AnyProvenance;
  if (lerobot && "written" in next) {
    const kept = (next as Provenance).written.filter((w) => !deleted.includes(w.path) && !written.has(w.path));
    (next as Provenance).written = [
      ...kept,
      ...[...written].map(([relative, w]) => ({
        path: relative,
        sha256: w.sha256,
        from: w.from,
        change: w.from
          ? `written again by das sync for the episodes left after a withdrawal: ${RENUMBERED_COLUMNS.join(" and ")} renumbered as in renumbering.episodes, the frames of episodes not left dropped`
          : `written again by das sync for the episodes left after a withdrawal, from the version's meta/ in ${ORIGINALS_DIR}/meta`,
      })),
    ].sort((a, b) => byteOrder(a.path, b.path));
    const gone = (id: string) => removedEpisodes.has(id);
    if (trimmed) (next as Provenance).meta_originals_trimmed = trimmed;
    (next as Provenance).episodes = {
      requested: lerobot.episodes.requested.filter((id) => !gone(id)),
      co_delivered: lerobot.episodes.co_delivered.filter((id) => !gone(id)),
      left_out: lerobot.episodes.left_out.filter((id) => !gone(id)),
      episode_indices: remaining,
    };
    // The renumbering of the data files now on disk (none: the indices are the version's).
    (next as Provenance).renumbering = renumbered && {
      changed_columns: [...RENUMBERED_COLUMNS],
      episodes: renumbered.episodes.map((e) => ({
        episode_id: `${lerobot.dataset_id}-${String(e.originalEpisodeIndex).padStart(6, "0")}`,
        original_episode_index: e.originalEpisodeIndex,
        episode_index: e.episodeIndex,
        original_dataset_from_index: e.originalFrom,
        original_dataset_to_index: e.originalTo,
        dataset_from_index: e.from,
        dataset_to_index: e.to,
      })),
    };
  }
  await writeAtomically(provenanceFile, `${JSON.stringify(next, null, 2)}\n`);

  const statement =
    options.statement ??
    `das sync deleted ${deleted.length} file(s) of the withdrawn episodes from a pulled copy of ${provenance.dataset_id}@${provenance.version}.`;
  // Each notice is told which of the files its own downloads delivered went, by their manifest's
  // paths (the service takes no other); one acknowledged already only when this run deleted some.
  const gone = new Set(deleted);
  for (const [i, entry] of result.notices.entries()) {
    const notice = notices[i]!;
    const paths = deliveredFilesDeleted(notice, doomed, gone, writtenFrom);
    if (notice.acknowledged_at && !paths.length) continue;
    const made = await api.acknowledgeNotice(entry.notice_id, { statement, deleted_paths: paths });
    entry.acknowledgement_id = made.acknowledgement_id;
  }
  return result;
}

/**
 * The files holding one of a notice's episodes of which this run deleted a copy (where it was
 * delivered to, its copy as delivered, or what das pull wrote from it), by the path the download's
 * manifest names, in byte order: what the notice's acknowledgement lists.
 */
function deliveredFilesDeleted(
  notice: WithdrawalNoticeDocument,
  doomed: AnyProvenance["files"],
  gone: Set<string>,
  writtenFrom: { path: string; from?: { path: string } | null }[],
): string[] {
  const episodes = new Set(notice.episode_ids);
  return doomed
    .filter((f) => f.episode_ids.some((id) => episodes.has(id)))
    .filter((f) => {
      const places = new Set([f.path, ...(f.stored_at ? [f.stored_at] : [])]);
      return (
        [...places].some((p) => gone.has(p)) ||
        writtenFrom.some((w) => gone.has(w.path) && (places.has(w.path) || (w.from && places.has(w.from.path))))
      );
    })
    .map((f) => f.path)
    .sort(byteOrder);
}

/** A record an earlier das sync wrote with the episodes' ids and paths, reduced to what is kept now. */
function withoutEpisodeIds(
  record: SyncRecord | { notice_id: string; episode_ids: string[]; deleted: string[]; synced_at: string },
): SyncRecord {
  if (!("episode_ids" in record)) return record;
  return {
    notice_id: record.notice_id,
    episodes: record.episode_ids.length,
    deleted_files: record.deleted.length,
    synced_at: record.synced_at,
  };
}

/** A notice's episodes that this directory held. */
const ownEpisodes = (notice: WithdrawalNoticeDocument, inDirectory: Set<string>) =>
  notice.episode_ids.filter((id) => inDirectory.has(id));

/** The cameras the directory's meta/info.json declares (das pull may have left some out with --streams). */
async function videoKeysOf(dir: string): Promise<string[] | undefined> {
  try {
    const info = JSON.parse(await readFile(await pathInside(dir, "meta/info.json"), "utf8")) as {
      features?: Record<string, { dtype?: string }>;
    };
    return Object.entries(info.features ?? {})
      .filter(([, feature]) => feature?.dtype === "video")
      .map(([key]) => key);
  } catch {
    return undefined;
  }
}

export function describeSync(result: SyncResult): string {
  const lines = [
    result.notices.length
      ? `${result.notices.length} notice(s) concern ${result.dir} (${result.dataset_id}@${result.version}): withdrawn ${result.withdrawn_episodes.join(", ") || "(none of its episodes)"}.`
      : `No notice concerns ${result.dir} (${result.dataset_id}@${result.version}): nothing to delete.`,
  ];
  if (result.also_removed.length)
    lines.push(
      `Also removed, because a deleted file holds them too: ${result.also_removed.join(", ")} (pull them again to get them back).`,
    );
  if (result.deleted.length)
    lines.push(
      `${result.dry_run ? "Would delete" : "Deleted"} ${result.deleted.length} file(s):`,
      ...result.deleted.map((p) => `  ${p}`),
    );
  if (result.meta)
    lines.push(
      result.meta === "rewritten"
        ? `meta/ ${result.dry_run ? "would be" : "was"} written again for the episodes left.`
        : `meta/ ${result.dry_run ? "would be" : "was"} removed: no episode is left.`,
    );
  if (!result.dry_run)
    for (const n of result.notices)
      if (n.acknowledgement_id) lines.push(`Acknowledged ${n.notice_id} (${n.acknowledgement_id}).`);
  return `${lines.join("\n")}\n`;
}
