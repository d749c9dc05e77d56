import { z } from "zod";
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from "../errors";
import { CHANGELOG_TYPES } from "../db/schema/catalog";
import { DATASET_ID_PATTERN, EPISODE_ID_PATTERN } from "../catalog/identifiers";
import { VERSION_PATTERN } from "../catalog/semver";
import { CURSOR_MAX_LENGTH, CURSOR_PATTERN } from "../cursor";
import type { listDatasets } from "../catalog/list-datasets";
import type { listVersions } from "../catalog/list-versions";
import type { ManifestHead, FileRecord } from "../catalog/get-manifest";
import type { listEpisodes } from "../catalog/list-episodes";
import type { listAnnotations } from "../catalog/list-annotations";
import type { listLicences } from "../catalog/list-licences";
import type { Download as DownloadDocument } from "../downloads/download";
import type { Preview as PreviewDocument } from "../previews/create-preview";
import type { listNotices } from "../notices/list-notices";
import type { acknowledgeNotice } from "../notices/acknowledge";
import type { Plan as PlanDocument } from "../views/plan";

/**
 * Response bodies of every endpoint, as zod schemas. The OpenAPI document is generated from
 * these (lib/api/openapi.ts), the contract tests validate every response the suites produce
 * against that document, the `das` client parses what it receives with them, and the type
 * checks at the end of this file fail the build if a verb's return type and its schema part.
 */

export const DatasetId = z
  .string()
  .regex(DATASET_ID_PATTERN)
  .meta({ id: "DatasetId", description: "Identifier of a dataset.", example: "kitchen-pick-place" });
export const VersionNumber = z
  .string()
  .regex(VERSION_PATTERN)
  .meta({ id: "Version", description: "A dataset version: three dot-separated numbers.", example: "1.1.0" });
export const EpisodeId = z.string().regex(EPISODE_ID_PATTERN).meta({
  id: "EpisodeId",
  description: "Identifier of an episode, unique across datasets and stable across versions.",
  example: "kpp-000042",
});
const Timestamp = z.iso
  .datetime()
  .meta({ description: "ISO 8601 date-time in UTC.", example: "2026-03-01T09:00:00.000Z" });
const Sha256 = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .meta({
    description: "SHA-256 of the file's content, lower-case hex.",
    example: "9f2c4a1e0b7d3f5a6c8e2d4b1a3f5c7e9d0b2a4c6e8f1a3b5d7c9e0f2a4b6c8d",
  });
const Bytes = z.number().int().nonnegative();
const NextCursor = z.string().regex(CURSOR_PATTERN).max(CURSOR_MAX_LENGTH).nullable().meta({
  description: "Pass as `cursor` to get the next page; `null` on the last page.",
  example: "eyJrIjpbImtwcC0wMDAwNDIiXSwicSI6IjhzZTNfNjE2ZTVnODM3QjkifQ.dlODrHectr082HS7yBCEdA",
});

export const DatasetRecord = z
  .object({
    dataset_id: DatasetId,
    title: z.string(),
    description: z.string(),
    licensed_versions: z
      .array(VersionNumber)
      .meta({ description: "The versions the key holds a licence for, newest first." }),
    latest_licensed_version: VersionNumber,
    updated_at: Timestamp,
  })
  .meta({ id: "Dataset" });

export const DatasetList = z
  .object({ datasets: z.array(DatasetRecord), next_cursor: NextCursor })
  .meta({ id: "DatasetList" });

export const ChangelogEntry = z
  .object({ type: z.enum(CHANGELOG_TYPES), description: z.string() })
  .meta({ id: "ChangelogEntry" });

export const Camera = z
  .object({
    key: z.string().meta({ description: "The camera's feature key.", example: "observation.images.front" }),
    storage: z
      .enum(["video", "image"])
      .meta({ description: "`video`: files of its own; `image`: frames inside the data files." }),
    codec: z.string().nullable().meta({ example: "av1" }),
    height: z.number().int().nullable().meta({ example: 480 }),
    width: z.number().int().nullable().meta({ example: 640 }),
    fps: z.number().nullable().meta({ example: 30 }),
  })
  .meta({ id: "Camera" });

