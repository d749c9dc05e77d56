import type { ErrorCode } from "../errors";
import type { DownloadBody, PreviewBody } from "./requests";
import type {
  AnnotationPageBody,
  DatasetListBody,
  DownloadBodyResponse,
  EpisodePageBody,
  LicenceListBody,
  ManifestBody,
  PreviewBodyResponse,
  VersionListBody,
} from "./responses";

/**
 * Example bodies for the OpenAPI document and the reference page. They are typed by the response
 * schemas, and the contract tests validate each one against the schema it illustrates.
 */

const REQUEST_ID = "req_7QdRk2mZpL1xYbN4";
const SHA = (c: string) => c.repeat(64);

const datasets: DatasetListBody = {
  datasets: [
    {
      dataset_id: "kitchen-pick-place",
      title: "Kitchen pick and place",
      description: "Single-arm pick-and-place episodes recorded in two kitchens and a lab.",
      licensed_versions: ["1.1.0", "1.0.0"],
      latest_licensed_version: "1.1.0",
      updated_at: "2026-03-01T09:00:00.000Z",
    },
  ],
  next_cursor: null,
};

const licences: LicenceListBody = {
  licences: [
    {
      dataset_id: "kitchen-pick-place",
      version: "1.1.0",
      starts_at: "2026-01-01T00:00:00.000Z",
      ends_at: "2026-12-31T00:00:00.000Z",
      terms: { title: "Kitchen data-use agreement 2026", sha256: SHA("3") },
    },
    {
      dataset_id: "kitchen-pick-place",
      version: "1.0.0",
      starts_at: "2025-06-01T09:00:00.000Z",
      ends_at: null,
      terms: null,
    },
  ],
  next_cursor: null,
};

const versions: VersionListBody = {
  dataset_id: "kitchen-pick-place",
  versions: [
    {
      version: "1.1.0",
      licensed: true,
      released_at: "2026-03-01T09:00:00.000Z",
      episode_count: 1200,
      changelog: [
        { type: "added", description: "120 episodes recorded in the second kitchen." },
        { type: "fixed", description: "Wrist camera timestamps were 40 ms late." },
      ],
    },
    {
      version: "1.0.0",
      licensed: true,
      released_at: "2026-01-15T09:00:00.000Z",
      episode_count: 1080,
      changelog: [],
      format: {
        source: "lerobot",
        codebase_version: "v3.0",
        robot_type: "so100",
        fps: 30,
        total_frames: 648000,
        cameras: [
          { key: "observation.images.front", storage: "video", codec: "av1", height: 480, width: 640, fps: 30 },
        ],
      },
    },
  ],
  next_cursor: null,
};

const manifest: ManifestBody = {
  dataset_id: "kitchen-pick-place",
  version: "1.1.0",
  released_at: "2026-03-01T09:00:00.000Z",
  episode_count: 1200,
  total_bytes: 49263905,
  streams: ["cam_front", "joints"],
  files: [
    {
      path: "README.md",
      episode_id: null,
      episode_ids: [],
      stream: null,
      size_bytes: 2048,
      sha256: SHA("e"),
      media_type: "text/markdown",
    },
    {
      path: "episodes/kpp-000042/cam_front.mp4",
      episode_id: "kpp-000042",
      episode_ids: ["kpp-000042"],
      stream: "cam_front",
      size_bytes: 48213377,
      sha256: SHA("a"),
      media_type: "video/mp4",
    },
    {
      path: "episodes/kpp-000042/joints.parquet",
      episode_id: "kpp-000042",
      episode_ids: ["kpp-000042"],
      stream: "joints",
      size_bytes: 1048480,
      sha256: SHA("b"),
      media_type: "application/vnd.apache.parquet",
    },
  ],
};

const episodes: EpisodePageBody = {
  dataset_id: "kitchen-pick-place",
  version: "1.1.0",
  total: 214,
  episodes: [
    {
      episode_id: "kpp-000042",
      task: "pick mug",
      environment: "kitchen-a",
      duration_s: 18.4,
      outcome: "failure",
      has_recovery: true,
      contributor: "op-07",
      streams: ["cam_front", "joints"],
    },
  ],
  next_cursor: "eyJrIjpbImtwcC0wMDAwNDIiXSwicSI6IjhzZTNfNjE2ZTVnODM3QjkifQ.dlODrHectr082HS7yBCEdA",
};

