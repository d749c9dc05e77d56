import { mkdir, rename, stat } from "node:fs/promises";
import path from "node:path";
import type { DownloadBody } from "../api/requests";
import { showUnsafe } from "../characters";
import { joinSafely } from "../safe-path";
import type { ApiClient, DownloadDocument, ManifestDocument, ManifestFile } from "./api";
import { bytes } from "./format";
import {
  earlierTrimmedOriginals,
  finishLeRobotPull,
  leRobotLayout,
  type DownloadRecord,
  type LeRobotLayout,
  type LeRobotPullResult,
} from "./lerobot-pull";
import { filesInScope, planRequests, type PlannedRequest, type Scope } from "./plan";
import { writeFilesProvenance } from "./provenance";
import { Progress } from "./progress";
import { fetchFile, localState, partialPath, sha256File, Throttle } from "./transfer";

export type PullOptions = Scope & {
  api: ApiClient;
  dir: string;
  /** Parallel transfers. */
  concurrency?: number;
  /** Bytes per second over all transfers (--limit-rate). */
  limitRate?: number;
  /** For store transfers; the API client has its own. */
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** URLs are renewed this long before they expire, so that no transfer starts on a dying URL. */
  refreshMarginSeconds?: number;
  /** The clock URLs expire by (tests move it forward). */
  now?: () => number;
  /** Files per download request; the server's limit unless a test asks for smaller requests. */
  maxFilesPerRequest?: number;
  stderr?: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  /** A LeRobot v3.0 subset: keep the delivered data files in place and the indices as they are, rather than write them renumbered 0..k-1 and without the frames of episodes meta/ leaves out (--keep-original-indices). */
  keepOriginalIndices?: boolean;
};

export type PullSummary = {
  dataset_id: string;
  version: string;
  dir: string;
  /** Files and bytes in the scope. */
  files: number;
  bytes: number;
  /** Verified on disk before this run, so not fetched. */
  already_verified: number;
  /** Fetched and verified in this run (including resumed and re-fetched ones). */
  downloaded: number;
  /** Continued from a partial file with a Range request. */
  resumed: number;
  /** On disk with the wrong size or SHA-256, fetched again. */
  refetched_corrupt: number;
  bytes_received: number;
  /** Every download requested (each one an entry in the disclosure log). */
  downloads: string[];
  /** Episodes delivered beyond those chosen, because delivered files also hold them (byte order). */
  co_delivered_episode_ids: string[];
  /** Downloads requested again because URLs expired. */
  url_renewals: number;
  /** Partial files the store sent whole again because it ignored the Range header. */
  range_ignored: number;
  failed: { path: string; reason: string }[];
  interrupted: boolean;
  seconds: number;
  /** A version imported from a LeRobot dataset: what was written for LeRobot (null when nothing was: another format, or files failed). */
  lerobot: LeRobotPullResult | null;
};

/** A problem with the request itself (unknown stream or episode): nothing was downloaded. */
export class PullError extends Error {
  override name = "PullError";
}

/**
 * Pulls a scope of a version into a directory: plans download requests of at most 10,000 files
 * from the manifest, skips files already verified on disk, fetches the rest with N parallel
 * transfers, verifies each against the manifest and renames it into place, and renews URLs that
 * expire on the way (each renewal is a new download, and so a new disclosure).
 */
