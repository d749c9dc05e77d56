"use client";

import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { PreviewBody } from "@/lib/api/requests";
import type { AnnotationRecord } from "@/lib/catalog/list-annotations";
import type { ActionResult } from "@/lib/http/portal";
import type { Preview, PreviewStream } from "@/lib/previews/create-preview";
import type { EpisodeStream } from "@/lib/previews/episode-streams";
import { Alert } from "../../ui/alert";
import { Button } from "../../ui/button";
import { cn } from "../../ui/cn";
import { clipText, formatBytes } from "../../ui/format";
import { Timeline } from "../timeline";
import {
  clamp,
  formatClock,
  nextSpan,
  positionText,
  previousSpan,
  spansNow,
  SPEEDS,
  toEpisodeTime,
  toFileTime,
} from "./playback";

export type RequestPreview = (input: PreviewBody) => Promise<ActionResult<Preview>>;

type Props = {
  episodeId: string;
  version: string;
  duration: number;
  spans: AnnotationRecord[];
  streams: EpisodeStream[];
  /** The server action that discloses and signs a preview (the same verb as POST /v1/previews). */
  requestPreview: RequestPreview;
};

/** Streams further apart than this from the main one are moved to it. */
const DRIFT_S = 0.15;
/** Until a frame's length is measured, steps of a frame assume this rate. */
const DEFAULT_FRAME_S = 1 / 30;

/** Why a video element gave up, by its MediaError code. */
const MEDIA_ERRORS: Record<number, string> = {
  1: "Loading it was stopped.",
  2: "The network failed while loading it.",
  3: "Its video could not be decoded.",
  // Also what a file that could not be fetched at all gives (the network failed before any byte arrived).
  4: "This browser could not load or read the file: the network failed, or it is damaged, or its format or codec is one the browser does not support.",
};

/** A stream set aside because this browser could not play it: what it is, why, and what the player did instead. */
type Failure = { what: string; reason: string; then: string };

/**
 * An episode's video streams with its subtask timeline. Nothing is requested until the user
 * presses play (or picks a span): only then is the preview disclosed and its signed URLs fetched,
 * so looking at an episode's metadata discloses nothing. One stream is large, the others small
 * beside it, any of them can be made the large one, and all follow the large one's clock. The
 * player speaks the episode's time; a file holding several episodes is played only from the
 * episode's start_s to its end_s.
 */
