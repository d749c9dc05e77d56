import type { AnnotationRecord } from "@/lib/catalog/list-annotations";

/**
 * The player's arithmetic, apart from React and the video element. The player speaks the
 * episode's time (0 to its duration) everywhere; each stream's file may hold the episode anywhere
 * (`start_s` to `end_s` of the file's own time), so every read and write of a video's
 * `currentTime` goes through these two.
 */
export type Range = { start_s: number; end_s: number };

export const toFileTime = (range: Range, episodeTime: number) =>
  range.start_s + clamp(episodeTime, 0, range.end_s - range.start_s);
export const toEpisodeTime = (range: Range, fileTime: number) =>
  clamp(fileTime - range.start_s, 0, range.end_s - range.start_s);

export const clamp = (value: number, min: number, max: number) => Math.min(Math.max(value, min), max);

/** A span starts "here" within this much, so that `[` at a span's start goes to the one before. */
const AT_START = 0.5;

/**
 * Spans in time order: by start, then by end (as the timeline lays them in lanes). Imports list
 * spans in any order, so every count and step the player shows goes by this one.
 */
export const inTimeOrder = (spans: readonly AnnotationRecord[]) =>
  [...spans].sort((a, b) => a.start_s - b.start_s || a.end_s - b.end_s);

/**
 * The spans running at `time`, in time order, each with its place among all the episode's spans
 * in time order (1 for the first): overlapping spans (a recovery inside a phase) are each named
 * and counted, whatever order the import listed them in.
 */
export function spansNow(
  spans: readonly AnnotationRecord[],
  time: number,
): { span: AnnotationRecord; position: number }[] {
  return inTimeOrder(spans).flatMap((span, i) =>
    span.start_s <= time && time < span.end_s ? [{ span, position: i + 1 }] : [],
  );
}

/** "span 3 of 9", "spans 3 and 4 of 9", "spans 2, 3 and 4 of 9". */
export function positionText(positions: readonly number[], total: number): string {
  if (positions.length <= 1) return `span ${positions[0] ?? 0} of ${total}`;
  return `spans ${positions.slice(0, -1).join(", ")} and ${positions.at(-1)} of ${total}`;
}

/** The span to go to with `]`: the first that starts after `time`. */
export function nextSpan(spans: readonly AnnotationRecord[], time: number): AnnotationRecord | undefined {
  return inTimeOrder(spans).find((s) => s.start_s > time + 0.01);
}

/** The span to go to with `[`: the latest that starts before `time` (not the one just begun). */
export function previousSpan(spans: readonly AnnotationRecord[], time: number): AnnotationRecord | undefined {
  return inTimeOrder(spans)
    .filter((s) => s.start_s < time - AT_START)
    .at(-1);
}

/** "1:05.3" */
export function formatClock(seconds: number): string {
  const s = Math.max(0, seconds);
  const minutes = Math.floor(s / 60);
  const rest = s - minutes * 60;
  return `${minutes}:${rest.toFixed(1).padStart(4, "0")}`;
}

export const SPEEDS = [0.25, 0.5, 1, 1.5, 2] as const;