export async function pull(options: PullOptions): Promise<PullSummary> {
  const started = Date.now();
  const { api } = options;
  const err = options.stderr ?? process.stderr;
  const manifest = await api.manifest(options.datasetId, options.version);
  // A LeRobot version is written as a LeRobot dataset: its meta/ comes along, whatever the streams.
  const format = manifest.format ?? null;
  const scope: Scope = format ? { ...options, includeVersionFiles: true } : options;
  const episodes = await episodeSet(options, manifest);
  if (format && options.streams && !options.streams.includes("data")) {
    // A LeRobot dataset without its frames does not open, and adding them unasked would disclose more than asked for.
    throw new PullError(
      `${options.datasetId}@${options.version} is a LeRobot dataset, which das pull writes as one: LeRobot reads every frame from the data files, so --streams must include data (e.g. --streams data,${options.streams.join(",")}).`,
    );
  }
  const inScope = filesInScope(manifest, scope, episodes);
  const layout = format
    ? leRobotLayout(manifest, inScope, {
        keepOriginalIndices: options.keepOriginalIndices,
        streams: options.streams,
        trimmed: await earlierTrimmedOriginals(options.dir, manifest),
      })
    : null;
  const placeOf = layout?.placeOf ?? ((file: ManifestFile) => file.path);
  const summary: PullSummary = {
    dataset_id: options.datasetId,
    version: options.version,
    dir: options.dir,
    files: inScope.length,
    bytes: inScope.reduce((sum, f) => sum + f.size_bytes, 0),
    already_verified: 0,
    downloaded: 0,
    resumed: 0,
    refetched_corrupt: 0,
    bytes_received: 0,
    downloads: [],
    co_delivered_episode_ids: [],
    url_renewals: 0,
    range_ignored: 0,
    failed: [],
    interrupted: false,
    seconds: 0,
    lerobot: null,
  };

  const { pending, corrupt, partialBytes } = await checkLocal(options.dir, inScope, summary, placeOf, layout);
  if (corrupt.size) err.write(`${corrupt.size} file(s) on disk do not match the manifest and will be fetched again.\n`);
  const plan = planRequests(scope, inScope, pending, {
    filterCovers: Boolean(options.filter && !options.episodeIds),
    limit: options.maxFilesPerRequest,
    episodes,
  });
  for (const { file, reason } of plan.unplannable)
    summary.failed.push({ path: file.path, reason: `cannot be requested: ${reason}` });

  const progress = new Progress(
    pending.length,
    pending.reduce((sum, f) => sum + f.size_bytes, 0),
    err,
  );
  progress.credit(partialBytes);
  const context: RunContext = {
    options,
    summary,
    progress,
    corrupt,
    throttle: options.limitRate ? new Throttle(options.limitRate) : undefined,
    placeOf,
    deliveredBy: new Map(),
    downloadRecords: [],
  };
  if (pending.length) {
    for (const request of plan.requests) {
      if (options.signal?.aborted) break;
      try {
        await runRequest(context, request);
      } catch (error) {
        // The download itself was refused (a licence revoked mid-run, say): its files fail, the rest go on.
        if (options.signal?.aborted) break;
        for (const file of request.files) summary.failed.push({ path: file.path, reason: String(error) });
      }
    }
    progress.finish();
  }
  summary.interrupted = Boolean(options.signal?.aborted);
  summary.co_delivered_episode_ids = [
    ...new Set(context.downloadRecords.flatMap((d) => d.co_delivered_episode_ids)),
  ].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  // meta/ describes what is on disk, so it is written only once every file of the scope is.
  if (format && layout && !summary.interrupted && !summary.failed.length) {
    summary.lerobot = await finishLeRobotPull({
      dir: options.dir,
      format,
      manifest,
      inScope,
      layout,
      chosen: episodes,
      deliveredBy: context.deliveredBy,
      downloads: context.downloadRecords,
    });
  }
  // Any other format: the directory says which download delivered which file of which episodes.
  if (!format && !summary.interrupted && !summary.failed.length)
    await writeFilesProvenance({
      dir: options.dir,
      manifest,
      inScope,
      deliveredBy: context.deliveredBy,
      downloads: context.downloadRecords,
    });
  summary.seconds = (Date.now() - started) / 1000;
  return summary;
}