export const VersionFormat = z
  .object({
    source: z.literal("lerobot").meta({ description: "The version was imported from a LeRobot dataset." }),
    codebase_version: z.string().meta({ description: "LeRobot's format version of the dataset.", example: "v3.0" }),
    robot_type: z.string().nullable().meta({ example: "so100" }),
    fps: z.number().positive().meta({ example: 30 }),
    total_frames: z.number().int().nonnegative(),
    cameras: z.array(Camera),
  })
  .meta({
    id: "VersionFormat",
    description:
      "Present for a version imported from a LeRobot dataset: its robot, frame rate and cameras. `das pull` writes such a version as a LeRobot dataset.",
  });

export const VersionRecord = z
  .object({
    version: VersionNumber,
    licensed: z.boolean().meta({ description: "Whether the key holds a licence for this version." }),
    released_at: Timestamp,
    episode_count: z.number().int().nonnegative(),
    changelog: z.array(ChangelogEntry),
    format: VersionFormat.optional(),
  })
  .meta({ id: "VersionRecord" });

export const VersionList = z
  .object({
    dataset_id: DatasetId,
    versions: z.array(VersionRecord).meta({ description: "Released versions, newest first." }),
    next_cursor: NextCursor,
  })
  .meta({ id: "VersionList" });

export const ManifestFile = z
  .object({
    path: z
      .string()
      .meta({ description: "Path of the file within the version.", example: "episodes/kpp-000042/cam_front.mp4" }),
    episode_id: EpisodeId.nullable().meta({
      description:
        "The episode the file belongs to when it holds exactly one; `null` for files of the whole version and files shared by several episodes.",
    }),
    episode_ids: z.array(EpisodeId).meta({
      description:
        "Every episode the file holds, in byte order: one for a file of its own, several for a file shared by episodes (a LeRobot v3.0 video), `[]` for files of the whole version.",
      example: ["kpp-000042"],
    }),
    stream: z
      .string()
      .nullable()
      .meta({ description: "The stream the file records; `null` when it records none.", example: "cam_front" }),
    size_bytes: Bytes,
    sha256: Sha256,
    media_type: z.string().meta({ example: "video/mp4" }),
  })
  .meta({ id: "ManifestFile" });

export const ManifestHeadSchema = z.object({
  dataset_id: DatasetId,
  version: VersionNumber,
  released_at: Timestamp,
  episode_count: z.number().int().nonnegative(),
  total_bytes: Bytes,
  streams: z.array(z.string()).meta({ description: "Every stream name recorded in the version, sorted." }),
  format: VersionFormat.optional(),
});

export const Manifest = ManifestHeadSchema.extend({
  files: z.array(ManifestFile).meta({ description: "Every file of the version, by path." }),
}).meta({ id: "Manifest" });

export const Episode = z
  .object({
    episode_id: EpisodeId,
    task: z.string().meta({ example: "pick mug" }),
    environment: z.string().meta({ example: "kitchen-a" }),
    duration_s: z.number().nonnegative().meta({ example: 18.4 }),
    outcome: z.string().meta({ example: "failure" }),
    has_recovery: z.boolean(),
    contributor: z.string().meta({ example: "op-07" }),
    streams: z.array(z.string()).meta({ example: ["cam_front", "joints"] }),
  })
  .meta({ id: "Episode" });

export const EpisodePage = z
  .object({
    dataset_id: DatasetId,
    version: VersionNumber,
    total: z.number().int().nonnegative().meta({ description: "Episodes matching the filters, over all pages." }),
    episodes: z.array(Episode).meta({ description: "This page, in episode_id byte order." }),
    next_cursor: NextCursor,
  })
  .meta({ id: "EpisodePage" });

