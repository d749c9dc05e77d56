import { createHash } from "node:crypto";
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { AnnotationLine, DatasetFile, EpisodeLine, FileLine, VersionFile } from "../../catalog/import/records";

/** A small, fast, seedable PRNG (mulberry32): the same seed always gives the same demo data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seedOf(text: string): number {
  return createHash("sha256").update(text).digest().readUInt32BE(0);
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

type Weighted = readonly (readonly [string, number])[];
function weighted(random: () => number, items: Weighted): string {
  let r = random() * items.reduce((sum, [, w]) => sum + w, 0);
  for (const [item, w] of items) if ((r -= w) < 0) return item;
  return items.at(-1)![0];
}

export type DemoDataset = {
  dataset: DatasetFile;
  idPrefix: string;
  tasks: Record<string, readonly string[]>;
  environments: readonly string[];
  /** The index of the version in which each environment (same order) first appears, as the changelogs say. */
  environmentSince: readonly number[];
  streams: readonly string[];
  /** The committed clip (lib/dev/demo/clips) every episode's file of each video stream holds. */
  clips: Readonly<Record<string, DemoClip>>;
  contributors: readonly string[];
  versions: readonly VersionFile[];
};

/** The demo's video clips: 80 s each, H.264 or AV1 fragmented MP4, a fragment a second (how they were made: clips/make-clips.sh). */
export const DEMO_CLIPS = ["bars-h264", "bars-av1", "rgb-h264", "yuv-av1", "grid-h264"] as const;
export type DemoClip = (typeof DEMO_CLIPS)[number];

const CLIPS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "clips");
const clipBytes = new Map<DemoClip, Buffer>();

/** A clip's bytes, read once: every episode plays the same few clips, up to its own duration. */
export function demoClip(name: DemoClip): Buffer {
  let bytes = clipBytes.get(name);
  if (!bytes) clipBytes.set(name, (bytes = readFileSync(path.join(CLIPS_DIR, `${name}.mp4`))));
  return bytes;
}

const OUTCOMES: Weighted = [
  ["success", 68],
  ["failure", 22],
  ["partial", 10],
];

export const DEMO_DATASETS: readonly DemoDataset[] = [
  {
    dataset: {
      id: "kitchen-pick-place",
      title: "Kitchen pick-and-place",
      description:
        "Single-arm manipulation in three real kitchens: cups, plates and drawers, teleoperated and autonomous.",
    },
    idPrefix: "kpp",
    tasks: {
      pick_cup: ["approach", "grasp", "lift", "retract"],
      place_cup_in_sink: ["approach", "grasp", "transport", "place", "release"],
      open_drawer: ["reach_handle", "grasp_handle", "pull", "release"],
      load_dishwasher: ["approach", "grasp", "transport", "insert", "release"],
    },
    environments: ["kitchen_amsterdam", "kitchen_osaka", "kitchen_lab_mockup"],
    environmentSince: [0, 0, 1],
    streams: ["wrist_cam", "head_cam", "joint_states", "gripper_force"],
    clips: { wrist_cam: "bars-h264", head_cam: "bars-av1" },
    contributors: ["contrib-ams-01", "contrib-ams-02", "contrib-osa-01", "contrib-lab-07"],
    versions: [
      {
        version: "1.0.0",
        released_at: "2026-03-02T09:00:00Z",
        changelog: [{ type: "added", description: "First release: pick, place and drawer tasks in two kitchens." }],
      },
      {
        version: "1.1.0",
        released_at: "2026-06-15T09:00:00Z",
        changelog: [
          { type: "added", description: "Episodes from the lab mock-up kitchen." },
          { type: "fixed", description: "Grasp spans no longer overlap the lift that follows them." },
        ],
      },
      {
        version: "2.0.0",
        released_at: "2026-10-01T09:00:00Z",
        changelog: [
          { type: "added", description: "Dishwasher loading task." },
          { type: "changed", description: "Gripper force resampled to 500 Hz." },
          { type: "deprecated", description: "The head_cam stream will be removed in 3.0.0." },
        ],
      },
    ],
  },
  {
    dataset: {
      id: "warehouse-bin-picking",
      title: "Warehouse bin picking",
      description:
        "Suction and parallel-gripper picking from cluttered totes in two fulfilment centres and a simulator.",
    },
    idPrefix: "wbp",
    tasks: {
      pick_item: ["approach", "grasp", "lift"],
      place_in_tote: ["transport", "place", "release"],
      regrasp: ["release", "approach", "grasp"],
      scan_barcode: ["present", "scan", "retract"],
    },
    environments: ["warehouse_north", "warehouse_south", "sim_warehouse"],
    environmentSince: [0, 1, 1],
    streams: ["overhead_cam", "wrist_cam", "depth", "joint_states", "suction_pressure"],
    clips: { overhead_cam: "rgb-h264", wrist_cam: "yuv-av1", depth: "grid-h264" },
    contributors: ["contrib-wh-11", "contrib-wh-12", "contrib-sim-03"],
    versions: [
      {
        version: "1.0.0",
        released_at: "2026-01-20T12:00:00Z",
        changelog: [{ type: "added", description: "First release from the north warehouse." }],
      },
      {
        version: "1.2.0",
        released_at: "2026-05-04T12:00:00Z",
        changelog: [
          { type: "added", description: "South warehouse and simulated episodes." },
          { type: "security", description: "Faces blurred in overhead_cam." },
        ],
      },
    ],
  },
  {
    dataset: {
      id: "tabletop-assembly",
      title: "Tabletop assembly",
      description: "Bimanual peg insertion, bolt screwing and cable routing on two lab benches.",
    },
    idPrefix: "tta",
    tasks: {
      insert_peg: ["align", "insert", "verify"],
      screw_bolt: ["pick_bolt", "align", "screw", "verify"],
      cable_routing: ["grasp_cable", "route", "clip", "release"],
    },
    environments: ["lab_bench_1", "lab_bench_2"],
    environmentSince: [0, 0],
    streams: ["front_cam", "wrist_cam", "joint_states"],
    clips: { front_cam: "grid-h264", wrist_cam: "bars-av1" },
    contributors: ["contrib-lab-01", "contrib-lab-02"],
    versions: [
      {
        version: "0.9.0",
        released_at: "2025-12-01T08:00:00Z",
        changelog: [{ type: "added", description: "Preview release." }],
      },
      {
        version: "1.0.0",
        released_at: "2026-04-01T08:00:00Z",
        changelog: [
          { type: "added", description: "Cable routing task." },
          { type: "removed", description: "Episodes with an uncalibrated wrist camera." },
        ],
      },
    ],
  },
];

