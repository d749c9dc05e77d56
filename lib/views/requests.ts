import type { EpisodeFilter } from "../catalog/episode-filter";
import type { FileRecord } from "../catalog/get-manifest";
import { MAX_FILES_PER_DOWNLOAD, type DownloadRequest } from "../downloads/scope";

/**
 * Splitting a plan's files into download requests (POST /api/v1/downloads), as `das pull` has
 * always split them. A request names a scope (episodes, a filter, or the whole version, each
 * narrowed by streams), and the service resolves it to *every* file of that scope; so a request
 * is sized by what it resolves to, not by the files still missing, and must stay within a
 * download's 10,000 files and the API's 1 MB body.
 */

type DownloadBody = DownloadRequest;
type ManifestFile = Pick<FileRecord, "path" | "episode_ids" | "stream">;

export type Scope = {
  datasetId: string;
  version: string;
  /** Explicit episodes (--episodes). */
  episodeIds?: string[];
  /** The episode filters (--outcome, --task, --has-recovery, a duration range, ...). */
  filter?: EpisodeFilter;
  streams?: string[];
  /**
   * Also the files of the whole version (no episode: a LeRobot dataset's meta/), whatever the
   * streams: requested with `include_version_files` along with the episodes.
   */
  includeVersionFiles?: boolean;
};

export type PlannedRequest<F extends ManifestFile = ManifestFile> = { body: DownloadBody; files: F[] };
export type Unplannable<F extends ManifestFile = ManifestFile> = { file: F; reason: string };

const MAX_BODY_CHARS = 900_000;

/**
 * Requests that together cover `pending` (a subset of `inScope`, the scope's files). `filterCovers`
 * says the scope's filter alone describes exactly `inScope`, so a single filter request may be used.
 * `episodes` are the episodes the scope chose (null: every episode): a request names only those,
 * and a file shared by several episodes is fetched with the first of them.
 */