export const Annotation = z
  .object({
    annotation_id: z
      .string()
      .regex(/^ann_[0-9]+$/)
      .meta({ example: "ann_1042" }),
    label: z.string().meta({ example: "grasp" }),
    start_s: z.number().nonnegative(),
    end_s: z.number().nonnegative(),
    attributes: z
      .record(z.string(), z.unknown())
      .meta({ description: "Free-form attributes of the span.", example: { grip: "handle" } }),
  })
  .meta({ id: "Annotation" });

export const AnnotationPage = z
  .object({
    episode_id: EpisodeId,
    dataset_id: DatasetId,
    version: VersionNumber.meta({
      description: "The version the spans were read from: the newest licensed one, or the pinned `version`.",
    }),
    annotations: z.array(Annotation).meta({ description: "Subtask spans, by start_s." }),
    next_cursor: NextCursor,
  })
  .meta({ id: "AnnotationPage" });

export const DownloadFile = ManifestFile.omit({ media_type: true })
  .extend({
    url: z
      .url()
      .meta({ description: "Signed GET URL for the file; valid until `expires_at`. Supports HTTP Range requests." }),
  })
  .meta({ id: "DownloadFile" });

export const Download = z
  .object({
    download_id: z
      .string()
      .regex(/^dl_[0-9A-Za-z]+$/)
      .meta({
        description: "Identifier of the download, as recorded in the disclosure log.",
        example: "dl_01a1fd70f23b4fQ8zT1bC9xY2w",
      }),
    dataset_id: DatasetId,
    version: VersionNumber,
    expires_at: Timestamp.meta({ description: "When every URL of this download stops working: 900 s after issue." }),
    file_count: z.number().int().nonnegative(),
    total_bytes: Bytes,
    files: z.array(DownloadFile),
    co_delivered_episode_ids: z.array(EpisodeId).meta({
      description:
        "Episodes delivered beyond those asked for (the listed `episode_ids`, or those matching `filter`), because a delivered file also holds them, sorted. Every episode in a delivered file is recorded in the disclosure log.",
      example: [],
    }),
  })
  .meta({ id: "Download" });

const PlannedDownload = z
  .object({
    dataset_id: DatasetId,
    version: VersionNumber,
    episode_ids: z.array(z.string()).optional(),
    filter: z.record(z.string(), z.unknown()).optional(),
    streams: z.array(z.string()).optional(),
    include_version_files: z.boolean().optional(),
  })
  .meta({
    description:
      "A body for POST /api/v1/downloads. Skip it when every file it gets is on disk already; otherwise send it with `episode_ids` (in place of a `filter`) set to the `get.episode_id` of the files still missing.",
  });

const DataTransform = z
  .object({
    kind: z.literal("lerobot_v3_data_rows"),
    changed_columns: z.array(z.string()),
    episodes: z.array(
      z.object({
        episode_index: z.number().int().nonnegative(),
        new_episode_index: z.number().int().nonnegative(),
        index_from: z.number().int().nonnegative(),
        new_index_from: z.number().int().nonnegative(),
        length: z.number().int().nonnegative(),
      }),
    ),
    dropped_episode_indices: z.array(z.number().int().nonnegative()),
  })
  .meta({
    description:
      "Write the fetched data file again: its rows in their order, the frames of `dropped_episode_indices` left out, each other frame's `episode_index` and `index` moved to `new_episode_index` and `new_index_from + (index - index_from)`; every other column, the schema and the key/value metadata as fetched.",
  });

