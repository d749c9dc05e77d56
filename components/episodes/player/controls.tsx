"use client";

import type { AnnotationRecord } from "@/lib/catalog/list-annotations";
import type { PreviewStream } from "@/lib/previews/create-preview";
import { Button } from "../../ui/button";
import { cn } from "../../ui/cn";
import { clipText } from "../../ui/format";
import type { PlaybackEngine } from "./engine";
import { formatClock, nextSpan, positionText, previousSpan, spansNow, SPEEDS } from "./playback";
import { usePlayhead } from "./use-playback";

/** Play, span and second steps, the clock and the speed. */
export function PlayerControls({
  engine,
  spans,
  playing,
  loading,
  ready,
  rate,
  onRate,
  onPlay,
}: {
  engine: PlaybackEngine;
  spans: readonly AnnotationRecord[];
  playing: boolean;
  loading: boolean;
  /** A preview is there: the steps have videos to move. */
  ready: boolean;
  rate: number;
  onRate: (rate: number) => void;
  onPlay: () => void;
}) {
  return (
    <div className="mt-3 flex flex-wrap items-center gap-2">
      <Button
        variant="secondary"
        size="sm"
        aria-label={playing ? "Pause" : "Play"}
        onClick={() => (playing ? engine.pause() : onPlay())}
        disabled={loading}
      >
        {playing ? "❚❚ Pause" : "▶ Play"}
      </Button>
      <Button
        variant="ghost"
        size="sm"
        aria-label="Previous span"
        onClick={() => engine.seek(previousSpan(spans, engine.now())?.start_s ?? 0)}
        disabled={!ready}
      >
        [ Prev
      </Button>
      <Button
        variant="ghost"
        size="sm"
        aria-label="Back one second"
        onClick={() => engine.seek(engine.now() - 1)}
        disabled={!ready}
      >
        −1 s
      </Button>
      <Button
        variant="ghost"
        size="sm"
        aria-label="Forward one second"
        onClick={() => engine.seek(engine.now() + 1)}
        disabled={!ready}
      >
        +1 s
      </Button>
      <Button
        variant="ghost"
        size="sm"
        aria-label="Next span"
        onClick={() => {
          const span = nextSpan(spans, engine.now());
          if (span) engine.seek(span.start_s);
        }}
        disabled={!ready}
      >
        Next ]
      </Button>
      <Clock engine={engine} />
      <label className="flex items-center gap-1 text-xs text-slate-600">
        Speed
        <select
          aria-label="Playback speed"
          className="rounded border-slate-300 py-0.5 pl-1.5 pr-6 text-xs"
          value={rate}
          onChange={(e) => onRate(Number(e.target.value))}
        >
          {SPEEDS.map((s) => (
            <option key={s} value={s}>
              {s}×
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

function Clock({ engine }: { engine: PlaybackEngine }) {
  const time = usePlayhead(engine);
  return (
    <span className="ml-auto font-mono text-xs tabular-nums text-slate-600" data-clock>
      {formatClock(time)} / {formatClock(engine.length)}
    </span>
  );
}

/** Which stream is large, for a preview of several. */
export function LargeStreamPicker({
  engine,
  streams,
  main,
  failed,
}: {
  engine: PlaybackEngine;
  streams: PreviewStream[];
  main: string;
  failed: (stream: string) => boolean;
}) {
  if (streams.length < 2) return null;
  return (
    <div className="mt-2 flex flex-wrap items-center gap-1.5 text-xs" role="group" aria-label="Large stream">
      <span className="text-slate-500">Large:</span>
      {streams.map((s) => (
        <button
          key={s.stream}
          type="button"
          aria-pressed={s.stream === main}
          disabled={failed(s.stream)}
          title={failed(s.stream) ? "This stream could not be played; try it again below the player" : undefined}
          onClick={() => engine.showLarge(s.stream)}
          className={cn(
            "rounded px-2 py-0.5 font-mono ring-1 ring-inset focus-visible:outline focus-visible:outline-2 focus-visible:outline-brand-600",
            s.stream === main
              ? "bg-brand-600 text-white ring-brand-600"
              : "bg-white text-slate-700 ring-slate-300 hover:bg-slate-50",
            failed(s.stream) && "cursor-not-allowed text-slate-400 line-through hover:bg-white",
          )}
        >
          {s.stream}
        </button>
      ))}
    </div>
  );
}

/** The span (or spans) running at the playhead, with its place among the episode's. */
export function CurrentSpan({ engine, spans }: { engine: PlaybackEngine; spans: readonly AnnotationRecord[] }) {
  const time = usePlayhead(engine);
  const current = spansNow(spans, time);
  const currentLabels = current.map(({ span }) => span.label).join(" · ");
  return (
    // A label may be 10,000 characters, one word: two lines of it here (wrapping anywhere), all of it in the spans table.
    <p className="mt-2 flex min-w-0 items-start gap-x-1.5 text-sm text-slate-700" aria-live="polite" data-current-span>
      {current.length ? (
        <>
          {/* The spaces are for the text as read aloud; the flex gap spaces it on screen. */}
          <span className="shrink-0">Now:</span>{" "}
          <span
            className="line-clamp-2 min-w-0 font-semibold wrap-anywhere"
            title={currentLabels.length > 80 ? clipText(currentLabels, 1000) : undefined}
          >
            {clipText(currentLabels, 300)}
          </span>{" "}
          <span className="shrink-0 whitespace-nowrap text-slate-500">
            (
            {positionText(
              current.map((c) => c.position),
              spans.length,
            )}
            )
          </span>
        </>
      ) : (
        <span className="text-slate-500">
          {!spans.length ? "No subtask spans" : time >= engine.length - 0.05 ? "End of the episode" : "Between spans"}
        </span>
      )}
    </p>
  );
}