/**
 * The first whole seconds of a clip that cover `seconds`: a clip is fragmented MP4 whose first
 * second is described in its moov and each later second is a fragment (moof, then its mdat), so
 * keeping the boxes up to the fragment that ends at or after `seconds` is a playable MP4 of that
 * length (browsers and ffprobe read its length from the fragments). The index of every fragment
 * at the end (mfra) is left out: it would point past the end.
 */
export function clipOfLength(clip: Buffer, seconds: number): Buffer {
  const fragments = Math.max(0, Math.ceil(seconds) - 1);
  let offset = 0;
  let kept = 0;
  while (offset + 8 <= clip.length) {
    const size = clip.readUInt32BE(offset);
    const type = clip.toString("latin1", offset + 4, offset + 8);
    if (size < 8 || type === "mfra") break;
    if (type === "moof" && ++kept > fragments) break;
    offset += size;
  }
  return clip.subarray(0, offset);
}

/**
 * Bytes of a demo file: for a video stream a real clip cut to the episode's length, so the
 * portal's player plays it; otherwise deterministic noise. Either way a file unchanged between
 * versions has the same sha256.
 */
export function demoFileBytes(spec: DemoDataset, filePath: string, stream: string, seconds: number): Buffer {
  const clip = spec.clips[stream];
  if (clip) return clipOfLength(demoClip(clip), seconds);
  const random = prng(seedOf(`${spec.dataset.id}/${filePath}`));
  const size = 512 + Math.floor(random() * 3584);
  const bytes = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

const streamExtension = (spec: DemoDataset, stream: string) => (spec.clips[stream] ? "mp4" : "parquet");

export type GeneratedVersion = {
  dir: string;
  spec: DemoDataset;
  datasetId: string;
  version: string;
  /** `seconds`: the episode's length, to which a video file's clip is cut. */
  files: { path: string; stream: string; sha256: string; size: number; seconds: number }[];
};

/**
 * Writes the import directory of one demo version. Episode i is the same in every version that
 * contains it (ids are stable), and each version adds episodes to the previous one.
 */
export function writeDemoVersion(
  root: string,
  spec: DemoDataset,
  versionIndex: number,
  options: { episodesPerVersion: number; withFiles?: boolean },
): GeneratedVersion {
  const release = spec.versions[versionIndex]!;
  const dir = path.join(root, `${spec.dataset.id}@${release.version}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "dataset.json"), `${JSON.stringify(spec.dataset, null, 2)}\n`);
  writeFileSync(path.join(dir, "version.json"), `${JSON.stringify(release, null, 2)}\n`);
  const count = Math.round(options.episodesPerVersion * (1 + versionIndex * 0.25));
  const episodes: string[] = [];
  const annotations: string[] = [];
  const files: GeneratedVersion["files"] = [];
  const fileLines: string[] = [];
  const environments = availableEnvironments(spec, versionIndex);
  for (let i = 1; i <= count; i++) {
    const episode = demoEpisode(spec, i);
    if (!environments.includes(episode.environment)) continue;
    episodes.push(JSON.stringify(episode));
    for (const span of demoSpans(spec, episode, i)) annotations.push(JSON.stringify(span));
    if (options.withFiles === false) continue;
    for (const stream of episode.streams) {
      const filePath = `episodes/${episode.episode_id}/${stream}.${streamExtension(spec, stream)}`;
      const bytes = demoFileBytes(spec, filePath, stream, episode.duration_s);
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      const line: FileLine = {
        path: filePath,
        episode_id: episode.episode_id,
        stream,
        size_bytes: bytes.length,
        sha256,
      };
      fileLines.push(JSON.stringify(line));
      files.push({ path: filePath, stream, sha256, size: bytes.length, seconds: episode.duration_s });
    }
  }
  writeFileSync(path.join(dir, "episodes.jsonl"), `${episodes.join("\n")}\n`);
  writeFileSync(path.join(dir, "annotations.jsonl"), `${annotations.join("\n")}\n`);
  writeFileSync(path.join(dir, "files.jsonl"), fileLines.length ? `${fileLines.join("\n")}\n` : "");
  return { dir, spec, datasetId: spec.dataset.id, version: release.version, files };
}

/** Later environments arrive with later versions, as the changelogs say. */
function availableEnvironments(spec: DemoDataset, versionIndex: number): readonly string[] {
  return spec.environments.filter((_, i) => spec.environmentSince[i]! <= versionIndex);
}

export function demoEpisode(spec: DemoDataset, index: number): EpisodeLine {
  const random = prng(seedOf(`${spec.dataset.id}#${index}`));
  const task = pick(random, Object.keys(spec.tasks));
  const outcome = weighted(random, OUTCOMES);
  const streams = spec.streams.filter((s, i) => i < 2 || random() < 0.85);
  return {
    episode_id: `${spec.idPrefix}-${String(index).padStart(6, "0")}`,
    task,
    environment: pick(random, spec.environments),
    duration_s: Math.round((8 + random() * 70) * 100) / 100,
    outcome,
    has_recovery: random() < (outcome === "success" ? 0.2 : 0.45),
    contributor: pick(random, spec.contributors),
    streams,
  };
}

/** Subtask spans tiling the episode in order, with a recovery span where the episode has one. */
export function demoSpans(spec: DemoDataset, episode: EpisodeLine, index: number): AnnotationLine[] {
  const random = prng(seedOf(`${spec.dataset.id}#${index}#spans`));
  const phases = spec.tasks[episode.task]!;
  const spans: AnnotationLine[] = [];
  const slot = episode.duration_s / phases.length;
  const recoveryAt = episode.has_recovery ? Math.floor(random() * phases.length) : -1;
  phases.forEach((label, i) => {
    const start = Math.round((i * slot + random() * slot * 0.1) * 100) / 100;
    const end = Math.round(((i + 1) * slot - random() * slot * 0.1) * 100) / 100;
    spans.push({
      episode_id: episode.episode_id,
      label,
      start_s: start,
      end_s: Math.min(end, episode.duration_s),
      attributes: { phase: i + 1 },
    });
    if (i === recoveryAt) {
      const rStart = Math.round((start + (end - start) * 0.4) * 100) / 100;
      const rEnd = Math.round((start + (end - start) * 0.9) * 100) / 100;
      spans.push({
        episode_id: episode.episode_id,
        label: "recovery",
        start_s: rStart,
        end_s: rEnd,
        attributes: { recovery: true, reason: pick(random, ["slip", "missed_grasp", "collision"]) },
      });
    }
  });
  return spans;
}

/** Streams a large synthetic version (benchmarks) straight to disk without holding it in memory. */
export async function writeBulkVersion(
  root: string,
  datasetId: string,
  version: string,
  episodes: number,
): Promise<string> {
  const spec: DemoDataset = {
    ...DEMO_DATASETS[0]!,
    dataset: { ...DEMO_DATASETS[0]!.dataset, id: datasetId, title: `Benchmark ${datasetId}` },
    idPrefix: datasetId,
  };
  const dir = path.join(root, `${datasetId}@${version}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "dataset.json"), JSON.stringify(spec.dataset));
  writeFileSync(
    path.join(dir, "version.json"),
    JSON.stringify({
      version,
      released_at: "2026-01-01T00:00:00Z",
      changelog: [{ type: "added", description: "Benchmark data." }],
    }),
  );
  const out = createWriteStream(path.join(dir, "episodes.jsonl"));
  let chunk = "";
  for (let i = 1; i <= episodes; i++) {
    const episode = demoEpisode(spec, i);
    chunk += `${JSON.stringify({ ...episode, episode_id: `${datasetId}-${String(i).padStart(8, "0")}` })}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
      chunk = "";
    }
  }
  await new Promise<void>((resolve, reject) => {
    out.once("error", reject);
    out.end(chunk, () => resolve());
  });
  return dir;
}
