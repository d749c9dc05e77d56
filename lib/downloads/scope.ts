import type { EpisodeFilter } from "../catalog/episode-filter";

/**
 * The most files one download may hold: the disclosure entry, the signing and the answer stay
 * bounded. Larger scopes are split by the client (by episode ids, filter or streams).
 */
export const MAX_FILES_PER_DOWNLOAD = 10_000;

/**
 * What a download asks for: one version of a dataset, narrowed by `episode_ids` or `filter` (not
 * both) and/or `streams`, with the files of the whole version added by `include_version_files`. The API's request schema (lib/api/requests.ts) and the portal's download
 * action produce it; the shape is the wire's, so the disclosure log records the request as sent.
 */
export type DownloadRequest = {
  dataset_id: string;
  version: string;
  episode_ids?: string[];
  filter?: EpisodeFilter;
  streams?: string[];
  /** Also every file of the whole version (files of no episode, such as a LeRobot dataset's meta/), whatever `streams` says. */
  include_version_files?: boolean;
};