const annotations: AnnotationPageBody = {
  episode_id: "kpp-000042",
  dataset_id: "kitchen-pick-place",
  version: "1.1.0",
  annotations: [
    { annotation_id: "ann_1041", label: "reach", start_s: 0, end_s: 4.2, attributes: {} },
    { annotation_id: "ann_1042", label: "grasp", start_s: 4.2, end_s: 7.9, attributes: { grip: "handle" } },
  ],
  next_cursor: null,
};

const url = (path: string) =>
  `https://store.example.com/das/kitchen-pick-place/1.1.0/${path}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20260301%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20260301T090000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=${"0".repeat(64)}`;

const download: DownloadBodyResponse = {
  download_id: "dl_01a1fd70f23b4fQ8zT1bC9xY2w",
  dataset_id: "kitchen-pick-place",
  version: "1.1.0",
  expires_at: "2026-03-01T09:15:00.000Z",
  file_count: 2,
  total_bytes: 49261857,
  files: manifest.files.slice(1).map(({ media_type: _, ...file }) => ({ ...file, url: url(file.path) })),
  co_delivered_episode_ids: [],
};

const downloadRequests: Record<string, { summary: string; value: DownloadBody }> = {
  filter: {
    summary: "Failed episodes, front camera only",
    value: {
      dataset_id: "kitchen-pick-place",
      version: "1.1.0",
      filter: { outcome: "failure" },
      streams: ["cam_front"],
    },
  },
  episodes: {
    summary: "Chosen episodes",
    value: { dataset_id: "kitchen-pick-place", version: "1.1.0", episode_ids: ["kpp-000042", "kpp-000043"] },
  },
  version: { summary: "The whole version", value: { dataset_id: "kitchen-pick-place", version: "1.1.0" } },
};

const preview: PreviewBodyResponse = {
  preview_id: "pv_01a1fd70f23b2hJ9kQ4mN7pR1s",
  episode_id: "kpp-000042",
  dataset_id: "kitchen-pick-place",
  version: "1.1.0",
  expires_at: "2026-03-01T09:15:00.000Z",
  streams: [
    {
      stream: "cam_front",
      url: url("episodes/kpp-000042/cam_front.mp4"),
      media_type: "video/mp4",
      start_s: 0,
      end_s: 18.4,
    },
  ],
};

const previewRequests: Record<string, { summary: string; value: PreviewBody }> = {
  newest: { summary: "Every video stream, in the newest licensed version", value: { episode_id: "kpp-000042" } },
  pinned: {
    summary: "One stream, in a pinned version",
    value: { episode_id: "kpp-000042", version: "1.1.0", streams: ["cam_front"] },
  },
};

const notices = {
  notices: [
    {
      notice_id: "nt_0f3a5c2e9b7d4a1c8e6f2b0d9c7a5e3f",
      kind: "withdrawal" as const,
      created_at: "2026-11-28T22:00:00.000Z",
      withdrawal_id: "wd_4fQh2ZkT9mX3bN7rL1pW8c",
      episode_ids: ["kpp-000042"],
      deliveries: [
        {
          download_id: "dl_019a5c3e2f10Qm8ZbX4kT2",
          seq: 1842,
          occurred_at: "2026-03-01T09:00:00.000Z",
          channel: "api" as const,
          dataset_id: "kitchen-pick-place",
          version: "1.1.0",
          episode_ids: ["kpp-000042"],
        },
      ],
      acknowledged_at: null,
      reminders: 1,
      last_reminded_at: "2026-12-05T22:07:00.000Z",
    },
    {
      notice_id: "nt_7a1c3e5f9b2d4c6e8a0b1d3f5e7c9a2b",
      kind: "licence_ending" as const,
      created_at: "2026-11-24T10:07:00.000Z",
      dataset_id: "kitchen-pick-place",
      version: "1.0.0",
      ends_at: "2026-12-01T00:00:00.000Z",
      days_before: 7 as const,
      acknowledged_at: null,
    },
    {
      notice_id: "nt_2c4e6a8b0d1f3a5c7e9b2d4f6a8c0e1b",
      kind: "new_version" as const,
      created_at: "2026-11-20T14:12:09.000Z",
      dataset_id: "kitchen-pick-place",
      version: "1.1.0",
      released_at: "2026-11-20T00:00:00.000Z",
      licensed_versions: ["1.0.0"],
      acknowledged_at: null,
    },
  ],
  next_cursor: null,
};