export const PlannedFile = z
  .object({
    path: z.string().meta({ description: "Where the file goes, relative to the directory pulled into." }),
    size_bytes: Bytes,
    sha256: Sha256.meta({ description: "SHA-256 of the bytes fetched (before a transform)." }),
    episode_ids: z.array(z.string()),
    stream: z.string().nullable(),
    get: z
      .union([
        z.object({ download: z.number().int().nonnegative(), episode_id: z.string() }),
        z.object({ url: z.url() }),
      ])
      .meta({
        description:
          "How to get the bytes: `download`: in the answer to `downloads[download]`, under the same path (a disclosure), where `episode_id` is the chosen episode it is requested with; `url`: a signed URL, valid until `expires_at` (a file of no episode).",
      }),
    transform: DataTransform.nullable(),
  })
  .meta({ id: "PlannedFile" });

export const Plan = z
  .object({
    dataset_id: DatasetId,
    version: VersionNumber,
    revision: z
      .string()
      .regex(/^[0-9a-f]{40}$/)
      .meta({ description: "The revision of the version the plan was made from (the Hub protocol's sha of it)." }),
    codebase_version: z.string().nullable(),
    episode_ids: z.array(z.string()).meta({ description: "Every episode of the files in scope, sorted." }),
    downloads: z.array(PlannedDownload),
    files: z.array(PlannedFile),
    unplannable: z.array(z.object({ path: z.string(), reason: z.string() })),
    expires_at: Timestamp.meta({ description: "When the URLs of `files[].get.url` stop working." }),
    lerobot: z
      .object({
        codebase_version: z.string(),
        episode_indices: z.array(z.number().int().nonnegative()),
        requested: z.array(z.string()),
        co_delivered: z.array(z.string()),
        left_out: z.array(z.string()),
        meta: z.enum(["as delivered", "rewritten", "none"]),
        cameras: z.array(z.string()).nullable(),
        renumbering: z
          .array(
            z.object({
              episode_id: z.string(),
              original_episode_index: z.number().int().nonnegative(),
              episode_index: z.number().int().nonnegative(),
            }),
          )
          .nullable(),
        missing_files: z.array(z.string()),
        loads_as_is: z.boolean(),
        loads_with_episode_list: z.boolean(),
        open_with_episodes: z.array(z.number().int().nonnegative()).nullable(),
        note: z.string().nullable(),
      })
      .nullable(),
  })
  .meta({ id: "Plan" });

export const PreviewStream = z
  .object({
    stream: z.string().meta({ example: "wrist_cam" }),
    url: z.url().meta({
      description:
        "Signed GET URL of the file that holds the stream; valid until `expires_at`. Supports HTTP Range requests, as a video element makes them.",
    }),
    media_type: z
      .string()
      .regex(/^(video\/|application\/vnd\.apache\.parquet$)/)
      .meta({
        description:
          "A camera's video (`video/*`), or the episode's data table (`application/vnd.apache.parquet`: LeRobot's `data` stream, frame rows whose `episode_index` is the episode's), which the portal plots under the video.",
        example: "video/mp4",
      }),
    start_s: z.number().nonnegative().meta({
      description:
        "Where the episode starts in the file, in seconds: 0 for a file of its own, later in a file that holds several episodes.",
      example: 0,
    }),
    end_s: z.number().nonnegative().meta({
      description: "Where the episode ends in the file, in seconds. Play from `start_s` to `end_s`.",
      example: 18.4,
    }),
  })
  .meta({ id: "PreviewStream" });

export const Preview = z
  .object({
    preview_id: z
      .string()
      .regex(/^pv_[0-9A-Za-z]+$/)
      .meta({
        description: "Identifier of the preview, as recorded in the disclosure log.",
        example: "pv_01a1fd70f23b2hJ9kQ4mN7pR1s",
      }),
    episode_id: EpisodeId,
    dataset_id: DatasetId,
    version: VersionNumber.meta({
      description: "The version previewed: the newest licensed one that contains the episode, or the pinned `version`.",
    }),
    expires_at: Timestamp.meta({
      description: "When every URL of this preview stops working: 900 s after it was first issued.",
    }),
    streams: z
      .array(PreviewStream)
      .meta({ description: "The episode's video streams asked for, in the episode's order of streams." }),
  })
  .meta({ id: "Preview" });