/** The episodes the scope names or matches, or null for "every file of the version". */
async function episodeSet(options: PullOptions, manifest: ManifestDocument): Promise<Set<string> | null> {
  if (options.streams) {
    const unknown = options.streams.filter((s) => !manifest.streams.includes(s));
    if (unknown.length)
      throw new PullError(
        `Unknown stream(s) for ${options.datasetId}@${options.version}: ${unknown.join(", ")}. Its streams are: ${manifest.streams.join(", ")}.`,
      );
  }
  let set: Set<string> | null = null;
  if (options.episodeIds) {
    const withFiles = new Set(manifest.files.flatMap((f) => f.episode_ids));
    const unknown = options.episodeIds.filter((id) => !withFiles.has(id));
    if (unknown.length)
      throw new PullError(
        `No files of these episodes in ${options.datasetId}@${options.version}: ${unknown.slice(0, 20).join(", ")}${unknown.length > 20 ? ", ..." : ""}.`,
      );
    set = new Set(options.episodeIds);
  }
  if (options.filter) {
    const matching = new Set<string>();
    for await (const episode of options.api.episodes(options.datasetId, options.version, options.filter))
      matching.add(episode.episode_id);
    set = set ? new Set([...set].filter((id) => matching.has(id))) : matching;
  }
  return set;
}

/** Where a manifest path lands under `dir`; a path that would leave it (or holds unsafe characters) is refused. */
export function destination(dir: string, file: string): string {
  return joinSafely(dir, file);
}

async function checkLocal(
  dir: string,
  files: ManifestFile[],
  summary: PullSummary,
  placeOf: (file: ManifestFile) => string,
  layout: LeRobotLayout | null,
) {
  const pending: ManifestFile[] = [];
  const corrupt = new Set<string>();
  let partialBytes = 0;
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      let dest: string;
      try {
        dest = destination(dir, placeOf(file));
      } catch (error) {
        summary.failed.push({ path: file.path, reason: (error as Error).message });
        continue;
      }
      const state = await localState(dest, file);
      if (
        state === "verified" ||
        (await keptTrimmed(dest, layout?.trimmedCopyOf(file))) ||
        (await adoptVerifiedCopy(dir, file, dest, layout?.alternativesOf(file) ?? []))
      ) {
        summary.already_verified++;
        continue;
      }
      if (state === "corrupt") corrupt.add(file.path);
      const partial = await stat(partialPath(dest)).catch(() => undefined);
      if (partial && partial.size <= file.size_bytes) partialBytes += partial.size;
      pending.push(file);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  // Back in manifest order, so that requests and progress follow the manifest.
  const order = new Map(files.map((f, i) => [f.path, i]));
  pending.sort((a, b) => order.get(a.path)! - order.get(b.path)!);
  return { pending, corrupt, partialBytes };
}

/** A file of the version's meta/ that an earlier pull delivered and cut down to its episodes, still as it left it. */
async function keptTrimmed(dest: string, trimmed: { sha256: string | null } | undefined): Promise<boolean> {
  if (!trimmed) return false;
  const now = await sha256File(dest).catch(() => null);
  return now === trimmed.sha256;
}

/**
 * A verified copy of the file where an earlier pull into the directory kept it (a LeRobot data file
 * it did or did not rewrite) is moved into place: fetching it again would be another disclosure.
 */
async function adoptVerifiedCopy(
  dir: string,
  file: ManifestFile,
  dest: string,
  alternatives: string[],
): Promise<boolean> {
  for (const alternative of alternatives) {
    const from = destination(dir, alternative);
    if ((await localState(from, file)) !== "verified") continue;
    await mkdir(path.dirname(dest), { recursive: true });
    await rename(from, dest);
    return true;
  }
  return false;
}

type RunContext = {
  options: PullOptions;
  summary: PullSummary;
  progress: Progress;
  corrupt: Set<string>;
  throttle?: Throttle;
  /** Where a file lands under the directory (its path, or under .das/original/ for a LeRobot meta/ file and a renumbered data file). */
  placeOf: (file: ManifestFile) => string;
  /** The download each file of this run came from. */
  deliveredBy: Map<string, string>;
  downloadRecords: DownloadRecord[];
};

