import type { Dir } from "node:fs";
import { mkdir, opendir, rename, stat } from "node:fs/promises";
import path from "node:path";
import type { DownloadBody } from "../api/requests";
import { showUnsafe } from "../characters";
import { joinSafely, pathInside } from "../safe-path";
import {
  ApiError,
  type ApiClient,
  type DownloadDocument,
  type EpisodeFilter,
  type PlanDocument,
  type PlannedFile,
  type PlanRequestBody,
} from "./api";
import { bytes } from "./format";
import { leRobotResult, removeLeftovers, writeTransformed, type LeRobotPullResult } from "./lerobot-pull";
import { checkPlan, fetchedPlace, narrowed, otherPlace, PROVENANCE_FILE } from "./plan";
import {
  earlierProvenance,
  provenanceOf,
  writeProvenance,
  type DownloadRecord,
  type Provenance,
  type ProvenanceFile,
} from "./provenance";
import { Progress } from "./progress";
import { fetchFile, localState, partialPath, sha256File, sizeOf, Throttle } from "./transfer";

export type PullOptions = Transfers & {
  api: ApiClient;
  dir: string;
  datasetId: string;
  version: string;
  /** Explicit episodes (--episodes). */
  episodeIds?: string[];
  /** The episode filters (--outcome, --task, --has-recovery, a duration range, ...). */
  filter?: EpisodeFilter;
  streams?: string[];
  /** A LeRobot v3.0 subset: keep the delivered data files in place and the indices as they are, rather than have them written renumbered 0..k-1 (--keep-original-indices). */
  keepOriginalIndices?: boolean;
};

/** How files are transferred, whoever asks for them (das pull, das sync). */
export type Transfers = {
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
  stderr?: { write(text: string): unknown; isTTY?: boolean; columns?: number };
};