export function planRequests<F extends ManifestFile>(
  scope: Scope,
  inScope: readonly F[],
  pending: readonly F[],
  options: { filterCovers?: boolean; limit?: number; episodes?: Set<string> | null } = {},
): { requests: PlannedRequest<F>[]; unplannable: Unplannable<F>[] } {
  const limit = options.limit ?? MAX_FILES_PER_DOWNLOAD;
  const chosen = options.episodes ?? (scope.episodeIds ? new Set(scope.episodeIds) : null);
  const base = {
    dataset_id: scope.datasetId,
    version: scope.version,
    ...(scope.streams ? { streams: scope.streams } : {}),
  };
  const withVersionFiles = (body: DownloadBody): DownloadBody =>
    scope.includeVersionFiles ? { ...body, include_version_files: true } : body;
  if (!pending.length) return { requests: [], unplannable: [] };

  // Everything still missing and the whole scope fits in one request: ask for the scope as the user gave it.
  if (pending.length === inScope.length && inScope.length <= limit) {
    if (!scope.episodeIds && !scope.filter)
      return { requests: [{ body: withVersionFiles(base), files: [...pending] }], unplannable: [] };
    if (options.filterCovers && scope.filter && !scope.episodeIds)
      return {
        requests: [{ body: withVersionFiles({ ...base, filter: scope.filter }), files: [...pending] }],
        unplannable: [],
      };
  }

  type Planned = PlannedRequest<F> & { resolves: number; split?: true };
  const requests: Planned[] = [];
  const unplannable: Unplannable<F>[] = [];
  const versionLevel = pending.filter((f) => f.episode_ids.length === 0);
  const versionLevelInScope = inScope.filter((f) => f.episode_ids.length === 0).length;
  if (versionLevel.length && !scope.includeVersionFiles) {
    // Files of no episode are only in a whole-version request.
    const whole = inScope.length;
    if (!scope.episodeIds && !scope.filter && whole <= limit)
      requests.push({ body: base, files: versionLevel, resolves: whole });
    else
      for (const file of versionLevel)
        unplannable.push({
          file,
          reason: `only a download of the whole version holds it, and that is ${whole} files (more than ${limit})`,
        });
  }

  // What a request for an episode resolves to: every file of the scope that holds it.
  const perEpisode = new Map<string, F[]>();
  for (const f of inScope) for (const id of requestable(f, chosen)) push(perEpisode, id, f);
  const pendingByEpisode = new Map<string, F[]>();
  for (const f of pending) {
    const first = requestedWith(f, chosen);
    if (first !== null) push(pendingByEpisode, first, f);
  }

  let batch: { ids: string[]; files: F[]; resolved: Set<string>; chars: number } = {
    ids: [],
    files: [],
    resolved: new Set(),
    chars: 0,
  };
  const flush = () => {
    if (batch.ids.length)
      requests.push({ body: { ...base, episode_ids: batch.ids }, files: batch.files, resolves: batch.resolved.size });
    batch = { ids: [], files: [], resolved: new Set(), chars: 0 };
  };
  for (const [episodeId, files] of pendingByEpisode) {
    const resolving = perEpisode.get(episodeId)!;
    if (resolving.length > limit) {
      // One episode beyond the limit: one request per stream of it.
      for (const [stream, ofStream] of groupBy(files, (f) => f.stream)) {
        const streamTotal = resolving.filter((f) => f.stream === stream).length;
        if (stream === null || streamTotal > limit) {
          for (const file of ofStream)
            unplannable.push({
              file,
              reason: `episode ${episodeId} has ${streamTotal} files${stream ? ` of stream ${stream}` : " without a stream"}, more than one download holds (${limit})`,
            });
        } else {
          requests.push({
            body: { ...base, episode_ids: [episodeId], streams: [stream] },
            files: ofStream,
            resolves: streamTotal,
            split: true,
          });
        }
      }
      continue;
    }
    const chars = episodeId.length + 3;
    const adds = resolving.filter((f) => !batch.resolved.has(f.path)).length;
    if (batch.resolved.size + adds > limit || batch.chars + chars > MAX_BODY_CHARS || batch.ids.length >= limit)
      flush();
    batch.ids.push(episodeId);
    batch.files.push(...files);
    for (const f of resolving) batch.resolved.add(f.path);
    batch.chars += chars;
  }
  flush();

  if (versionLevel.length && scope.includeVersionFiles) {
    // The files of the whole version ride along on the episode request that resolves the fewest files.
    const carrier = requests.filter((r) => r.body.episode_ids && !r.split).sort((a, b) => a.resolves - b.resolves)[0];
    if (carrier && carrier.resolves + versionLevelInScope <= limit) {
      carrier.body = { ...carrier.body, include_version_files: true };
      carrier.files.push(...versionLevel);
    } else {
      // Nothing else to fetch (or no room): a request of its own, for the smallest chosen episode.
      const smallest = [...perEpisode].sort((a, b) => a[1].length - b[1].length)[0];
      if (smallest && smallest[1].length + versionLevelInScope <= limit) {
        requests.push({
          body: { ...base, episode_ids: [smallest[0]], include_version_files: true },
          files: versionLevel,
          resolves: smallest[1].length + versionLevelInScope,
        });
      } else if (!smallest && !scope.episodeIds && !scope.filter && versionLevelInScope <= limit) {
        requests.push({ body: withVersionFiles(base), files: versionLevel, resolves: inScope.length });
      } else {
        for (const file of versionLevel)
          unplannable.push({
            file,
            reason: `no request for the chosen episodes has room for the ${versionLevelInScope} files of the whole version (at most ${limit})`,
          });
      }
    }
  }
  return { requests: requests.map(({ body, files }) => ({ body, files })), unplannable };
}

/** The file's episodes a request may name: the chosen ones (null: every episode is). */
const requestable = (f: ManifestFile, chosen: Set<string> | null) =>
  f.episode_ids.filter((id) => chosen === null || chosen.has(id));

/**
 * The episode a file is requested with: the first of its chosen ones (null for a file of no
 * episode). A request naming it resolves to the file and to nothing outside the scope, since every
 * file holding a chosen episode is in it.
 */
export function requestedWith(f: ManifestFile, chosen: Set<string> | null): string | null {
  return requestable(f, chosen)[0] ?? null;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) push(groups, key(item), item);
  return groups;
}
