import type { Sql } from "../db/client";
import { fileColumns, type FileRecord } from "../catalog/get-manifest";

/** One file of an episode's stream, and where the episode lies in it. */
export type EpisodeFile = Pick<FileRecord, "path" | "media_type" | "size_bytes" | "sha256" | "episode_ids"> & {
  stream: string;
  /** The episode's seconds in the file's own time: 0 and its duration for a file of its own, later in a file of several episodes. */
  start_s: number;
  end_s: number;
};

/**
 * The files that hold an episode's streams in one version, in the order of the episode's streams,
 * with the episode's time range in each and every episode each file holds. `file_episodes` is the
 * one record of which episodes a file holds and where each lies in it (a LeRobot v3.0 video holds
 * several back to back); where an import did not say, the episode is taken to fill its file from
 * 0 (or its recorded start) for its duration.
 */
export async function episodeFiles(sql: Sql, versionId: number, episodeId: string): Promise<EpisodeFile[]> {
  return sql<EpisodeFile[]>`
    select ${fileColumns(sql)},
           coalesce(fe.start_s, 0)::float8 as start_s,
           coalesce(fe.end_s, coalesce(fe.start_s, 0) + e.duration_s)::float8 as end_s
    from file_episodes fe
    join files f on f.version_id = fe.version_id and f.path = fe.path
    join episodes e on e.version_id = fe.version_id and e.episode_id = fe.episode_id
    where fe.version_id = ${versionId} and fe.episode_id = ${episodeId} and f.stream is not null
    order by array_position(e.streams, f.stream::text), f.stream, f.path`;
}

/** Whether a file is video the player can play, of any kind (the browser decides the codec). */
export const isVideoFile = (file: Pick<EpisodeFile, "media_type">) => file.media_type.startsWith("video/");

/**
 * Whether a file is the table of the robot's data the player plots: the `data` stream in parquet,
 * as LeRobot names it (frame rows with the state, the actions and `episode_index`). Other parquet
 * streams of our own import format hold whatever their owner put there, and are listed, not played.
 */
export const isDataTable = (file: Pick<EpisodeFile, "media_type" | "stream">) =>
  file.stream === "data" && file.media_type === "application/vnd.apache.parquet";

/**
 * Whether a preview signs a file: what the player shows, its video and the tables it plots beside
 * it. A preview discloses all of them, so watching an episode and seeing what the robot did are
 * one disclosure, one entry.
 */
export const isPreviewed = (file: Pick<EpisodeFile, "media_type" | "stream">) => isVideoFile(file) || isDataTable(file);

/** The name the preview verb imports this by; what it answers is `isPreviewed`. */
export const isVideo = isPreviewed;
