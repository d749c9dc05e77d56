/**
 * A dataset's meta/info.json read as the importer reads its own documents (a size limit, invalid
 * UTF-8 refused at its line), its path templates checked, and the facts the catalog keeps of it.
 */
import type { Problem } from "../json-document";
import { readDocument } from "../read-document";
import {
  cameraKeysOf,
  chunksSizeOf,
  type CodebaseVersion,
  type Feature,
  formatPathTemplate,
  INFO_PATH,
  Info,
  isV3,
  TemplateError,
  videoKeysOf,
  videoTemplateOf,
} from "./format";

export type LeRobotCamera = {
  /** The feature key, e.g. `observation.images.wrist`. */
  key: string;
  /** `video`: mp4 files of its own; `image`: embedded in the data parquet files. */
  storage: "video" | "image";
  codec: string | null;
  height: number | null;
  width: number | null;
  fps: number | null;
};

/**
 * `language`: the `language_persistent` / `language_events` frame columns (rows of style "subtask");
 * `subtask_index`: a per-frame index into meta/subtasks.parquet. A dataset declaring both is read
 * through its language columns, the newer of the two conventions.
 */
export type SubtaskSource = "language" | "subtask_index";

export type LeRobotFacts = {
  codebaseVersion: CodebaseVersion;
  robotType: string | null;
  fps: number;
  totalEpisodes: number;
  totalFrames: number;
  totalTasks: number | null;
  chunksSize: number;
  splits: Record<string, string>;
  cameras: LeRobotCamera[];
  features: Record<string, Feature>;
  /** Where subtask spans come from, if the dataset declares any (features in info.json). */
  subtaskSource: SubtaskSource | null;
};

/** info.json is missing, unreadable, invalid or of an unsupported version: nothing else can be read. */
export class LeRobotFormatError extends Error {
  constructor(readonly problems: Problem[]) {
    super(`Not a readable LeRobot dataset:\n${problems.map((p) => `${p.file}:${p.line}: ${p.message}`).join("\n")}`);
    this.name = "LeRobotFormatError";
  }
}

/** info.json and its text (lines joined with LF), or LeRobotFormatError with every problem at its line. */
export async function readInfo(infoPath: string): Promise<{ info: Info; text: string }> {
  const problems: Problem[] = [];
  const { value: info, text } = await readDocument(infoPath, INFO_PATH, Info, {
    add: (...found) => problems.push(...found),
  });
  if (!info || text === undefined) {
    // The version decides everything else, so an unsupported one is reported alone.
    const versionProblem = problems.find((p) => p.message.includes("codebase_version"));
    const version = text !== undefined && /"codebase_version"\s*:\s*("(?:[^"\\]|\\.)*")/.test(text);
    throw new LeRobotFormatError(versionProblem && version ? [versionProblem] : problems);
  }
  const templateProblems = checkTemplates(info, text);
  if (templateProblems.length) throw new LeRobotFormatError(templateProblems);
  return { info, text };
}

/** The line of info.json's text that names `key` first (1 when none does). */
export function infoLine(text: string, key: string): number {
  const at = text.indexOf(`"${key}"`);
  return at < 0 ? 1 : text.slice(0, at).split("\n").length;
}

export function factsOf(info: Info): LeRobotFacts {
  const features = info.features;
  return {
    codebaseVersion: info.codebase_version,
    robotType: info.robot_type ?? null,
    fps: info.fps,
    totalEpisodes: info.total_episodes,
    totalFrames: info.total_frames,
    totalTasks: info.total_tasks ?? null,
    chunksSize: chunksSizeOf(info),
    splits: info.splits ?? {},
    cameras: cameraKeysOf(info).map((key) => camera(key, features[key]!)),
    features,
    subtaskSource:
      "language_persistent" in features || "language_events" in features
        ? "language"
        : "subtask_index" in features
          ? "subtask_index"
          : null,
  };
}

function camera(key: string, feature: Feature): LeRobotCamera {
  const info = { ...(feature.video_info ?? {}), ...(feature.info ?? {}) };
  const numberAt = (name: string): number | null => {
    const v = info[`video.${name}`];
    if (typeof v === "number") return v;
    const names = Array.isArray(feature.names) ? feature.names : null;
    const at = names?.indexOf(name) ?? -1;
    return (name === "height" || name === "width") && at >= 0 && typeof feature.shape?.[at] === "number"
      ? feature.shape[at]
      : null;
  };
  const codec = info["video.codec"];
  return {
    key,
    storage: feature.dtype === "video" ? "video" : "image",
    codec: typeof codec === "string" ? codec : null,
    height: numberAt("height"),
    width: numberAt("width"),
    fps: typeof info["video.fps"] === "number" ? (info["video.fps"] as number) : null,
  };
}

function checkTemplates(info: Info, text: string): Problem[] {
  const problems: Problem[] = [];
  const v3 = isV3(info.codebase_version);
  const sample: Record<string, number> = v3
    ? { chunk_index: 0, file_index: 0 }
    : { episode_chunk: 0, episode_index: 0 };
  const video = videoTemplateOf(info);
  const templates: [string, string | null, Record<string, number | string>][] = [
    ["data_path", info.data_path, sample],
    [
      info.video_path !== undefined && info.video_path !== null ? "video_path" : "videos_path",
      videoKeysOf(info).length ? video : null,
      { ...sample, video_key: "camera" },
    ],
  ];
  for (const [key, template, values] of templates) {
    if (template === null) {
      if (key !== "data_path" && videoKeysOf(info).length)
        problems.push({
          file: INFO_PATH,
          line: infoLine(text, "features"),
          message: "video features need a video_path template",
        });
      continue;
    }
    try {
      formatPathTemplate(template, values);
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      problems.push({ file: INFO_PATH, line: infoLine(text, key), message: `${key}: ${error.message}` });
    }
  }
  return problems;
}
