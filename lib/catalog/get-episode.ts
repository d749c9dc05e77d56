import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { resolveEpisodeVersion } from "./list-annotations";
import type { EpisodeRecord } from "./list-episodes";

export type EpisodeDetail = {
  dataset_id: string;
  version: string;
  episode: EpisodeRecord;
  /** Every licensed version that contains the episode, newest first. */
  versions: string[];
};

/** One episode's metadata, resolved like its annotations (newest licensed version, or the pinned one). */
export async function getEpisode(ctx: Ctx, input: { episodeId: string; version?: string }): Promise<EpisodeDetail> {
  const { chosen, licensed } = await resolveEpisodeVersion(ctx, input.episodeId, input.version);
  const episode = await episodeRecord(sqlOf(ctx.db), chosen.versionId, input.episodeId);
  return { dataset_id: chosen.datasetId, version: chosen.version, episode, versions: licensed.map((v) => v.version) };
}

/** The metadata of an episode in a version the caller has already been allowed to read. */
export async function episodeRecord(sql: Sql, versionId: number, episodeId: string): Promise<EpisodeRecord> {
  const [episode] = await sql<EpisodeRecord[]>`
    select episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams
    from episodes where version_id = ${versionId} and episode_id = ${episodeId}`;
  return episode!;
}
