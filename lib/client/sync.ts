import { readFile, rm, stat } from "node:fs/promises";
import { pathInside } from "../safe-path";
import type { ApiClient, NoticeDocument, PlanRequestBody } from "./api";
import { ORIGINALS_DIR, PROVENANCE_FILE } from "./plan";
import { writeProvenance, type Provenance, type SyncRecord } from "./provenance";
import { askForPlan, carryOutPlan } from "./pull";

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
  /** Why meta/ was removed although episodes are left (the service would not plan them), or null. */
  note: string | null;
};

/** A directory `das sync` cannot work on (no provenance, or one from before episodes were recorded). */
export class SyncError extends Error {
  override name = "SyncError";
}

export type { SyncRecord };

type Read = Partial<Provenance> & Pick<Provenance, "dataset_id" | "version" | "files">;

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Brings a pulled directory in line with the withdrawal notices addressed to the key's
 * organisation: reads the directory's provenance (which download delivered which file of which
 * episodes), takes the notices naming one of those downloads, deletes every file that holds a
 * withdrawn episode (a shared v3.0 file takes the other episodes it holds with it), has a LeRobot
 * directory's meta/ (and the data files written for it) made again for the episodes left by
 * carrying out the service's plan of them (it fetches no file of an episode: they are all on disk),
 * records what it did in the provenance, and acknowledges each notice with the paths it deleted
 * (one acknowledged already only when this run deleted something). Every path it touches is
 * resolved inside the directory (lib/safe-path.ts), whatever the provenance or the plan says. With
 * `dryRun` it changes nothing and acknowledges nothing.
 */
export async function sync(options: {
  api: ApiClient;
  dir: string;
  dryRun?: boolean;
  statement?: string;
  stderr?: { write(text: string): unknown };
}): Promise<SyncResult> {
  const { api, dir } = options;
  const provenance = await readProvenance(dir);
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

  // Every place a doomed file is kept: where it was delivered to, its copy as fetched, and what das wrote from it.
  const doomedPlaces = new Set(doomed.flatMap((f) => [f.path, ...(f.stored_at ? [f.stored_at] : [])]));
  const writtenFrom = (provenance.written ?? []).filter(
    (w) => doomedPlaces.has(w.path) || (w.from && doomedPlaces.has(w.from.path)),
  );
  const candidates = [...new Set([...doomedPlaces, ...writtenFrom.map((w) => w.path)])].sort(byteOrder);
  const deleted: string[] = [];
  for (const relative of candidates)
    if (await stat(await pathInside(dir, relative)).catch(() => null)) deleted.push(relative);

  const lerobot = provenance.source_format === "lerobot";
  const gone = (id: string) => removedEpisodes.has(id);
  const listed = lerobot ? listedEpisodes(provenance).filter((id) => !gone(id)) : [];
  const result: SyncResult = {
    dir,
    dataset_id: provenance.dataset_id,
    version: provenance.version,
    dry_run: Boolean(options.dryRun),
    notices: notices.map((n) => ({
      notice_id: n.notice_id,
      episode_ids: n.episode_ids.filter((id) => inDirectory.has(id)),
      acknowledgement_id: null,
    })),
    withdrawn_episodes: [...withdrawn].filter((id) => inDirectory.has(id)).sort(byteOrder),
    also_removed: [...removedEpisodes].filter((id) => !withdrawn.has(id)).sort(byteOrder),
    deleted,
    meta: lerobot && doomed.length ? (listed.length ? "rewritten" : "removed") : null,
    note: null,
  };
  if (options.dryRun || !notices.length) return result;

  // meta/ for what is left first (a plan of the episodes left, carried out from what is on disk),
  // then the deletions: a plan that cannot be had or carried out never holds them back.
  const madeAgain = lerobot && doomed.length && listed.length ? await rewriteFor(options, provenance, listed) : null;
  for (const relative of deleted) await rm(await pathInside(dir, relative), { force: true });
  if (lerobot && doomed.length && !madeAgain?.provenance) {
    await rm(await pathInside(dir, "meta"), { recursive: true, force: true });
    await rm(await pathInside(dir, `${ORIGINALS_DIR}/meta`), { recursive: true, force: true });
    if (listed.length) {
      result.meta = "removed";
      result.note = madeAgain?.note ?? null;
    }
  }

  const syncedAt = new Date().toISOString();
  const next: Read = {
    ...(madeAgain?.provenance ?? provenance),
    request: withoutEpisodes(provenance.request, gone),
    downloads: (provenance.downloads ?? []).map((d) => ({
      ...d,
      co_delivered_episode_ids: d.co_delivered_episode_ids.filter((id) => !gone(id)),
    })),
    withdrawals: [
      ...(provenance.withdrawals ?? []).map(withoutEpisodeIds),
      ...result.notices.map((n) => ({
        notice_id: n.notice_id,
        episodes: n.episode_ids.length,
        deleted_files: deleted.length,
        synced_at: syncedAt,
      })),
    ],
  };
  if (!madeAgain?.provenance) {
    next.files = provenance.files.filter((f) => !doomed.includes(f));
    if (next.written)
      next.written = next.written.filter((w) => !deleted.includes(w.path) && !w.path.startsWith("meta/"));
  }
  if (provenance.episodes) {
    const left = new Set([...provenance.episodes.left_out, ...(madeAgain?.provenance?.episodes?.left_out ?? [])]);
    next.episodes = {
      requested: provenance.episodes.requested.filter((id) => !gone(id)),
      co_delivered: provenance.episodes.co_delivered.filter((id) => !gone(id)),
      left_out: [...left].filter((id) => !gone(id)).sort(byteOrder),
      episode_indices: madeAgain?.provenance?.episodes?.episode_indices ?? [],
    };
  }
  await writeProvenance(dir, next as Provenance);
  await acknowledge(api, options.statement, provenance, notices, result, { doomed, deleted, writtenFrom });
  return result;
}

