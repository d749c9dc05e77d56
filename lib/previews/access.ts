import type { Ctx } from "../context";
import { holds, requireReviewer } from "../auth/authorize";
import { sqlOf } from "../db/client";
import type { ReviewerRole } from "../db/schema";
import { AppError, NOT_VISIBLE } from "../errors";
import { EPISODE_ID_PATTERN } from "../catalog/identifiers";
import { resolveEpisodeVersion, type EpisodeVersion } from "../catalog/list-annotations";
import { episodeWithdrawn, withdrawnAt } from "../catalog/withdrawn";

/**
 * On what a preview is allowed, and so what its disclosure entry records:
 * - `licence`: an API key, or a licensee, under their organisation's licence of the version (the
 *   rules of every catalog read: lib/catalog/access.ts);
 * - `review`: a reviewer or admin, who hold no licence but may look at any episode to review what
 *   was disclosed; the entry records them and their role, with no organisation or licence.
 */
export type PreviewBasis =
  | { kind: "licence"; organizationId: string; apiKeyId: string | null; userId: string | null }
  | { kind: "review"; userId: string; role: ReviewerRole };

export function previewBasis(ctx: Ctx): PreviewBasis {
  const p = ctx.principal;
  if (p.kind === "api_key")
    return { kind: "licence", organizationId: p.organizationId, apiKeyId: p.keyId, userId: null };
  if (p.kind === "user" && holds(p, "review"))
    return { kind: "review", userId: p.userId, role: p.role as ReviewerRole };
  if (p.kind === "user" && p.organizationId)
    return { kind: "licence", organizationId: p.organizationId, apiKeyId: null, userId: p.userId };
  // An operator at the command line watches nothing: a preview goes to a person or a key.
  throw new AppError(
    "forbidden",
    "Previews are for members of a licensed organisation, their API keys, reviewers and admins.",
  );
}

export type PreviewVersion = EpisodeVersion & { licenceId: string | null };

/**
 * The version an episode is previewed in: for a licence, exactly as its annotations are read (the
 * newest licensed version containing it, or the pinned one, with the same 404 and 403); for a
 * reviewer, the newest version containing it, or the pinned one.
 */
export async function previewVersion(
  ctx: Ctx,
  basis: PreviewBasis,
  episodeId: string,
  version?: string,
): Promise<PreviewVersion> {
  if (basis.kind === "licence") return (await resolveEpisodeVersion(ctx, episodeId, version)).chosen;
  return (await reviewedEpisodeVersions(ctx, episodeId, version)).chosen;
}

/**
 * Every version that holds an episode and has not had it withdrawn, newest first, and the one
 * chosen (the pinned one, or the newest). For reviewers and admins, who see a withdrawn episode's
 * 410 like a licensee: withdrawn content is played to nobody.
 */
export async function reviewedEpisodeVersions(
  ctx: Ctx,
  episodeId: string,
  version?: string,
): Promise<{ chosen: PreviewVersion; all: PreviewVersion[] }> {
  // Without a licence: only for those who hold the review permission, whoever calls this.
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  const all = EPISODE_ID_PATTERN.test(episodeId)
    ? await sql<PreviewVersion[]>`
        select v.id as "versionId", v.dataset_id as "datasetId", v.version, v.released_at as "releasedAt",
               v.episode_count as "episodeCount", v.fingerprinted, null as "licenceId", null as "termsSha256", null as "heldOutOfTerm",
               exists (select 1 from withdrawn_episodes w where w.version_id = e.version_id and w.episode_id = e.episode_id) as withdrawn
        from episodes e join dataset_versions v on v.id = e.version_id
        where e.episode_id = ${episodeId}
        order by v.major desc, v.minor desc, v.patch desc`
    : [];
  if (!all.length) throw new AppError("not_found", NOT_VISIBLE.episode);
  const present = all.filter((v) => !(v as { withdrawn?: boolean }).withdrawn);
  const pinned = version === undefined ? undefined : all.find((v) => v.version === version);
  if (version !== undefined && !pinned)
    throw new AppError("not_found", `Episode '${episodeId}' is not part of version '${version}'.`);
  const chosen = version === undefined ? present[0] : present.find((v) => v === pinned);
  if (!chosen) throw episodeWithdrawn(episodeId, await withdrawnAt(sql, episodeId));
  return { chosen, all: present.map(({ withdrawn: _, ...v }: PreviewVersion & { withdrawn?: boolean }) => v) };
}