export type PullSummary = {
  dataset_id: string;
  version: string;
  dir: string;
  /** The revision of the version the plan was made from (the Hub protocol's sha of the caller's view). */
  revision: string;
  /** Files and bytes in the plan. */
  files: number;
  bytes: number;
  /** Verified on disk before this run, so not fetched. */
  already_verified: number;
  /** Fetched and verified in this run (including resumed and re-fetched ones). */
  downloaded: number;
  /** Continued from a partial file with a Range request. */
  resumed: number;
  /** On disk with bytes that are neither the plan's nor what the last pull fetched (damaged or edited since), fetched again. */
  refetched_corrupt: number;
  /** On disk as the last pull fetched them, but the plan names other bytes for them now (a withdrawal since changed meta/, say), fetched again. */
  refetched_changed: number;
  bytes_received: number;
  /** Every download requested (each one an entry in the disclosure log). */
  downloads: string[];
  /** Episodes delivered beyond those chosen, because delivered files also hold them (byte order). */
  co_delivered_episode_ids: string[];
  /** Downloads (or the plan) requested again because URLs expired. */
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
 * Pulls a scope of a version into a directory: asks the service for the plan of it (which files,
 * where, how to get and check each one, what to write for LeRobot), and carries it out.
 */
export async function pull(options: PullOptions): Promise<PullSummary> {
  const request: PlanRequestBody = {
    ...(options.episodeIds ? { episode_ids: options.episodeIds } : {}),
    ...(options.filter ? { filter: options.filter } : {}),
    ...(options.streams ? { streams: options.streams } : {}),
    ...(options.keepOriginalIndices ? { keep_original_indices: true } : {}),
  };
  const plan = await askForPlan(options.api, options.datasetId, options.version, request);
  const { summary, provenance } = await carryOutPlan(plan, { ...options, request });
  if (provenance) await writeProvenance(options.dir, provenance);
  return summary;
}

/** The service's plan; a request it refuses as such (an unknown stream or episode) is a PullError. */
export async function askForPlan(
  api: ApiClient,
  datasetId: string,
  version: string,
  request: PlanRequestBody,
): Promise<PlanDocument> {
  try {
    return await api.plan(datasetId, version, request);
  } catch (error) {
    if (error instanceof ApiError && error.code === "invalid_body") throw new PullError(error.message);
    throw error;
  }
}

export type CarryOutOptions = Transfers & {
  api: ApiClient;
  dir: string;
  /** The version asked for: a plan of another is refused. */
  datasetId: string;
  version: string;
  /** What the plan was made for: recorded in the provenance, and asked for again when the plan's URLs expire. */
  request: PlanRequestBody;
  keepOriginalIndices?: boolean;
  /** false: fetch only the files the plan hands out by URL; a file of an episode not on disk fails (das sync fetches no episode). */
  downloads?: boolean;
};

/**
 * Carries a plan out: skips the files already verified on disk (moving one an earlier run kept
 * at its other place), fetches the rest with N parallel transfers (a download at a time, cut down
 * to the files missing, its URLs renewed as a new download when they expire; then the files the
 * plan hands out by URL), verifies each against the plan and renames it into place, and once
 * every file is there writes the transformed ones. Returns the provenance to write, or null when
 * files are missing (interrupted or failed: run it again).
 */
export async function carryOutPlan(
  plan: PlanDocument,
  options: CarryOutOptions,
): Promise<{ summary: PullSummary; provenance: Provenance | null }> {
  const started = Date.now();
  const err = options.stderr ?? process.stderr;
  checkPlan(plan, options.dir, options);
  const earlier = await earlierProvenance(options.dir, plan.dataset_id, plan.version);
  const summary: PullSummary = {
    dataset_id: plan.dataset_id,
    version: plan.version,
    dir: options.dir,
    revision: plan.revision,
    files: plan.files.length,
    bytes: plan.files.reduce((sum, f) => sum + f.size_bytes, 0),
    already_verified: 0,
    downloaded: 0,
    resumed: 0,
    refetched_corrupt: 0,
    refetched_changed: 0,
    bytes_received: 0,
    downloads: [],
    co_delivered_episode_ids: [],
    url_renewals: 0,
    range_ignored: 0,
    failed: plan.unplannable.map((u) => ({ path: u.path, reason: u.reason })),
    interrupted: false,
    seconds: 0,
    lerobot: null,
  };
  const { pending, corrupt, changed, partialBytes } = await checkLocal(options.dir, plan.files, summary, earlier);
  if (changed.size) err.write(`${showUnsafe(changedSinceLastPull(changed, earlier?.revision, plan.revision))}\n`);
  if (corrupt.size)
    err.write(
      `${corrupt.size} file(s) on disk match neither the plan nor what the last pull fetched (damaged or edited since) and will be fetched again.\n`,
    );
  const progress = new Progress(
    pending.length,
    pending.reduce((sum, f) => sum + f.size_bytes, 0),
    err,
  );
  progress.credit(partialBytes);
  const context: RunContext = {
    options,
    plan,
    summary,
    progress,
    corrupt,
    changed,
    throttle: options.limitRate ? new Throttle(options.limitRate) : undefined,
    deliveredBy: new Map(),
    downloadRecords: [],
  };
  if (pending.length) {
    await fetchPending(context, pending);
    progress.finish();
  }
  summary.interrupted = Boolean(options.signal?.aborted);
  summary.co_delivered_episode_ids = [
    ...new Set(context.downloadRecords.flatMap((d) => d.co_delivered_episode_ids)),
  ].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  let provenance: Provenance | null = null;
  // What das writes itself describes what is on disk, so it is written only once every file of the plan is.
  if (!summary.interrupted && !summary.failed.length) {
    const transformed = await writeTransformed(options.dir, plan, earlier);
    summary.failed.push(...transformed.failed);
    if (!summary.failed.length) {
      await removeLeftovers(options.dir, plan, earlier);
      provenance = provenanceOf({
        plan,
        request: options.request,
        earlier,
        deliveredBy: context.deliveredBy,
        downloads: context.downloadRecords,
        written: transformed.written,
      });
      summary.lerobot = leRobotResult(plan, transformed, {
        dir: options.dir,
        provenance: joinSafely(options.dir, PROVENANCE_FILE),
        keepOriginalIndices: Boolean(options.keepOriginalIndices ?? options.request.keep_original_indices),
      });
    }
  }
  summary.seconds = (Date.now() - started) / 1000;
  return { summary, provenance };
}

/** Every download with files missing, in the plan's order, then the files the plan hands out by URL. */
async function fetchPending(context: RunContext, pending: PlannedFile[]): Promise<void> {
  const { options, plan, summary } = context;
  const ofDownload = new Map<number, PlannedFile[]>();
  const byUrl: PlannedFile[] = [];
  for (const file of pending) {
    if ("download" in file.get) push(ofDownload, file.get.download, file);
    else byUrl.push(file);
  }
  const sizes = new Map<number, number>();
  for (const file of plan.files)
    if ("download" in file.get) sizes.set(file.get.download, (sizes.get(file.get.download) ?? 0) + 1);
  for (const [index, files] of [...ofDownload].sort((a, b) => a[0] - b[0])) {
    if (options.signal?.aborted) return;
    if (options.downloads === false) {
      for (const file of files)
        summary.failed.push({
          path: file.path,
          reason: "not on disk as the plan has it: run das pull again to fetch it",
        });
      continue;
    }
    const body = plan.downloads[index]!;
    for (const narrow of narrowed(body, files, files.length === sizes.get(index))) {
      const ids = new Set(narrow.episode_ids ?? []);
      const own = narrow === body ? files : files.filter((f) => "download" in f.get && ids.has(f.get.episode_id));
      try {
        await runFiles(context, new Lease(context, narrow, own), own);
      } catch (error) {
        // The download itself was refused (a licence revoked mid-run, say): its files fail, the rest go on.
        if (options.signal?.aborted) return;
        for (const file of own) summary.failed.push({ path: file.path, reason: String(error) });
      }
    }
  }
  if (byUrl.length && !options.signal?.aborted) await runFiles(context, new PlanUrls(context), byUrl);
}

async function checkLocal(
  dir: string,
  files: PlannedFile[],
  summary: PullSummary,
  earlier: Partial<Provenance> | null,
) {
  const pending: PlannedFile[] = [];
  const corrupt = new Set<string>();
  const changed = new Set<string>();
  const pulledBefore = new Map((earlier?.files ?? []).map((f) => [f.path, f]));
  let partialBytes = 0;
  // A first pull into a new (or empty) directory has nothing to check: each file's lookups (its
  // place and its other place resolved, their sizes, its partial file) would all fail, and at
  // 302 files they were 0.2 s of CPU before the first byte (bench:pull's profile). checkPlan has
  // already refused every unsafe path, which is all the walk could otherwise find.
  if (await holdsNothing(dir)) return { pending: [...files], corrupt, changed, partialBytes };
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      let dest: string;
      try {
        dest = await pathInside(dir, fetchedPlace(file));
        const state = await stateOnDisk(dest, file, pulledBefore.get(file.path));
        if (state === "verified" || (await adoptOtherCopy(dir, file, dest))) {
          summary.already_verified++;
          continue;
        }
        if (state === "corrupt") corrupt.add(file.path);
        if (state === "changed") changed.add(file.path);
      } catch (error) {
        summary.failed.push({ path: file.path, reason: (error as Error).message });
        continue;
      }
      const partial = await stat(partialPath(dest)).catch(() => undefined);
      if (partial && partial.size <= file.size_bytes) partialBytes += partial.size;
      pending.push(file);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  // Back in the plan's order, so that requests and progress follow it.
  const order = new Map(files.map((f, i) => [f.path, i]));
  pending.sort((a, b) => order.get(a.path)! - order.get(b.path)!);
  return { pending, corrupt, changed, partialBytes };
}

/**
 * A file on disk against the plan and against what the last pull recorded for its path: the
 * plan's bytes ("verified"), none ("missing"), the last pull's bytes where the plan now names
 * others ("changed": an update, such as meta/ rendered again after a withdrawal), or bytes that
 * are neither ("corrupt": damaged or edited since they were pulled). Hashed once at most.
 */
async function stateOnDisk(
  dest: string,
  file: PlannedFile,
  before: Pick<ProvenanceFile, "sha256" | "size_bytes"> | undefined,
): Promise<"verified" | "missing" | "changed" | "corrupt"> {
  const size = await sizeOf(dest);
  if (size === undefined) return "missing";
  const planChanged = before !== undefined && before.sha256 !== file.sha256;
  if (size !== file.size_bytes && !(planChanged && size === before.size_bytes)) return "corrupt";
  const digest = await sha256File(dest);
  if (size === file.size_bytes && digest === file.sha256) return "verified";
  return planChanged && size === before.size_bytes && digest === before.sha256 ? "changed" : "corrupt";
}

/** The line (paths and revisions from the server and the directory, shown escaped by the caller) that says which files the plan changed since the last pull: an update, not damage. */
function changedSinceLastPull(changed: Set<string>, was: string | undefined, now: string): string {
  const paths = [...changed].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const named = `${paths.slice(0, 5).join(", ")}${paths.length > 5 ? `, and ${paths.length - 5} more` : ""}`;
  const revision =
    was && was !== now ? `revision ${was.slice(0, 12)} then, ${now.slice(0, 12)} now` : "the plan names new bytes";
  return `${changed.size} file(s) changed since the last pull (${revision}) will be fetched: ${named}.`;
}

/** Whether `dir` does not exist or has no entry; a directory that cannot be read is left to the walk to report. */
async function holdsNothing(dir: string): Promise<boolean> {
  let listing: Dir;
  try {
    listing = await opendir(dir);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
  try {
    return (await listing.read()) === null;
  } finally {
    await listing.close();
  }
}

/**
 * A verified copy where an earlier run kept the file's bytes (at its path, or under
 * .das/original/ when that run wrote it transformed) is moved into place: fetching it again
 * would be another disclosure.
 */
async function adoptOtherCopy(dir: string, file: PlannedFile, dest: string): Promise<boolean> {
  const other = await pathInside(dir, otherPlace(file));
  if ((await localState(other, file)) !== "verified") return false;
  await mkdir(path.dirname(dest), { recursive: true });
  await rename(other, dest);
  return true;
}

type RunContext = {
  options: CarryOutOptions;
  plan: PlanDocument;
  summary: PullSummary;
  progress: Progress;
  corrupt: Set<string>;
  changed: Set<string>;
  throttle?: Throttle;
  /** The download each file of this run came from. */
  deliveredBy: Map<string, string>;
  downloadRecords: DownloadRecord[];
};

/** Where a run gets the URLs of some files: a download, or the plan itself. */
interface UrlSource {
  /** A URL for the file that will not expire within the margin, and the generation it belongs to. */
  url(file: PlannedFile): Promise<{ url: string; generation: number } | null>;
  /** New URLs for the files still open, once per generation however many transfers ask. */
  renew(from: number, why: "expire" | "refused"): Promise<void>;
  /** The download a file came from (null: the plan's own URL). */
  deliveredBy(file: PlannedFile): string | null;
  close(file: PlannedFile): void;
}

const expiring = (context: RunContext, expiresAt: string) => {
  const { now = Date.now, refreshMarginSeconds = 60 } = context.options;
  return now() >= Date.parse(expiresAt) - refreshMarginSeconds * 1000;
};

/** The signed URLs of one download, renewed (as a new download, for the files still open) when they expire. */
class Lease implements UrlSource {
  private generation = 0;
  private document!: DownloadDocument;
  private urls = new Map<string, string>();
  private renewing: Promise<void> | undefined;
  private readonly open: Set<string>;
  private started: Promise<void> | undefined;

  constructor(
    private readonly context: RunContext,
    private readonly body: DownloadBody,
    private readonly files: PlannedFile[],
  ) {
    this.open = new Set(files.map((f) => f.path));
  }

  async url(file: PlannedFile): Promise<{ url: string; generation: number } | null> {
    await (this.started ??= this.issue(this.body));
    if (expiring(this.context, this.document.expires_at)) await this.renew(this.generation, "expire");
    const url = this.urls.get(file.path);
    return url === undefined ? null : { url, generation: this.generation };
  }

  renew(from: number, why: "expire" | "refused"): Promise<void> {
    if (from !== this.generation) return Promise.resolve();
    this.renewing ??= (async () => {
      this.context.summary.url_renewals++;
      this.context.progress.log(
        why === "expire"
          ? `URLs of ${this.document.download_id} expire at ${this.document.expires_at}: requesting them again (a new download).`
          : `The store refused a URL of ${this.document.download_id}: requesting the files again (a new download).`,
      );
      const open = this.files.filter((f) => this.open.has(f.path));
      // Cut down to the open files' episodes, in one body: they are fewer than the download's.
      await this.issue(narrowed(this.body, open, false)[0]!);
      this.generation++;
    })().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  deliveredBy(): string {
    return this.document.download_id;
  }

  close(file: PlannedFile): void {
    this.open.delete(file.path);
  }

  private async issue(body: DownloadBody): Promise<void> {
    const { options, summary, downloadRecords } = this.context;
    this.document = await options.api.createDownload(body);
    summary.downloads.push(this.document.download_id);
    downloadRecords.push({
      download_id: this.document.download_id,
      co_delivered_episode_ids: this.document.co_delivered_episode_ids,
    });
    this.urls = new Map(this.document.files.map((f) => [f.path, f.url]));
  }
}

/**
 * The URLs the plan hands out itself (files of no episode: meta/, a README), renewed by asking for
 * the plan again when they expire: a plan of another revision (a withdrawal since) is not mixed in.
 */
class PlanUrls implements UrlSource {
  private generation = 0;
  private renewing: Promise<void> | undefined;
  private urls: Map<string, string>;
  private expiresAt: string;

  constructor(private readonly context: RunContext) {
    this.urls = urlsOf(context.plan);
    this.expiresAt = context.plan.expires_at;
  }

  async url(file: PlannedFile): Promise<{ url: string; generation: number } | null> {
    if (expiring(this.context, this.expiresAt)) await this.renew(this.generation, "expire");
    const url = this.urls.get(`${file.path}\0${file.sha256}`);
    return url === undefined ? null : { url, generation: this.generation };
  }

  renew(from: number, why: "expire" | "refused"): Promise<void> {
    if (from !== this.generation) return Promise.resolve();
    this.renewing ??= (async () => {
      const { options, plan, summary, progress } = this.context;
      summary.url_renewals++;
      progress.log(
        why === "expire"
          ? `The plan's URLs expire at ${this.expiresAt}: asking for the plan again.`
          : "The store refused a URL of the plan: asking for the plan again.",
      );
      const again = await options.api.plan(plan.dataset_id, plan.version, options.request);
      if (again.revision !== plan.revision)
        throw new Error(
          `the version changed while it was pulled (revision ${plan.revision}, now ${again.revision}): run das pull again`,
        );
      this.urls = urlsOf(again);
      this.expiresAt = again.expires_at;
      this.generation++;
    })().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  deliveredBy(): null {
    return null;
  }

  close(): void {}
}

const urlsOf = (plan: PlanDocument) =>
  new Map(plan.files.flatMap((f) => ("url" in f.get ? [[`${f.path}\0${f.sha256}`, f.get.url] as const] : [])));

/** The files of one source, N at a time. */
async function runFiles(context: RunContext, source: UrlSource, files: PlannedFile[]): Promise<void> {
  const { options, summary } = context;
  let next = 0;
  const worker = async () => {
    while (next < files.length && !options.signal?.aborted) {
      const file = files[next++]!;
      try {
        const reason = await transfer(context, source, file);
        if (reason) summary.failed.push({ path: file.path, reason });
      } catch (error) {
        if (options.signal?.aborted) return;
        summary.failed.push({ path: file.path, reason: error instanceof Error ? error.message : String(error) });
      } finally {
        source.close(file);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
}

/** One file, renewing its URL once if the store refuses it; returns why it failed, if it did. */
async function transfer(context: RunContext, source: UrlSource, file: PlannedFile): Promise<string | undefined> {
  const { options, summary, progress } = context;
  const dest = await pathInside(options.dir, fetchedPlace(file));
  for (let renewed = false; ; renewed = true) {
    const leased = await source.url(file);
    if (!leased) return "the download did not include it";
    const result = await fetchFile(file, leased.url, dest, {
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
      const by = source.deliveredBy(file);
      if (by) context.deliveredBy.set(file.path, by);
      summary.downloaded++;
      if (result.resumedFrom > 0 && !result.rangeIgnored) summary.resumed++;
      if (result.rangeIgnored) {
        summary.range_ignored++;
        progress.log(`${file.path}: the store ignored the Range request; fetched the whole file again.`);
      }
      if (context.corrupt.has(file.path)) summary.refetched_corrupt++;
      if (context.changed.has(file.path)) summary.refetched_changed++;
      progress.fileDone();
      return undefined;
    }
    if (!result.expired) return result.reason;
    if (renewed) return "the store refused the URL (403) even after it was requested again";
    await source.renew(leased.generation, "refused");
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The closing lines on stderr. */
export function describeSummary(s: PullSummary): string {
  const lines = [
    `${s.interrupted ? "Interrupted" : s.failed.length ? "Incomplete" : "Done"}: ${s.dataset_id}@${s.version} into ${s.dir}: ${s.files} files, ${bytes(s.bytes)} in scope.`,
    `  ${s.already_verified} already verified on disk, ${s.downloaded} downloaded and verified (${bytes(s.bytes_received)} received in ${s.seconds.toFixed(1)} s${s.seconds > 0 ? `, ${bytes(Math.round(s.bytes_received / s.seconds))}/s` : ""}).`,
  ];
  const extras = [
    s.resumed && `${s.resumed} resumed from a partial file`,
    s.refetched_changed && `${s.refetched_changed} fetched again because the plan changed them since the last pull`,
    s.refetched_corrupt && `${s.refetched_corrupt} re-fetched because the copy on disk was damaged or edited`,
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
  if (s.lerobot) lines.push(...describeLeRobot(s.lerobot));
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

function describeLeRobot(l: LeRobotPullResult): string[] {
  const meta = { "as delivered": "as delivered", rewritten: "written for them", none: "none" }[l.meta];
  const lines = [
    `  LeRobot ${l.codebase_version} dataset of ${l.episode_indices.length} episode(s): meta/ ${meta}${
      l.renumbered
        ? `, data files written with the episodes renumbered 0..${l.episode_indices.length - 1}`
        : l.data_rewritten
          ? ", data files written with only their frames"
          : ""
    }, provenance in ${l.provenance}.`,
  ];
  if (l.left_out.length)
    lines.push(
      `  ${l.left_out.length} episode(s) that came along are not in it, because not every file of theirs was delivered (${l.left_out.slice(0, 5).join(", ")}${l.left_out.length > 5 ? ", ..." : ""}); name them with --episodes to pull them whole.`,
    );
  if (l.open_with) lines.push(`  Open it with: ${l.open_with}`);
  if (l.note) lines.push(`  Note: ${l.note}`);
  return lines;
}
