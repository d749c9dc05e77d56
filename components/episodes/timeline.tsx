import type { AnnotationRecord } from "@/lib/catalog/list-annotations";
import { clipText } from "../ui/format";

const isRecovery = (span: AnnotationRecord) => span.label === "recovery" || span.attributes?.recovery === true;

/** Spans into lanes so that overlapping spans (a recovery inside a phase) sit on separate rows. */
function lanes(spans: AnnotationRecord[]): AnnotationRecord[][] {
  const rows: AnnotationRecord[][] = [];
  for (const span of [...spans].sort((a, b) => a.start_s - b.start_s || a.end_s - b.end_s)) {
    const free = rows.find((row) => row.at(-1)!.end_s <= span.start_s);
    if (free) free.push(span);
    else rows.push([span]);
  }
  return rows;
}

const ticks = (duration: number) => {
  const step = [1, 2, 5, 10, 15, 30, 60, 120, 300].find((s) => duration / s <= 8) ?? 600;
  return Array.from({ length: Math.floor(duration / step) + 1 }, (_, i) => i * step);
};

/** The spans running at `time` (a recovery inside a phase: both). */
export const spansAt = (spans: readonly AnnotationRecord[], time: number) =>
  spans.filter((s) => s.start_s <= time && time < s.end_s);

/** With a player: where playback is, and what choosing a span does (seek to its start). */
export type TimelinePlayback = {
  /** The playhead, in the episode's seconds. */
  time: number;
  onSelect: (span: AnnotationRecord) => void;
};

/**
 * The subtask timeline: each span drawn proportionally on the episode's time axis, labelled,
 * with its start and end on hover and on keyboard focus (not after a click, which would leave it
 * over the player's line naming the span); recoveries hatched in red. With a player
 * (`playback`) each span is a button that seeks to its start, the spans under the playhead are
 * highlighted, and the playhead is drawn across the lanes.
 */
export function Timeline({
  spans,
  duration,
  playback,
}: {
  spans: AnnotationRecord[];
  duration: number;
  playback?: TimelinePlayback;
}) {
  const fraction = (t: number) => Math.min(Math.max(t, 0), duration) / duration;
  const scale = (t: number) => `${fraction(t) * 100}%`;
  const current = new Set(playback ? spansAt(spans, playback.time).map((s) => s.annotation_id) : []);
  return (
    <div>
      <div className="relative space-y-1.5 rounded-md bg-slate-50 p-2 ring-1 ring-slate-200">
        {lanes(spans).map((row, i) => (
          // Each lane is a size container, so that a tooltip can be kept within it (cqw below).
          <div key={i} className="@container relative h-9">
            {row.map((span) => {
              const recovery = isRecovery(span);
              const active = current.has(span.annotation_id);
              // A label may hold 10,000 characters: names and tooltips get its start, the spans table all of it.
              const label = clipText(span.label, 300);
              const description = `${label}: ${span.start_s.toFixed(2)} s to ${span.end_s.toFixed(2)} s`;
              const className = `group absolute top-0 flex h-9 items-center overflow-visible rounded px-1.5 text-xs font-medium text-white outline-offset-1 focus-visible:outline focus-visible:outline-2 focus-visible:outline-slate-900 ${
                recovery
                  ? "bg-[repeating-linear-gradient(135deg,#dc2626_0_6px,#b91c1c_6px_12px)] ring-2 ring-red-300"
                  : active
                    ? "bg-brand-900"
                    : "bg-brand-600"
              } ${active ? "ring-2 ring-amber-400 ring-offset-1" : ""} ${playback ? "cursor-pointer text-left hover:brightness-110" : ""}`;
              const style = {
                left: scale(span.start_s),
                width: `max(4px, calc(${scale(span.end_s)} - ${scale(span.start_s)}))`,
              };
              // The tooltip opens from the span's side with more room (its start, or its end near the
              // lane's right edge) and is at most that room wide, so it never widens the page.
              const [from, to] = [fraction(span.start_s), fraction(span.end_s)];
              const fromStart = 1 - from >= to;
              const tooltipStyle = { maxWidth: `min(20rem, ${((fromStart ? 1 - from : to) * 100).toFixed(2)}cqw)` };
              const content = (
                <>
                  <span className="truncate">{label}</span>
                  <span
                    role="tooltip"
                    style={tooltipStyle}
                    className={`pointer-events-none absolute bottom-full z-10 mb-1 hidden w-max rounded bg-slate-900 px-2 py-1 text-xs font-normal text-white shadow group-hover:block group-focus-visible:block ${fromStart ? "left-0" : "right-0"}`}
                  >
                    <span className="line-clamp-3 wrap-anywhere">{label}</span>
                    <span className="block whitespace-nowrap text-slate-300">
                      {span.start_s.toFixed(2)}–{span.end_s.toFixed(2)} s
                    </span>
                  </span>
                </>
              );
              return playback ? (
                <button
                  key={span.annotation_id}
                  type="button"
                  aria-label={`${description}. Play from its start`}
                  aria-current={active ? "true" : undefined}
                  data-span={span.annotation_id}
                  data-active={active || undefined}
                  data-recovery={recovery || undefined}
                  className={className}
                  style={style}
                  onClick={() => playback.onSelect(span)}
                >
                  {content}
                </button>
              ) : (
                <div
                  key={span.annotation_id}
                  tabIndex={0}
                  role="img"
                  aria-label={description}
                  data-recovery={recovery || undefined}
                  className={className}
                  style={style}
                >
                  {content}
                </div>
              );
            })}
          </div>
        ))}
        {playback ? (
          <div
            aria-hidden="true"
            data-playhead
            className="pointer-events-none absolute inset-y-0 w-0.5 bg-amber-500 shadow-[0_0_0_1px_white]"
            style={{
              left: `calc(0.5rem + (100% - 1rem) * ${Math.min(Math.max(playback.time, 0), duration) / duration})`,
            }}
          />
        ) : null}
      </div>
      <div className="relative mx-2 mt-1 h-5 text-xs text-slate-500" aria-hidden="true">
        {ticks(duration).map((t) => (
          <span key={t} className="absolute -translate-x-1/2" style={{ left: scale(t) }}>
            {t}s
          </span>
        ))}
      </div>
      <p className="mt-2 flex flex-wrap gap-4 text-xs text-slate-600">
        <span className="flex items-center gap-1.5">
          <span className="inline-block h-3 w-5 rounded bg-brand-600" aria-hidden="true" /> subtask
        </span>
        <span className="flex items-center gap-1.5">
          <span
            className="inline-block h-3 w-5 rounded bg-[repeating-linear-gradient(135deg,#dc2626_0_4px,#b91c1c_4px_8px)]"
            aria-hidden="true"
          />{" "}
          recovery
        </span>
      </p>
    </div>
  );
}