async function readProvenance(dir: string): Promise<Read> {
  let provenance: Read;
  try {
    provenance = JSON.parse(await readFile(await pathInside(dir, PROVENANCE_FILE), "utf8")) as Read;
  } catch {
    throw new SyncError(
      `${dir} has no readable ${PROVENANCE_FILE}: das sync works on a directory das pull wrote (it says which download delivered which file).`,
    );
  }
  if (!Array.isArray(provenance.files) || provenance.files.some((f) => !Array.isArray(f.episode_ids)))
    throw new SyncError(
      `${PROVENANCE_FILE} in ${dir} does not say which episodes each file holds (an older das pull wrote it): pull the version again into a new directory.`,
    );
  return provenance;
}

/** The episodes meta/ lists: those delivered whole (every one delivered, less those left out of meta/). */
function listedEpisodes(provenance: Read): string[] {
  const episodes = provenance.episodes;
  if (!episodes) return [];
  const leftOut = new Set(episodes.left_out);
  return [...episodes.requested, ...episodes.co_delivered].filter((id) => !leftOut.has(id)).sort(byteOrder);
}

/**
 * The service's plan of the episodes left, in the streams pulled, carried out without fetching any
 * file of an episode: meta/ rendered for them comes by URL, data files are transformed again from
 * their copies as fetched. Null provenance (and why) when the service would not plan them (a licence
 * ended, say) or a file of theirs is not on disk.
 */
async function rewriteFor(
  options: { api: ApiClient; dir: string; stderr?: { write(text: string): unknown } },
  provenance: Read,
  listed: string[],
): Promise<{ provenance: Provenance | null; note: string | null }> {
  const request: PlanRequestBody = {
    episode_ids: listed,
    streams: provenance.request?.streams ?? (await pulledStreams(options.dir)),
    ...(provenance.request?.keep_original_indices ? { keep_original_indices: true } : {}),
  };
  try {
    const plan = await askForPlan(options.api, provenance.dataset_id, provenance.version, request);
    const { summary, provenance: made } = await carryOutPlan(plan, {
      api: options.api,
      dir: options.dir,
      datasetId: provenance.dataset_id,
      version: provenance.version,
      request,
      downloads: false,
      stderr: options.stderr ?? { write: () => true },
    });
    if (made) return { provenance: made, note: null };
    return {
      provenance: null,
      note: `meta/ could not be made again for the episodes left (${summary.failed[0]?.path}: ${summary.failed[0]?.reason}), so it was removed: nothing in the directory describes a withdrawn episode. Pull the version again to get it back.`,
    };
  } catch (error) {
    return {
      provenance: null,
      note: `meta/ could not be made again for the episodes left (${String(error)}), so it was removed: nothing in the directory describes a withdrawn episode. Pull the version again to get it back.`,
    };
  }
}

/** The streams an older das pull wrote (it did not record its request): the data and the cameras meta/info.json declares. */
async function pulledStreams(dir: string): Promise<string[] | undefined> {
  try {
    const info = JSON.parse(await readFile(await pathInside(dir, "meta/info.json"), "utf8")) as {
      features?: Record<string, { dtype?: string }>;
    };
    const cameras = Object.entries(info.features ?? {}).filter(([, feature]) => feature?.dtype === "video");
    return ["data", ...cameras.map(([key]) => key)];
  } catch {
    return undefined;
  }
}

/** The request as recorded, less the withdrawn episodes it named (nothing in the directory names them any more). */
function withoutEpisodes(request: PlanRequestBody | undefined, gone: (id: string) => boolean) {
  if (!request?.episode_ids) return request;
  const { episode_ids, ...rest } = request;
  const left = episode_ids.filter((id) => !gone(id));
  return left.length ? { ...rest, episode_ids: left } : rest;
}

/**
 * Each notice is told which of the files its own downloads delivered went, by the paths the
 * service named (it takes no other); one acknowledged already only when this run deleted some.
 */
async function acknowledge(
  api: ApiClient,
  statement: string | undefined,
  provenance: Read,
  notices: WithdrawalNoticeDocument[],
  result: SyncResult,
  removed: { doomed: Read["files"]; deleted: string[]; writtenFrom: NonNullable<Read["written"]> },
): Promise<void> {
  const said =
    statement ??
    `das sync deleted ${removed.deleted.length} file(s) of the withdrawn episodes from a pulled copy of ${provenance.dataset_id}@${provenance.version}.`;
  const gone = new Set(removed.deleted);
  for (const [i, entry] of result.notices.entries()) {
    const notice = notices[i]!;
    const paths = deliveredFilesDeleted(notice, removed.doomed, gone, removed.writtenFrom);
    if (notice.acknowledged_at && !paths.length) continue;
    const made = await api.acknowledgeNotice(entry.notice_id, { statement: said, deleted_paths: paths });
    entry.acknowledgement_id = made.acknowledgement_id;
  }
}

/**
 * The files holding one of a notice's episodes of which this run deleted a copy (where it was
 * delivered to, its copy as fetched, or what das wrote from it), by their paths, in byte order:
 * what the notice's acknowledgement lists.
 */
function deliveredFilesDeleted(
  notice: WithdrawalNoticeDocument,
  doomed: Read["files"],
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
        : `meta/ ${result.dry_run ? "would be" : "was"} removed: ${result.note ?? "no episode is left."}`,
    );
  if (!result.dry_run)
    for (const n of result.notices)
      if (n.acknowledgement_id) lines.push(`Acknowledged ${n.notice_id} (${n.acknowledgement_id}).`);
  return `${lines.join("\n")}\n`;
}
