/**
 * An episode record of either version (a line of meta/episodes.jsonl in v2, a row of
 * meta/episodes/*\/*.parquet in v3): the fields the reader uses, and the files it names.
 */
import { z } from "zod";
import { chunksSizeOf, formatPathTemplate, type Info, isV3, videoKeysOf, videoTemplateOf } from "./format";

export const count = (what: string) =>
  z
    .number(`${what} must be a number`)
    .int(`${what} must be a whole number`)
    .min(0, `${what} must be at least 0`)
    .max(Number.MAX_SAFE_INTEGER);

export const EpisodeRecord = z.looseObject({
  episode_index: count("episode_index"),
  tasks: z.array(z.string("tasks must be strings"), "tasks must be an array of strings"),
  length: count("length"),
});

export type EpisodeRecordValue = z.infer<typeof EpisodeRecord>;

/** A valid episode record with the metadata file and line (parquet: row) it was read from. */
export type Located = { record: EpisodeRecordValue; file: string; line: number };

/**
 * The owner's fields an episode record may carry beside LeRobot's own, the importer's `extra`.
 * Nothing else of a record is read: an unused column of meta/episodes can be anything (a GZIP
 * column of 200 MB strings in a file of 791 KB), and decoding it would cost that much memory.
 */
export const OWNER_FIELDS = ["outcome", "environment", "contributor", "has_recovery"] as const;

/** An episode's place in a file: v3 files hold several episodes back to back. */
export type EpisodeRange = {
  episode_index: number;
  /** Video files (v3): the episode's seconds in the file. */
  from_timestamp?: number;
  to_timestamp?: number;
  /** Data files (v3): the episode's frames, as global frame indices (the `index` column). */
  dataset_from_index?: number;
  dataset_to_index?: number;
};

/** Episode files named by one record: [path, stream, range]. */
export function namedFiles(info: Info, record: EpisodeRecordValue): [string, string, EpisodeRange][] {
  const episode = record.episode_index;
  const videoTemplate = videoTemplateOf(info);
  const videoKeys = videoTemplate ? videoKeysOf(info) : [];
  if (!isV3(info.codebase_version)) {
    const values = { episode_chunk: Math.floor(episode / chunksSizeOf(info)), episode_index: episode };
    return [
      [formatPathTemplate(info.data_path, values), "data", { episode_index: episode }],
      ...videoKeys.map((key): [string, string, EpisodeRange] => [
        formatPathTemplate(videoTemplate!, { ...values, video_key: key }),
        key,
        { episode_index: episode },
      ]),
    ];
  }
  const r = record as Record<string, unknown> as Record<string, number>;
  return [
    [
      formatPathTemplate(info.data_path, {
        chunk_index: r["data/chunk_index"]!,
        file_index: r["data/file_index"]!,
      }),
      "data",
      { episode_index: episode, dataset_from_index: r.dataset_from_index!, dataset_to_index: r.dataset_to_index! },
    ],
    ...videoKeys.map((key): [string, string, EpisodeRange] => [
      formatPathTemplate(videoTemplate!, {
        video_key: key,
        chunk_index: r[`videos/${key}/chunk_index`]!,
        file_index: r[`videos/${key}/file_index`]!,
      }),
      key,
      {
        episode_index: episode,
        from_timestamp: r[`videos/${key}/from_timestamp`]!,
        to_timestamp: r[`videos/${key}/to_timestamp`]!,
      },
    ]),
  ];
}
