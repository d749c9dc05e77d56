import type { LeRobotFormatInfo, SourceFormat } from "../db/schema";

/** A version's source-format facts as the API shows them (`format` on versions and manifests). */
export type VersionFormat = { source: "lerobot" } & LeRobotFormatInfo;

/** The stored facts of a version as the API shows them, fields in a fixed order; null for our own import format. */
export function versionFormat(source: SourceFormat, info: LeRobotFormatInfo | null): VersionFormat | null {
  if (source !== "lerobot" || !info) return null;
  return {
    source: "lerobot",
    codebase_version: info.codebase_version,
    robot_type: info.robot_type,
    fps: info.fps,
    total_frames: info.total_frames,
    cameras: info.cameras.map((c) => ({
      key: c.key,
      storage: c.storage,
      codec: c.codec,
      height: c.height,
      width: c.width,
      fps: c.fps,
    })),
  };
}
