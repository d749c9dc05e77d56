import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { AppError, NOT_VISIBLE } from "../errors";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";
import { CacheableRead } from "../cache/cacheable";
import { cachedRead } from "../cache/read-cache";
import { assertLicensed, datasetVersionAccess, type VersionAccess } from "./access";
import { EPISODE_ID_PATTERN } from "./identifiers";
import { episodeWithdrawn, withdrawnAt } from "./withdrawn";

export type AnnotationRecord = {
  annotation_id: string;
  label: string;
  start_s: number;
  end_s: number;
  attributes: Record<string, unknown>;
};

export type ListAnnotationsInput = { episodeId: string; version?: string; limit: number; cursor?: string };

export type AnnotationPage = {
  episode_id: string;
  dataset_id: string;
  version: string;
  annotations: AnnotationRecord[];
  next_cursor: string | null;
};

export type EpisodeVersion = VersionAccess & { datasetId: string };

/**
 * The dataset an episode belongs to (episode ids are unique across datasets), the versions that
 * contain it, and those it has been withdrawn from.
 */
function episodeLocation(
  ctx: Ctx,
  episodeId: string,
): Promise<{ datasetId: string; versionIds: number[]; withdrawnFrom: number[] } | undefined> {
  return cachedRead(ctx, "episodes", [episodeId], async () => {
    const rows = await sqlOf(ctx.db)<{ datasetId: string; versionId: number; withdrawn: boolean }[]>`
      select v.dataset_id as "datasetId", v.id as "versionId",
             exists (select 1 from withdrawn_episodes w where w.version_id = e.version_id and w.episode_id = e.episode_id) as withdrawn
      from episodes e join dataset_versions v on v.id = e.version_id
      where e.episode_id = ${episodeId}`;
    return rows.length
      ? {
          datasetId: rows[0]!.datasetId,
          versionIds: rows.map((r) => r.versionId),
          withdrawnFrom: rows.filter((r) => r.withdrawn).map((r) => r.versionId),
        }
      : undefined;
  });
}

/**
 * The version an episode is read in: the newest licensed version that contains it, or the pinned
 * one. An episode in no licensed version is indistinguishable from none (404). A pinned version is
 * judged by the licence before its contents: one the caller may not read is 403 whether or not the
 * episode is in it, so the answer never tells what an unlicensed version holds; a licensed one
 * that lacks the episode is 404. An episode withdrawn from the version that would be read is 410
 * for a caller who may read that version (and 404, as above, for any other). Also returns every
 * licensed version containing it and not withdrawn from it, newest first.
 */
export async function resolveEpisodeVersion(
  ctx: Ctx,
  episodeId: string,
  version?: string,
): Promise<{ chosen: EpisodeVersion & { licenceId: string }; licensed: (EpisodeVersion & { licenceId: string })[] }> {
  const location = EPISODE_ID_PATTERN.test(episodeId) ? await episodeLocation(ctx, episodeId) : undefined;
  // The dataset's versions, newest first; shown below only once one of them holding the episode is licensed.
  const access = location
    ? (await datasetVersionAccess(ctx, location.datasetId)).map((v) => ({ ...v, datasetId: location.datasetId }))
    : [];
  const containing = access.filter(
    (v): v is EpisodeVersion & { licenceId: string } =>
      v.licenceId !== null && location!.versionIds.includes(v.versionId),
  );
  if (!containing.length) throw new AppError("not_found", NOT_VISIBLE.episode);
  const withdrawn = (v: EpisodeVersion) => location!.withdrawnFrom.includes(v.versionId);
  const licensed = containing.filter((v) => !withdrawn(v));
  const gone = async () => episodeWithdrawn(episodeId, await withdrawnAt(sqlOf(ctx.db), episodeId));
  if (version === undefined) {
    if (!licensed.length) throw await gone();
    return { chosen: licensed[0]!, licensed };
  }
  const datasetId = location!.datasetId;
  // The dataset is visible to the caller, and so is its list of versions (with `licensed` flags).
  const pinned = access.find((v) => v.version === version);
  if (!pinned) throw new AppError("not_found", `Dataset '${datasetId}' has no version '${version}'.`);
  assertLicensed(pinned, datasetId);
  const chosen = containing.find((v) => v.version === version);
  if (!chosen) throw new AppError("not_found", `Episode '${episodeId}' is not part of version '${version}'.`);
  if (withdrawn(chosen)) throw await gone();
  return { chosen, licensed };
}

type SpanRow = { id: number; label: string; start_s: number; end_s: number; attributes: Record<string, unknown> };

/**
 * An episode's spans in one version, by start time and, among spans sharing a start, in import
 * order: all of them, or with `page` those after a position, one more than the limit (so the
 * caller knows whether another page follows).
 */
export function spanRows(
  ctx: Ctx,
  versionId: number,
  episodeId: string,
  page?: { after: [number, number] | null; limit: number },
) {
  const sql = sqlOf(ctx.db);
  return sql<SpanRow[]>`
    select id::float8 as id, label, start_s, end_s, attributes from annotations
    where version_id = ${versionId} and episode_id = ${episodeId}
      ${page?.after ? sql`and (start_s, id) > (${page.after[0]}, ${page.after[1]})` : sql``}
    order by start_s, id
    ${page ? sql`limit ${page.limit + 1}` : sql``}`;
}

export const toAnnotation = (a: SpanRow): AnnotationRecord => ({
  annotation_id: `ann_${a.id}`,
  label: a.label,
  start_s: a.start_s,
  end_s: a.end_s,
  attributes: a.attributes,
});

/**
 * The subtask spans of an episode, in the newest version licensed to the caller that contains it,
 * or in the pinned `version`. Without a pin the answer moves when a newer version is licensed.
 */
export async function annotationsPage(ctx: Ctx, input: ListAnnotationsInput): Promise<CacheableRead<AnnotationPage>> {
  const { chosen } = await resolveEpisodeVersion(ctx, input.episodeId, input.version);
  const binding = queryBinding(["annotations", input.episodeId, chosen.versionId]);
  const after = input.cursor ? decodeCursor(input.cursor, binding, ["number", "number"]) : null;
  return new CacheableRead(["annotations", input.episodeId, chosen.versionId, after, input.limit], async () => {
    const rows = await spanRows(ctx, chosen.versionId, input.episodeId, { after, limit: input.limit });
    const page = rows.slice(0, input.limit);
    const last = page.at(-1);
    return {
      episode_id: input.episodeId,
      dataset_id: chosen.datasetId,
      version: chosen.version,
      annotations: page.map(toAnnotation),
      next_cursor: rows.length > input.limit && last ? encodeCursor(binding, [last.start_s, last.id]) : null,
    };
  });
}

export async function listAnnotations(ctx: Ctx, input: ListAnnotationsInput): Promise<AnnotationPage> {
  return (await annotationsPage(ctx, input)).read();
}