const acknowledgement = {
  acknowledgement_id: "ack_7Hk2mQ9xR4tB1nZ8cL3pW6",
  notice_id: "nt_0f3a5c2e9b7d4a1c8e6f2b0d9c7a5e3f",
  acknowledged_at: "2026-11-29T08:30:00.000Z",
  statement: "Deleted the withdrawn episodes' files from our training store and every copy we know of.",
  deleted_paths: ["kpp-000042/cam_front.mp4"],
  hash: "5d1e3b7a9c2f4e6d8b0a1c3e5f7a9b2d4c6e8f0a1b3c5d7e9f2a4b6c8d0e1f3a",
};

const acknowledgementRequests = {
  deleted: {
    summary: "What was deleted",
    value: { statement: acknowledgement.statement, deleted_paths: acknowledgement.deleted_paths },
  },
};

const MESSAGES: Record<ErrorCode, string> = {
  invalid_parameter: "Unknown query parameter 'outcomes'. Known parameters: outcome, environment, limit, cursor.",
  invalid_cursor: "The cursor does not fit this query. Start again without a cursor.",
  invalid_body: "These episode_ids are not in kitchen-pick-place@1.1.0: kpp-999999.",
  unauthorized: "The API key is missing. Send it as `Authorization: Bearer <key>`.",
  version_not_licensed:
    "Version 1.1.0 of dataset 'kitchen-pick-place' is not licensed to you. Ask your administrator for a licence to it.",
  https_required:
    "This API is served over HTTPS only. Repeat the request with https:// and consider rotating the key you sent.",
  forbidden: "Downloads are made by members of a licensed organisation.",
  not_found: "No such dataset is available to you.",
  episode_withdrawn:
    "Episode 'kpp-000042' was withdrawn on 2026-11-28T22:00:00.000Z and is no longer available in any version.",
  withdrawn_content:
    "2 files of this request also hold withdrawn episodes and are not delivered: data/chunk-000/file-000.parquet, videos/cam_front/chunk-000/file-000.mp4 (withdrawn: kpp-000042). Leave those episodes' files out (episode_ids or filter) to download the rest.",
  method_not_allowed: "DELETE is not supported here. Allowed: GET.",
  not_acceptable: "This API responds with application/json only; send `Accept: application/json`.",
  idempotency_conflict: "This Idempotency-Key was used with a different request body. Use a new key for a new request.",
  acknowledgement_limit:
    "Notice nt_0f3a5c2e9b7d4a1c8e6f2b0d9c7a5e3f has 10 acknowledgements already, the most a notice takes; they are all kept.",
  body_too_large: "The body is larger than 1000000 bytes; split the request.",
  scope_too_large:
    "This scope covers 12000 files; a download holds at most 10000. Split it into several requests by episode_ids, filter or streams.",
  rate_limited: "Too many requests for this key: the limit is 600 per minute. Retry after 17 s.",
  internal_error: "Something went wrong on our side. Quote the request id when reporting it.",
  unavailable: "The service is temporarily unavailable. Retry after the number of seconds in Retry-After.",
};

const errors = Object.fromEntries(
  Object.entries(MESSAGES).map(([code, message]) => [code, { error: { code, message, request_id: REQUEST_ID } }]),
) as Record<ErrorCode, { error: { code: ErrorCode; message: string; request_id: string } }>;