/** The signed URLs of one planned request, renewed (as a new download) when they expire. */
class Lease {
  generation = 0;
  private document!: DownloadDocument;
  private urls = new Map<string, string>();
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly context: RunContext,
    private readonly request: PlannedRequest,
    private readonly open: Set<string>,
  ) {}

  async start(): Promise<void> {
    await this.issue(this.request.body);
  }

  has(file: ManifestFile): boolean {
    return this.urls.has(file.path);
  }

  get downloadId(): string {
    return this.document.download_id;
  }

  /** A URL for the file that will not expire within the margin, and the generation it belongs to. */
  async url(file: ManifestFile): Promise<{ url: string; generation: number }> {
    const { now = Date.now, refreshMarginSeconds = 60 } = this.context.options;
    if (now() >= Date.parse(this.document.expires_at) - refreshMarginSeconds * 1000)
      await this.renew(this.generation, "expire");
    return { url: this.urls.get(file.path)!, generation: this.generation };
  }

  /** Requests the still-open files again, once per generation however many transfers ask. */
  renew(from: number, why: "expire" | "refused"): Promise<void> {
    if (from !== this.generation) return Promise.resolve();
    this.renewing ??= (async () => {
      this.context.summary.url_renewals++;
      this.context.progress.log(
        why === "expire"
          ? `URLs of ${this.document.download_id} expire at ${this.document.expires_at}: requesting them again (a new download).`
          : `The store refused a URL of ${this.document.download_id}: requesting the files again (a new download).`,
      );
      await this.issue(
        narrowed(
          this.request.body,
          this.request.files.filter((f) => this.open.has(f.path)),
        ),
      );
      this.generation++;
    })().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private async issue(body: DownloadBody): Promise<void> {
    this.document = await this.context.options.api.createDownload(body);
    this.context.summary.downloads.push(this.document.download_id);
    this.context.downloadRecords.push({
      download_id: this.document.download_id,
      co_delivered_episode_ids: this.document.co_delivered_episode_ids,
    });
    this.urls = new Map(this.document.files.map((f) => [f.path, f.url]));
  }
}

/** The same request for fewer files: its episode list cut down to theirs (files of the whole version keep the first). */
function narrowed(body: DownloadBody, files: ManifestFile[]): DownloadBody {
  if (!body.episode_ids) return body;
  const episodes = new Set(files.flatMap((f) => f.episode_ids));
  const kept = body.episode_ids.filter((id) => episodes.has(id));
  return { ...body, episode_ids: kept.length ? kept : body.episode_ids.slice(0, 1) };
}

