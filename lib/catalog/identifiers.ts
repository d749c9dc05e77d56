import { safePathProblem } from "../safe-path";

/** What our identifiers look like. A value of another shape cannot exist, so lookups answer "not found" without querying. */
export const DATASET_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;
// Episode ids appear as a path segment of /v1/episodes/{episode_id}/annotations: no slashes or spaces.
export const EPISODE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:~-]{0,199}$/;

/**
 * A file path as the importer admits it: the safe-path rule that `das pull` also judges
 * server-supplied paths by (relative, no unsafe character, no space at either end: aria2c, for
 * one, strips those from an option's value, so the file would land elsewhere).
 */
export function isSafeFilePath(path: string): boolean {
  return safePathProblem(path) === null;
}