// The Hub protocol's answers (lib/api/hub.ts): a LeRobot v3.0 dataset at main.
const HUB_SHA = "3f1c0a9e2b7d4c6a8e0f1b3d5c7e9a2b4d6f8a0c";
const hubRepoInfo = {
  _id: HUB_SHA.slice(0, 24),
  id: "das/kitchen-pick-place",
  author: "das" as const,
  sha: HUB_SHA,
  lastModified: "2026-03-01T09:00:00.000Z",
  createdAt: "2026-03-01T09:00:00.000Z",
  private: true as const,
  gated: false as const,
  disabled: false as const,
  downloads: 0 as const,
  likes: 0 as const,
  tags: ["LeRobot", "codebase:v3.0"],
  usedStorage: 1_234_567,
  cardData: { license: "other", task_categories: ["robotics"], tags: ["LeRobot"] },
  siblings: [
    { rfilename: "README.md" },
    { rfilename: "data/chunk-000/file-000.parquet" },
    { rfilename: "meta/info.json" },
  ],
};
const hubRefs = {
  branches: [{ name: "main", ref: "refs/heads/main", targetCommit: HUB_SHA }],
  tags: [
    { name: "1.1.0", ref: "refs/tags/1.1.0", targetCommit: HUB_SHA },
    { name: "v3.0", ref: "refs/tags/v3.0", targetCommit: HUB_SHA },
  ],
  converts: [] as never[],
};
const hubTree = [
  { type: "directory" as const, oid: "5d1e3c7a9b0f2e4d6c8a0b1f3e5d7c9a2b4f6e8d", size: 0 as const, path: "data" },
  {
    type: "file" as const,
    oid: "8c2b4e6f0a1d3c5e7b9f2a4c6e8d0b1f3a5c7e9d",
    size: 2051,
    path: "README.md",
    lfs: { oid: SHA("a"), size: 2051, pointerSize: 132 },
  },
];

const planRequests = {
  subset: { summary: "Failures, renumbered for LeRobot", value: { filter: { outcome: "failure" } } },
  episodes: {
    summary: "Two episodes, their data and one camera",
    value: { episode_ids: ["kpp-000001", "kpp-000004"], streams: ["data", "observation.images.front"] },
  },
};
const plan = {
  dataset_id: "kitchen-pick-place",
  version: "1.1.0",
  revision: HUB_SHA,
  codebase_version: "v3.0",
  episode_ids: ["kitchen-pick-place-000000", "kitchen-pick-place-000001"],
  downloads: [{ dataset_id: "kitchen-pick-place", version: "1.1.0", filter: { outcome: "failure" } }],
  files: [
    {
      path: "data/chunk-000/file-000.parquet",
      size_bytes: 52341,
      sha256: SHA("b"),
      episode_ids: ["kitchen-pick-place-000000", "kitchen-pick-place-000001"],
      stream: "data",
      get: { download: 0, episode_id: "kitchen-pick-place-000001" },
      transform: {
        kind: "lerobot_v3_data_rows" as const,
        changed_columns: ["episode_index", "index"],
        episodes: [{ episode_index: 1, new_episode_index: 0, index_from: 20, new_index_from: 0, length: 25 }],
        dropped_episode_indices: [0],
      },
    },
    {
      path: "meta/info.json",
      size_bytes: 2210,
      sha256: SHA("c"),
      episode_ids: [],
      stream: null,
      get: { url: "https://store.example/bucket/_rendered/cccc?X-Amz-Signature=..." },
      transform: null,
    },
  ],
  unplannable: [],
  expires_at: "2026-03-01T09:15:00.000Z",
  lerobot: {
    codebase_version: "v3.0",
    episode_indices: [1],
    requested: ["kitchen-pick-place-000001"],
    co_delivered: ["kitchen-pick-place-000000"],
    left_out: ["kitchen-pick-place-000000"],
    meta: "rewritten" as const,
    cameras: null,
    renumbering: [{ episode_id: "kitchen-pick-place-000001", original_episode_index: 1, episode_index: 0 }],
    missing_files: [],
    loads_as_is: true,
    loads_with_episode_list: true,
    open_with_episodes: null,
    note: "Episodes renumbered 0..0 for LeRobot (episode_index and index in the data files, the episode rows in meta/episodes).",
  },
};

export const EXAMPLES = {
  planRequests,
  plan,
  hubRepoInfo,
  hubRefs,
  hubTree,
  datasets,
  licences,
  versions,
  manifest,
  episodes,
  annotations,
  download,
  downloadRequests,
  preview,
  previewRequests,
  notices,
  acknowledgement,
  acknowledgementRequests,
  errors,
};