export const LicenceRecord = z
  .object({
    dataset_id: DatasetId,
    version: VersionNumber,
    starts_at: Timestamp.meta({ description: "When the licence began to be usable." }),
    ends_at: Timestamp.nullable().meta({
      description: "When it stops being usable (excluded); `null` when it has no end.",
    }),
    terms: z.object({ title: z.string(), sha256: Sha256 }).nullable().meta({
      description:
        "The terms document the licence was granted under: its title and the SHA-256 of its exact text; `null` when none was named.",
    }),
  })
  .meta({ id: "Licence" });

export const LicenceList = z
  .object({ licences: z.array(LicenceRecord), next_cursor: NextCursor })
  .meta({ id: "LicenceList" });

export const NoticeDelivery = z
  .object({
    download_id: z.string().meta({
      description:
        "The disclosure-log entry (a download, a preview or a file fetched through the Hub protocol) that carried the episodes.",
    }),
    seq: z.number().int().meta({ description: "The entry's position in the disclosure log." }),
    occurred_at: Timestamp,
    channel: z.enum(["api", "portal", "preview", "hub"]),
    dataset_id: DatasetId,
    version: VersionNumber,
    episode_ids: z.array(z.string()).meta({ description: "The withdrawn episodes this entry carried." }),
  })
  .meta({ id: "NoticeDelivery" });

const noticeCommon = {
  notice_id: z.string(),
  created_at: Timestamp,
  acknowledged_at: Timestamp.nullable().meta({
    description: "When it was first acknowledged; `null` while none was made.",
  }),
};

export const WithdrawalNotice = z
  .object({
    notice_id: noticeCommon.notice_id,
    kind: z.literal("withdrawal"),
    created_at: noticeCommon.created_at,
    withdrawal_id: z.string(),
    episode_ids: z.array(z.string()).meta({
      description: "Your organisation's withdrawn episodes: delete every copy of their files.",
    }),
    deliveries: z
      .array(NoticeDelivery)
      .meta({ description: "Every download or preview that gave them to you, oldest first." }),
    acknowledged_at: Timestamp.nullable().meta({
      description: "When it was first acknowledged; `null` while outstanding.",
    }),
    reminders: z.number().int().meta({
      description: "Reminders sent while it was not acknowledged (every NOTICE_REMINDER_DAYS days, 7 by default).",
    }),
    last_reminded_at: Timestamp.nullable().meta({ description: "When the latest reminder went out; `null` if none." }),
  })
  .meta({
    id: "WithdrawalNotice",
    description:
      "Episodes your organisation received were withdrawn (their contributor withdrew consent): delete them, then acknowledge.",
  });

export const NewVersionNotice = z
  .object({
    notice_id: noticeCommon.notice_id,
    kind: z.literal("new_version"),
    created_at: noticeCommon.created_at,
    dataset_id: DatasetId,
    version: VersionNumber,
    released_at: Timestamp,
    licensed_versions: z.array(VersionNumber).meta({
      description: "The earlier versions your organisation held a current licence for when it was released.",
    }),
    acknowledged_at: noticeCommon.acknowledged_at,
  })
  .meta({
    id: "NewVersionNotice",
    description:
      "A new version of a dataset your organisation holds a licence for an earlier version of; it asks for no acknowledgement.",
  });

export const LicenceEndingNotice = z
  .object({
    notice_id: noticeCommon.notice_id,
    kind: z.literal("licence_ending"),
    created_at: noticeCommon.created_at,
    dataset_id: DatasetId,
    version: VersionNumber,
    ends_at: Timestamp.meta({ description: "When the licence stops being usable." }),
    days_before: z.union([z.literal(30), z.literal(7)]).meta({
      description: "Which warning: 30 or 7 days before the end (a licence whose end moves is warned of its new end).",
    }),
    acknowledged_at: noticeCommon.acknowledged_at,
  })
  .meta({
    id: "LicenceEndingNotice",
    description: "Your organisation's licence ends within 30 (or 7) days; it asks for no acknowledgement.",
  });

