import type { DownloadBody } from "../api/requests";
import { showUnsafe } from "../characters";
import { joinSafely } from "../safe-path";
import { TransportError, type PlanDocument, type PlannedFile } from "./api";

/**
 * The plan of a pull as the service sends it (POST .../plan), checked before anything is fetched
 * or written, and the two things a client may derive from it: where a file's fetched bytes are
 * kept, and a download cut down to the files still missing. What the pull writes is decided by
 * the service (lib/views/plan.ts); the client checks only that the plan is one it can carry out
 * without leaving the directory or overwriting its own bookkeeping.
 */

/** The client's own files under the directory: the provenance, `.das/` and partial transfers. */
export const PROVENANCE_FILE = "das-provenance.json";
export const OWN_DIR = ".das";
/** Where a file written transformed keeps its bytes as fetched (verified against the plan, and again on every run). */
export const ORIGINALS_DIR = `${OWN_DIR}/original`;
const PARTIAL_SUFFIX = ".das-partial";

/** Where the bytes as fetched of a planned file are kept, relative to the directory. */
export const fetchedPlace = (file: Pick<PlannedFile, "path" | "transform">) =>
  file.transform ? `${ORIGINALS_DIR}/${file.path}` : file.path;

/** The other place an earlier run may have kept the same bytes (the plan then said otherwise about a transform). */
export const otherPlace = (file: Pick<PlannedFile, "path" | "transform">) =>
  file.transform ? file.path : `${ORIGINALS_DIR}/${file.path}`;

/** The largest body a narrowed download may have (the API's is 1 MB). */
const MAX_BODY_CHARS = 900_000;

/**
 * Refuses a plan the client cannot carry out as it is: one for another version, a path that
 * would leave `dir` (or holds unsafe characters) or land on the client's own files, a path given
 * twice or under another file, a download it does not list, a URL that is not HTTP(S), a download
 * body for another dataset. Nothing has been fetched or written when it throws.
 */
export function checkPlan(plan: PlanDocument, dir: string, asked: { datasetId: string; version: string }): void {
  const refuse = (why: string) =>
    new TransportError(`The service's plan for ${asked.datasetId}@${asked.version} ${why}: nothing was fetched.`);
  if (plan.dataset_id !== asked.datasetId || plan.version !== asked.version)
    throw refuse(`is for ${showUnsafe(`${plan.dataset_id}@${plan.version}`)}`);
  for (const body of plan.downloads)
    if (body.dataset_id !== asked.datasetId || body.version !== asked.version)
      throw refuse(`lists a download of ${showUnsafe(`${body.dataset_id}@${body.version}`)}`);
  const paths = new Set<string>();
  for (const file of plan.files) {
    const shown = showUnsafe(JSON.stringify(file.path));
    try {
      joinSafely(dir, file.path);
    } catch (error) {
      throw refuse(`names an unsafe path: ${(error as Error).message}`);
    }
    if (file.path === PROVENANCE_FILE || file.path.startsWith(`${OWN_DIR}/`) || file.path.endsWith(PARTIAL_SUFFIX))
      throw refuse(`names ${shown}, which is where das keeps its own records`);
    if (paths.has(file.path)) throw refuse(`names ${shown} twice`);
    paths.add(file.path);
    if ("download" in file.get && file.get.download >= plan.downloads.length)
      throw refuse(`fetches ${shown} with download ${file.get.download}, which it does not list`);
    if ("url" in file.get && !/^https?:$/.test(new URL(file.get.url).protocol))
      throw refuse(`fetches ${shown} from a URL that is not HTTP(S)`);
  }
  // A path that is a directory of another cannot be written beside it.
  for (const file of plan.files) {
    const segments = file.path.split("/");
    for (let n = 1; n < segments.length; n++) {
      const parent = segments.slice(0, n).join("/");
      if (paths.has(parent)) throw refuse(`names both ${showUnsafe(JSON.stringify(parent))} and a file under it`);
    }
  }
}

/**
 * The download `body` for only `files` of it (the rest are on disk): its episodes set to those
 * the plan requests these files with (`get.episode_id`), in place of a filter or of the whole
 * version, in as many bodies as the API's body size takes. A request naming an episode resolves
 * to every file of the scope that holds it, so each body stays within what the plan's did.
 */
export function narrowed(body: DownloadBody, files: PlannedFile[], whole: boolean): DownloadBody[] {
  if (whole) return [body];
  const ids = [...new Set(files.flatMap((f) => ("download" in f.get && f.get.episode_id ? [f.get.episode_id] : [])))];
  if (!ids.length) return [body];
  const { filter: _, episode_ids: __, ...scope } = body;
  const bodies: DownloadBody[] = [];
  let batch: string[] = [];
  let chars = 0;
  for (const id of ids) {
    if (batch.length && chars + id.length + 3 > MAX_BODY_CHARS) {
      bodies.push({ ...scope, episode_ids: batch });
      batch = [];
      chars = 0;
    }
    batch.push(id);
    chars += id.length + 3;
  }
  bodies.push({ ...scope, episode_ids: batch });
  return bodies;
}