export function EpisodePlayer({ episodeId, version, duration, spans, streams, requestPreview }: Props) {
  const videoStreams = streams.filter((s) => s.video);
  const otherStreams = streams.filter((s) => !s.video);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [failures, setFailures] = useState<Record<string, Failure>>({});
  const [main, setMain] = useState<string>(videoStreams[0]?.stream ?? "");
  const [time, setTime] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [rate, setRate] = useState(1);
  const videos = useRef(new Map<string, HTMLVideoElement>());
  const player = useRef<HTMLDivElement>(null);
  // What the video elements need to know without waiting for a render: `failed` holds the streams
  // set aside (their elements are gone, so nothing plays, seeks or syncs them); `focusOnArrival`
  // asks for the player to take the focus that the Play button had when the preview replaces it.
  const state = useRef({
    time: 0,
    playing: false,
    wantsPlay: false,
    frame: DEFAULT_FRAME_S,
    main,
    failed: new Set<string>(),
    renewing: false,
    focusOnArrival: false,
  });
  state.current.main = main;

  const rangeOf = useCallback(
    (stream: string): PreviewStream | undefined => preview?.streams.find((s) => s.stream === stream),
    [preview],
  );
  const episodeLength = (() => {
    const range = rangeOf(main);
    return range ? range.end_s - range.start_s : duration;
  })();

  const each = useCallback(
    (fn: (video: HTMLVideoElement, range: PreviewStream) => void) => {
      for (const [stream, video] of videos.current) {
        const range = preview?.streams.find((s) => s.stream === stream);
        if (range) fn(video, range);
      }
    },
    [preview],
  );

  /**
   * The playhead now: the main video's own time when there is one (animation frames may run
   * seldom in a hidden or throttled tab, so the last frame's reading can be stale), else the last known.
   */
  const now = useCallback((): number => {
    const video = videos.current.get(state.current.main);
    const range = preview?.streams.find((s) => s.stream === state.current.main);
    if (video && range && video.readyState > 0) state.current.time = toEpisodeTime(range, video.currentTime);
    return state.current.time;
  }, [preview]);

  const seek = useCallback(
    (episodeTime: number) => {
      const t = clamp(episodeTime, 0, episodeLength);
      state.current.time = t;
      setTime(t);
      each((video, range) => {
        video.currentTime = toFileTime(range, t);
      });
    },
    [each, episodeLength],
  );

  const pause = useCallback(() => {
    state.current.playing = false;
    state.current.wantsPlay = false;
    setPlaying(false);
    each((video) => video.pause());
    setTime(now());
  }, [each, now]);

  /**
   * Stops at the episode's end: a file may go on with the next episode. Whatever ran past the end
   * (frames are checked only so often) is put back on the episode's last frame.
   */
  const atEnd = useCallback((): boolean => {
    const video = videos.current.get(state.current.main);
    const range = preview?.streams.find((s) => s.stream === state.current.main);
    if (!video || !range || !state.current.playing) return false;
    if (video.currentTime < range.end_s - 0.01 && !video.ended) return false;
    pause();
    each((v, r) => {
      v.currentTime = Math.max(r.start_s, r.end_s - 0.001);
    });
    state.current.time = episodeLength;
    setTime(episodeLength);
    return true;
  }, [preview, pause, each, episodeLength]);

  const startAll = useCallback(() => {
    if (state.current.time >= episodeLength - 0.05) seek(0);
    state.current.playing = true;
    setPlaying(true);
    each((video) => {
      video.play().catch(() => undefined);
    });
  }, [each, episodeLength, seek]);

  /** Discloses and signs the preview (once; a repeat while valid is the same preview), then plays. */
  const begin = useCallback(
    async (from?: number) => {
      if (from !== undefined) {
        state.current.time = from;
        setTime(from);
      }
      state.current.wantsPlay = true;
      if (preview && Date.parse(preview.expires_at) - Date.now() > 30_000) return startAll();
      state.current.focusOnArrival = true;
      setLoading(true);
      setError(null);
      const result = await requestPreview({ episode_id: episodeId, version });
      setLoading(false);
      state.current.renewing = false;
      if (!result.ok) {
        state.current.wantsPlay = false;
        setError(`${result.error.message} (${result.error.request_id})`);
        return;
      }
      // New URLs: every stream is tried again.
      state.current.failed = new Set();
      setFailures({});
      setPreview(result.data);
    },
    [episodeId, version, preview, requestPreview, startAll],
  );

  // When a preview arrives (or is renewed), each video loads; the main one starts everyone at the playhead.
  const onLoaded = (stream: string) => {
    const video = videos.current.get(stream);
    const range = rangeOf(stream);
    if (!video || !range) return;
    video.playbackRate = rate;
    video.currentTime = toFileTime(range, state.current.time);
    if (state.current.wantsPlay) video.play().catch(() => undefined);
    if (state.current.wantsPlay && stream === state.current.main) {
      state.current.playing = true;
      setPlaying(true);
    }
  };

  // The Play button is gone once the preview arrives: its focus goes to the player, whose keys
  // (space, arrows, [ and ]) then work at once, unless the user has put the focus somewhere else.
  useEffect(() => {
    if (!preview || !state.current.focusOnArrival) return;
    state.current.focusOnArrival = false;
    const active = document.activeElement;
    if (!active || active === document.body) player.current?.focus();
  }, [preview]);

  // The clock: the main video's time, read every frame while playing; the others follow it.
  useEffect(() => {
    if (!playing || !preview) return;
    let frame = 0;
    const tick = () => {
      const video = videos.current.get(state.current.main);
      const range = preview.streams.find((s) => s.stream === state.current.main);
      // A main video without its metadata yet (just made the large one) has no time to give.
      if (video && range && video.readyState > 0) {
        const t = toEpisodeTime(range, video.currentTime);
        state.current.time = t;
        setTime(t);
        if (atEnd()) return;
        for (const [stream, other] of videos.current) {
          const otherRange = preview.streams.find((s) => s.stream === stream);
          if (other === video || !otherRange) continue;
          // A stream still seeking (a slow network) is left to arrive: moving it again every frame would restart its seek each time.
          if (!other.seeking && Math.abs(toEpisodeTime(otherRange, other.currentTime) - t) > DRIFT_S)
            other.currentTime = toFileTime(otherRange, t);
          if (other.paused) other.play().catch(() => undefined);
        }
      }
      frame = requestAnimationFrame(tick);
    };
    frame = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(frame);
  }, [playing, preview, atEnd]);

  // The length of a frame, measured from the main video's frames, for shift+arrow. The shortest
  // gap between two frames shown one after the other is taken: a busy machine drops frames, which
  // only lengthens a gap, and a seek starts the measuring afresh (its jump is no frame's length).
  useEffect(() => {
    const video = videos.current.get(main) as
      | (HTMLVideoElement & {
          requestVideoFrameCallback?: (cb: (now: number, meta: { mediaTime: number }) => void) => number;
        })
      | undefined;
    if (!video?.requestVideoFrameCallback || !preview) return;
    let last: number | null = null;
    let shortest = Infinity;
    let stopped = false;
    const measure = (_: number, meta: { mediaTime: number }) => {
      if (stopped) return;
      const gap = last === null ? 0 : meta.mediaTime - last;
      if (gap > 0.001 && gap < 0.5 && gap < shortest) {
        shortest = gap;
        state.current.frame = gap;
      }
      last = meta.mediaTime;
      video.requestVideoFrameCallback!(measure);
    };
    const restart = () => {
      last = null;
    };
    video.requestVideoFrameCallback(measure);
    video.addEventListener("seeking", restart);
    return () => {
      stopped = true;
      video.removeEventListener("seeking", restart);
    };
  }, [main, preview]);

  useEffect(() => {
    each((video) => {
      video.playbackRate = rate;
    });
  }, [rate, each]);

  /**
   * Makes a stream the large one, whose clock the others follow. If playback was wanted and the
   * stream is ready, it goes on from it (when the large one failed before it ever played).
   */
  const showLarge = (stream: string) => {
    state.current.main = stream;
    setMain(stream);
    const video = videos.current.get(stream);
    if (state.current.wantsPlay && !state.current.playing && video && video.readyState > 0) {
      state.current.playing = true;
      setPlaying(true);
      video.play().catch(() => undefined);
    }
  };

  /**
   * A stream that fails. A signed URL stops working after 15 minutes: near then, the preview is
   * asked for again (a new disclosure) and everything goes on. Otherwise the file could not be
   * fetched or this browser cannot play it: that stream alone is set aside, with an error naming it
   * and a way to try it again, and the others play on; if it was the large one, the next playable
   * stream takes its place and the clock.
   */
  const onVideoError = (stream: string, video: HTMLVideoElement) => {
    if (!preview || state.current.failed.has(stream)) return;
    if (Date.parse(preview.expires_at) - Date.now() < 60_000) {
      // Every stream fails at once when the URLs run out: one new preview for all of them.
      if (state.current.renewing) return;
      state.current.renewing = true;
      const wasPlaying = state.current.playing;
      pause();
      state.current.wantsPlay = wasPlaying;
      setPreview(null);
      void begin();
      return;
    }
    state.current.failed.add(stream);
    const listed = streams.find((s) => s.stream === stream);
    const what = [listed?.media_type ?? rangeOf(stream)?.media_type, listed?.codec ? `codec ${listed.codec}` : null]
      .filter(Boolean)
      .join(", ");
    const reason = MEDIA_ERRORS[video.error?.code ?? 4] ?? MEDIA_ERRORS[4]!;
    let then = "The other streams play on without it.";
    if (stream === state.current.main) {
      const next = preview.streams.find((s) => !state.current.failed.has(s.stream));
      if (next) {
        then = `${next.stream} is shown large instead.`;
        showLarge(next.stream);
      } else {
        then = "No other stream of this episode can be played.";
        pause();
      }
    } else if (preview.streams.every((s) => state.current.failed.has(s.stream))) {
      then = "No other stream of this episode can be played.";
    }
    setFailures((current) => ({ ...current, [stream]: { what, reason, then } }));
  };

  /**
   * Tries a set-aside stream again (the network may have come back): its video is made afresh and,
   * once loaded, joins the others at the playhead. It stays small; the user may make it large again.
   */
  const retry = (stream: string) => {
    state.current.failed.delete(stream);
    setFailures(({ [stream]: _retried, ...others }) => others);
  };

  const selectSpan = (span: AnnotationRecord) => {
    if (!preview) return void begin(span.start_s);
    seek(span.start_s);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    if (target.closest("select, input, textarea")) return;
    const onButton = target.closest("button") !== null;
    const t = now();
    switch (event.key) {
      case " ":
        // Space on a button presses that button.
        if (onButton) return;
        event.preventDefault();
        if (state.current.playing) pause();
        else void begin();
        return;
      case "ArrowLeft":
      case "ArrowRight": {
        event.preventDefault();
        const step = event.shiftKey ? state.current.frame : 1;
        if (state.current.playing && event.shiftKey) pause();
        seek(t + (event.key === "ArrowLeft" ? -step : step));
        return;
      }
      case "[": {
        event.preventDefault();
        const span = previousSpan(spans, t);
        seek(span ? span.start_s : 0);
        return;
      }
      case "]": {
        event.preventDefault();
        const span = nextSpan(spans, t);
        if (span) seek(span.start_s);
        return;
      }
    }
  };

  const current = spansNow(spans, time);
  const currentLabels = current.map(({ span }) => span.label).join(" · ");

  return (
    <div onKeyDown={onKeyDown} data-episode-player>
      {videoStreams.length === 0 ? (
        <Alert kind="info" className="mb-4" title="No video in this episode">
          Its streams are listed below with their sizes; download them from the episode explorer.
        </Alert>
      ) : (
        <>
          <div
            ref={player}
            tabIndex={0}
            role="group"
            aria-label="Video player. Space plays or pauses, the arrow keys step a second (with shift a frame), [ and ] go to the previous or next span."
            className="rounded-lg bg-slate-950 p-2 outline-offset-2 focus-visible:outline focus-visible:outline-2 focus-visible:outline-brand-600"
          >
            {preview ? (
              <div className="grid grid-cols-3 gap-2" data-streams>
                {preview.streams.map((s) => {
                  const isMain = s.stream === main;
                  const failed = failures[s.stream];
                  return (
                    <figure
                      key={s.stream}
                      className={cn("relative min-w-0", isMain ? "order-first col-span-3" : "col-span-1")}
                    >
                      {failed ? (
                        // In place of the video: the stream is named in the caption, the reason below the player.
                        <div
                          data-failed-stream={s.stream}
                          className="flex aspect-video w-full items-center justify-center rounded bg-slate-900 p-2 pt-7 text-center text-xs text-slate-300"
                        >
                          Can&apos;t play this stream
                        </div>
                      ) : (
                        <video
                          ref={(element) => {
                            if (element) videos.current.set(s.stream, element);
                            else videos.current.delete(s.stream);
                          }}
                          src={s.url}
                          data-stream={s.stream}
                          data-main={isMain || undefined}
                          muted
                          playsInline
                          preload="auto"
                          aria-label={`${s.stream} camera${isMain ? "" : " (small)"}`}
                          className="aspect-video w-full rounded bg-black object-contain"
                          onLoadedMetadata={() => onLoaded(s.stream)}
                          onTimeUpdate={isMain ? () => atEnd() : undefined}
                          onError={(event) => onVideoError(s.stream, event.currentTarget)}
                        />
                      )}
                      <figcaption className="pointer-events-none absolute left-1.5 top-1.5 max-w-[calc(100%-0.75rem)] truncate rounded bg-black/60 px-1.5 py-0.5 font-mono text-xs text-white">
                        {s.stream}
                      </figcaption>
                      {isMain || failed ? null : (
                        <button
                          type="button"
                          className="absolute inset-0 rounded outline-offset-1 hover:ring-2 hover:ring-white/70 focus-visible:outline focus-visible:outline-2 focus-visible:outline-white"
                          aria-label={`Show ${s.stream} large`}
                          onClick={() => showLarge(s.stream)}
                        />
                      )}
                    </figure>
                  );
                })}
              </div>
            ) : (
              <div className="flex aspect-video w-full flex-col items-center justify-center gap-3 rounded bg-slate-900 p-4 text-center text-slate-200">
                {/* aria-disabled, not disabled, while preparing: a disabled button would drop the keyboard's focus. */}
                <Button
                  onClick={() => (loading ? undefined : void begin())}
                  aria-disabled={loading}
                  aria-label="Play episode"
                  className="px-5 py-3 text-base aria-disabled:cursor-wait aria-disabled:bg-brand-600/60"
                >
                  {loading ? "Preparing…" : "▶ Play"}
                </Button>
                <p className="max-w-sm text-xs text-slate-400">
                  {videoStreams.map((s) => s.stream).join(", ")}. Watching is recorded in the disclosure log, like a
                  download, once per 15 minutes.
                </p>
              </div>
            )}
          </div>

          <div className="mt-3 flex flex-wrap items-center gap-2">
            <Button
              variant="secondary"
              size="sm"
              aria-label={playing ? "Pause" : "Play"}
              onClick={() => (playing ? pause() : void begin())}
              disabled={loading}
            >
              {playing ? "❚❚ Pause" : "▶ Play"}
            </Button>
            <Button
              variant="ghost"
              size="sm"
              aria-label="Previous span"
              onClick={() => seek(previousSpan(spans, now())?.start_s ?? 0)}
              disabled={!preview}
            >
              [ Prev
            </Button>
            <Button
              variant="ghost"
              size="sm"
              aria-label="Back one second"
              onClick={() => seek(now() - 1)}
              disabled={!preview}
            >
              −1 s
            </Button>
            <Button
              variant="ghost"
              size="sm"
              aria-label="Forward one second"
              onClick={() => seek(now() + 1)}
              disabled={!preview}
            >
              +1 s
            </Button>
            <Button
              variant="ghost"
              size="sm"
              aria-label="Next span"
              onClick={() => {
                const span = nextSpan(spans, now());
                if (span) seek(span.start_s);
              }}
              disabled={!preview}
            >
              Next ]
            </Button>
            <span className="ml-auto font-mono text-xs tabular-nums text-slate-600" data-clock>
              {formatClock(time)} / {formatClock(episodeLength)}
            </span>
            <label className="flex items-center gap-1 text-xs text-slate-600">
              Speed
              <select
                aria-label="Playback speed"
                className="rounded border-slate-300 py-0.5 pl-1.5 pr-6 text-xs"
                value={rate}
                onChange={(e) => setRate(Number(e.target.value))}
              >
                {SPEEDS.map((s) => (
                  <option key={s} value={s}>
                    {s}×
                  </option>
                ))}
              </select>
            </label>
          </div>
          {preview && preview.streams.length > 1 ? (
            <div className="mt-2 flex flex-wrap items-center gap-1.5 text-xs" role="group" aria-label="Large stream">
              <span className="text-slate-500">Large:</span>
              {preview.streams.map((s) => (
                <button
                  key={s.stream}
                  type="button"
                  aria-pressed={s.stream === main}
                  disabled={Boolean(failures[s.stream])}
                  title={
                    failures[s.stream] ? "This stream could not be played; try it again below the player" : undefined
                  }
                  onClick={() => showLarge(s.stream)}
                  className={cn(
                    "rounded px-2 py-0.5 font-mono ring-1 ring-inset focus-visible:outline focus-visible:outline-2 focus-visible:outline-brand-600",
                    s.stream === main
                      ? "bg-brand-600 text-white ring-brand-600"
                      : "bg-white text-slate-700 ring-slate-300 hover:bg-slate-50",
                    failures[s.stream] && "cursor-not-allowed text-slate-400 line-through hover:bg-white",
                  )}
                >
                  {s.stream}
                </button>
              ))}
            </div>
          ) : null}
          {/* A label may be 10,000 characters, one word: two lines of it here (wrapping anywhere), all of it in the spans table. */}
          <p
            className="mt-2 flex min-w-0 items-start gap-x-1.5 text-sm text-slate-700"
            aria-live="polite"
            data-current-span
          >
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
                {!spans.length
                  ? "No subtask spans"
                  : time >= episodeLength - 0.05
                    ? "End of the episode"
                    : "Between spans"}
              </span>
            )}
          </p>
          {Object.entries(failures).map(([stream, f]) => (
            <Alert
              key={stream}
              kind="error"
              className="mt-2 wrap-anywhere"
              title={`Can't play ${stream}${f.what ? ` (${f.what})` : ""}`}
            >
              {f.reason} {f.then}{" "}
              <button
                type="button"
                className="font-medium underline underline-offset-2 hover:no-underline"
                onClick={() => retry(stream)}
              >
                Try {stream} again
              </button>
            </Alert>
          ))}
          {error ? (
            <Alert kind="error" className="mt-2">
              {error}
            </Alert>
          ) : null}
        </>
      )}

      {spans.length ? (
        <div className="mt-4">
          <Timeline
            spans={spans}
            duration={duration}
            playback={videoStreams.length ? { time, onSelect: selectSpan } : undefined}
          />
        </div>
      ) : null}

      {otherStreams.length ? (
        <div className="mt-4">
          <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Other streams (not played)</h3>
          <ul className="mt-1 divide-y divide-slate-100 text-sm">
            {otherStreams.map((s) => (
              <li key={s.stream} className="flex flex-wrap justify-between gap-x-4 py-1.5">
                <span className="font-mono">{s.stream}</span>
                <span className="min-w-0 break-all text-slate-500">
                  {s.media_type} · {formatBytes(s.size_bytes)}
                </span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
