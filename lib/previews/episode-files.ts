import type { Sql } from "../db/client";

/** One file of an episode's stream, and where the episode lies in it. */
export type EpisodeFile = {
  stream: string;
  path: string;
  media_type: string;
  size_bytes: number;
  /** The episode's seconds in the file's own time: 0 and its duration for a file of its own. */
  start_s: number;
  end_s: number;
};

/**
 * The files that hold an episode's streams in one version, in the order of the episode's streams,
 * with the episode's time range in each. The one place that says which files hold an episode and
 * where: today every file holds one episode, from 0 to the episode's duration.
 */
export async function episodeFiles(sql: Sql, versionId: number, episodeId: string): Promise<EpisodeFile[]> {
  return sql<EpisodeFile[]>`
    select f.stream, f.path, f.media_type, f.size_bytes::float8 as size_bytes, 0::float8 as start_s, e.duration_s as end_s
    from files f join episodes e on e.version_id = f.version_id and e.episode_id = f.episode_id
    where f.version_id = ${versionId} and f.episode_id = ${episodeId} and f.stream is not null
    order by array_position(e.streams, f.stream::text), f.stream, f.path`;
}

/** Whether a file is one the player can play: video of any kind (the browser decides the codec). */
export const isVideo = (file: Pick<EpisodeFile, "media_type">) => file.media_type.startsWith("video/");