export const NoticeRecord = z
  .discriminatedUnion("kind", [WithdrawalNotice, NewVersionNotice, LicenceEndingNotice])
  .meta({ id: "Notice" });

export const NoticeList = z
  .object({ notices: z.array(NoticeRecord), next_cursor: NextCursor })
  .meta({ id: "NoticeList" });

export const Acknowledgement = z
  .object({
    acknowledgement_id: z.string(),
    notice_id: z.string(),
    acknowledged_at: Timestamp,
    statement: z.string(),
    deleted_paths: z.array(z.string()),
    hash: z.string().meta({ description: "Its place in the acknowledgements' hash chain." }),
  })
  .meta({ id: "Acknowledgement" });

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

export const ErrorCodeSchema = z
  .enum(ERROR_CODES)
  .meta({ id: "ErrorCode", description: "Stable, machine-readable error code." });

/** The one error envelope; `codes` narrows `error.code` to the codes a given response can carry. */
export function errorEnvelope(codes?: readonly ErrorCode[]) {
  return z.object({
    error: z.object({
      code: codes ? z.enum(codes as [ErrorCode, ...ErrorCode[]]) : ErrorCodeSchema,
      message: z.string().min(1).meta({ description: "Human-readable explanation, safe to show." }),
      request_id: z
        .string()
        .regex(/^req_[0-9A-Za-z]+$/)
        .meta({
          description: "Same as the X-Request-Id header; quote it when reporting a problem.",
          example: "req_7QdRk2mZpL1xYbN4",
        }),
    }),
  });
}

export const ErrorEnvelope = errorEnvelope().meta({ id: "Error" });

// ---- The verbs return exactly these shapes (checked by the compiler, never at run time).

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Body<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

const drift: {
  datasets: Same<z.output<typeof DatasetList>, Body<typeof listDatasets>>;
  versions: Same<z.output<typeof VersionList>, Body<typeof listVersions>>;
  manifest: Same<z.output<typeof Manifest>, ManifestHead & { files: FileRecord[] }>;
  episodes: Same<z.output<typeof EpisodePage>, Body<typeof listEpisodes>>;
  annotations: Same<z.output<typeof AnnotationPage>, Body<typeof listAnnotations>>;
  download: Same<z.output<typeof Download>, DownloadDocument>;
  preview: Same<z.output<typeof Preview>, PreviewDocument>;
  licences: Same<z.output<typeof LicenceList>, Body<typeof listLicences>>;
  notices: Same<z.output<typeof NoticeList>, Body<typeof listNotices>>;
  acknowledgement: Same<z.output<typeof Acknowledgement>, Body<typeof acknowledgeNotice>>;
  error: Same<z.output<typeof ErrorEnvelope>, ErrorBody>;
  plan: Same<z.output<typeof Plan>, PlanDocument>;
} = {
  datasets: true,
  versions: true,
  manifest: true,
  episodes: true,
  annotations: true,
  download: true,
  preview: true,
  licences: true,
  notices: true,
  acknowledgement: true,
  error: true,
  plan: true,
};
void drift;

export type DatasetListBody = z.output<typeof DatasetList>;
export type VersionListBody = z.output<typeof VersionList>;
export type ManifestBody = z.output<typeof Manifest>;
export type EpisodePageBody = z.output<typeof EpisodePage>;
export type AnnotationPageBody = z.output<typeof AnnotationPage>;
export type DownloadBodyResponse = z.output<typeof Download>;
export type PreviewBodyResponse = z.output<typeof Preview>;
export type LicenceListBody = z.output<typeof LicenceList>;
export type ErrorEnvelopeBody = z.output<typeof ErrorEnvelope>;