async function runRequest(context: RunContext, request: PlannedRequest): Promise<void> {
  const { options, summary } = context;
  const open = new Set(request.files.map((f) => f.path));
  const lease = new Lease(context, request, open);
  await lease.start();
  const queue = request.files.filter((file) => {
    if (lease.has(file)) return true;
    summary.failed.push({ path: file.path, reason: "the download did not include it" });
    return false;
  });
  let next = 0;
  const worker = async () => {
    while (next < queue.length && !options.signal?.aborted) {
      const file = queue[next++]!;
      try {
        const reason = await transfer(context, lease, file);
        if (reason) summary.failed.push({ path: file.path, reason });
      } catch (error) {
        if (options.signal?.aborted) return;
        summary.failed.push({ path: file.path, reason: String(error) });
      } finally {
        open.delete(file.path);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
}

/** One file, renewing its URL once if the store refuses it; returns why it failed, if it did. */
async function transfer(context: RunContext, lease: Lease, file: ManifestFile): Promise<string | undefined> {
  const { options, summary, progress } = context;
  const dest = destination(options.dir, context.placeOf(file));
  for (let renewed = false; ; renewed = true) {
    const { url, generation } = await lease.url(file);
    const result = await fetchFile(file, url, dest, {
      fetch: options.fetch,
      signal: options.signal,
      throttle: context.throttle,
      onBytes: (n) => {
        summary.bytes_received += n;
        progress.bytes(n);
      },
      onWait: (what, seconds) => progress.log(`${what}; retrying in ${seconds} s`),
    });
    if (result.ok) {
      context.deliveredBy.set(file.path, lease.downloadId);
      summary.downloaded++;
      if (result.resumedFrom > 0 && !result.rangeIgnored) summary.resumed++;
      if (result.rangeIgnored) {
        summary.range_ignored++;
        progress.log(`${file.path}: the store ignored the Range request; fetched the whole file again.`);
      }
      if (context.corrupt.has(file.path)) summary.refetched_corrupt++;
      progress.fileDone();
      return undefined;
    }
    if (!result.expired) return result.reason;
    if (renewed) return "the store refused the URL (403) even after it was requested again";
    await lease.renew(generation, "refused");
  }
}

/** The closing lines on stderr. */
export function describeSummary(s: PullSummary): string {
  const lines = [
    `${s.interrupted ? "Interrupted" : s.failed.length ? "Incomplete" : "Done"}: ${s.dataset_id}@${s.version} into ${s.dir}: ${s.files} files, ${bytes(s.bytes)} in scope.`,
    `  ${s.already_verified} already verified on disk, ${s.downloaded} downloaded and verified (${bytes(s.bytes_received)} received in ${s.seconds.toFixed(1)} s${s.seconds > 0 ? `, ${bytes(Math.round(s.bytes_received / s.seconds))}/s` : ""}).`,
  ];
  const extras = [
    s.resumed && `${s.resumed} resumed from a partial file`,
    s.refetched_corrupt && `${s.refetched_corrupt} re-fetched because the copy on disk was wrong`,
    s.range_ignored && `${s.range_ignored} fetched whole because the store ignored Range`,
  ].filter(Boolean);
  if (extras.length) lines.push(`  ${extras.join(", ")}.`);
  if (s.downloads.length) {
    lines.push(
      `  ${s.downloads.length} download request(s), each recorded in the disclosure log${s.url_renewals ? ` (${s.url_renewals} for expired or refused URLs)` : ""}: ${s.downloads.join(", ")}.`,
    );
  }
  if (s.co_delivered_episode_ids.length) {
    lines.push(
      `  ${s.co_delivered_episode_ids.length} more episode(s) came along in files they share with the chosen ones, and are recorded in the disclosure log too.`,
    );
  }
  if (s.lerobot) {
    const l = s.lerobot;
    lines.push(
      `  LeRobot ${l.codebase_version} dataset of ${l.episode_indices.length} episode(s): meta/ ${l.meta === "rewritten" ? "written for them" : "as delivered"} (the version's own under .das/original/)${
        l.renumbered
          ? `, data files written with the episodes renumbered 0..${l.episode_indices.length - 1}`
          : l.data_rewritten
            ? ", data files written with only their frames"
            : ""
      }, provenance in ${l.provenance}.`,
    );
    if (l.left_out.length) {
      lines.push(
        `  ${l.left_out.length} episode(s) that came along are not in it, because not every file of theirs was delivered (${l.left_out.slice(0, 5).join(", ")}${l.left_out.length > 5 ? ", ..." : ""}); name them with --episodes to pull them whole.`,
      );
    }
    if (l.open_with) lines.push(`  Open it with: ${l.open_with}`);
    if (l.note) lines.push(`  Note: ${l.note}`);
  }
  if (s.failed.length) {
    lines.push(`${s.failed.length} file(s) could not be fetched or verified:`);
    for (const f of s.failed.slice(0, 50)) lines.push(`  ${f.path}: ${f.reason}`);
    if (s.failed.length > 50) lines.push(`  ... and ${s.failed.length - 50} more (see --json).`);
  }
  if (s.interrupted)
    lines.push("Run the same command again to resume: verified files are kept, partial files are continued.");
  // Paths, ids and reasons come from the server: every line is shown escaped (an ESC in a path would drive the terminal).
  return `${lines.map(showUnsafe).join("\n")}\n`;
}
