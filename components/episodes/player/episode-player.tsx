"use client";

import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { PreviewBody } from "@/lib/api/requests";
import type { AnnotationRecord } from "@/lib/catalog/list-annotations";
import type { ActionResult } from "@/lib/http/portal";
import type { Preview } from "@/lib/previews/create-preview";
import type { EpisodeStream } from "@/lib/previews/episode-streams";
import { Alert } from "../../ui/alert";
import { Button } from "../../ui/button";
import { formatBytes } from "../../ui/format";
import { EpisodePlots } from "../plots/episode-plots";
import { Timeline } from "../timeline";
import { CurrentSpan, LargeStreamPicker, PlayerControls } from "./controls";
import { PlaybackEngine, type SetAside } from "./engine";
import { nextSpan, previousSpan } from "./playback";
import { usePlaybackState, usePlayhead } from "./use-playback";
import { VideoStreams } from "./video-streams";

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

/** A stream set aside because this browser could not play it: what it is, why, and what the player did instead. */
type Failure = SetAside & { what: string };

/**
 * An episode's video streams with its subtask timeline and the robot's data plotted in step.
 * Nothing is requested until the user presses play (or picks a span): only then is the preview
 * disclosed and its signed URLs fetched, so looking at an episode's metadata discloses nothing.
 * The playback itself (clocks, drift, failures, frame steps) is the engine's (./engine.ts); this
 * view asks for the preview, renders the engine's state and hands it the user's keys and clicks.
 */
export function EpisodePlayer({ episodeId, version, duration, spans, streams, requestPreview }: Props) {
  const videoStreams = streams.filter((s) => s.video);
  const tables = streams.filter((s) => s.table);
  const otherStreams = streams.filter((s) => !s.video && !s.table);
  const [engine] = useState(() => new PlaybackEngine(videoStreams[0]?.stream ?? "", duration));
  const { main, playing } = usePlaybackState(engine);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [failures, setFailures] = useState<Record<string, Failure>>({});
  const [rate, setRate] = useState(1);
  const player = useRef<HTMLDivElement>(null);
  // The Play button is gone once the preview arrives: its focus goes to the player then.
  const focusOnArrival = useRef(false);
  const renewing = useRef(false);
  const signedVideos = preview?.streams.filter((s) => s.media_type.startsWith("video/")) ?? [];

  const startAll = useCallback(() => engine.play(), [engine]);

  /** Discloses and signs the preview (once; a repeat while valid is the same preview), then plays. */
  const begin = useCallback(
    async (from?: number) => {
      if (from !== undefined) engine.startAt(from);
      engine.want();
      if (preview && Date.parse(preview.expires_at) - Date.now() > 30_000) return startAll();
      focusOnArrival.current = true;
      setLoading(true);
      setError(null);
      const result = await requestPreview({ episode_id: episodeId, version });
      setLoading(false);
      renewing.current = false;
      if (!result.ok) {
        engine.pause();
        setError(`${result.error.message} (${result.error.request_id})`);
        return;
      }
      // New URLs: every stream is tried again.
      engine.setStreams(result.data.streams.filter((s) => s.media_type.startsWith("video/")));
      setFailures({});
      setPreview(result.data);
    },
    [engine, episodeId, version, preview, requestPreview, startAll],
  );

  // The Play button's focus goes to the player, whose keys (space, arrows, [ and ]) then work at
  // once, unless the user has put the focus somewhere else.
  useEffect(() => {
    if (!preview || !focusOnArrival.current) return;
    focusOnArrival.current = false;
    const active = document.activeElement;
    if (!active || active === document.body) player.current?.focus();
  }, [preview]);

  // The clock: every animation frame while playing.
  useEffect(() => {
    if (!playing || !preview) return;
    let frame = 0;
    const tick = () => {
      engine.tick();
      frame = requestAnimationFrame(tick);
    };
    frame = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(frame);
  }, [engine, playing, preview]);

  // The length of a frame, measured from the main video's frames, for shift+arrow.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the main video is found by its data-main attribute, which moves with `main`.
  useEffect(() => {
    if (!preview) return;
    const video = player.current?.querySelector<HTMLVideoElement>(`video[data-main]`);
    if (!video?.requestVideoFrameCallback) return;
    engine.measureAfresh();
    let stopped = false;
    const measure = (_: number, meta: { mediaTime: number }) => {
      if (stopped) return;
      engine.frameShown(meta.mediaTime);
      video.requestVideoFrameCallback(measure);
    };
    const restart = () => engine.seeked();
    video.requestVideoFrameCallback(measure);
    video.addEventListener("seeking", restart);
    return () => {
      stopped = true;
      video.removeEventListener("seeking", restart);
    };
  }, [engine, main, preview]);

  useEffect(() => engine.setRate(rate), [engine, rate]);

  /** A stream that fails: a new preview when the URLs ran out, else that stream alone is set aside. */
  const onVideoError = (stream: string) => {
    if (!preview) return;
    const outcome = engine.fail(stream, Date.parse(preview.expires_at), Date.now());
    if (!outcome) return;
    if (outcome.kind === "renew") {
      // Every stream fails at once when the URLs run out: one new preview for all of them.
      if (renewing.current) return;
      renewing.current = true;
      setPreview(null);
      void begin();
      return;
    }
    const listed = streams.find((s) => s.stream === stream);
    const what = [listed?.media_type, listed?.codec ? `codec ${listed.codec}` : null].filter(Boolean).join(", ");
    setFailures((current) => ({ ...current, [stream]: { ...outcome.failure, what } }));
  };

  /** Tries a set-aside stream again (the network may have come back): its video is made afresh and joins the others. */
  const retry = (stream: string) => {
    engine.retry(stream);
    setFailures(({ [stream]: _retried, ...others }) => others);
  };

  const selectSpan = (span: AnnotationRecord) => {
    if (!preview) return void begin(span.start_s);
    engine.seek(span.start_s);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    if (target.closest("select, input, textarea")) return;
    const onButton = target.closest("button") !== null;
    const t = engine.now();
    switch (event.key) {
      case " ":
        // Space on a button presses that button.
        if (onButton) return;
        event.preventDefault();
        if (engine.snapshot.playing) engine.pause();
        else void begin();
        return;
      case "ArrowLeft":
      case "ArrowRight": {
        event.preventDefault();
        const direction = event.key === "ArrowLeft" ? -1 : 1;
        if (event.shiftKey) engine.stepFrame(direction);
        else engine.seek(t + direction);
        return;
      }
      case "[": {
        event.preventDefault();
        const span = previousSpan(spans, t);
        engine.seek(span ? span.start_s : 0);
        return;
      }
      case "]": {
        event.preventDefault();
        const span = nextSpan(spans, t);
        if (span) engine.seek(span.start_s);
        return;
      }
    }
  };

  const failed = (stream: string) => Boolean(failures[stream]);

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
              <VideoStreams engine={engine} streams={signedVideos} main={main} failed={failed} onError={onVideoError} />
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
                  {[...videoStreams, ...tables].map((s) => s.stream).join(", ")}. Watching is recorded in the disclosure
                  log, like a download, once per 15 minutes.
                </p>
              </div>
            )}
          </div>

          <PlayerControls
            engine={engine}
            spans={spans}
            playing={playing}
            loading={loading}
            ready={Boolean(preview)}
            rate={rate}
            onRate={setRate}
            onPlay={() => void begin()}
          />
          {preview ? <LargeStreamPicker engine={engine} streams={signedVideos} main={main} failed={failed} /> : null}
          <CurrentSpan engine={engine} spans={spans} />
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
          {videoStreams.length ? (
            <PlayingTimeline engine={engine} spans={spans} duration={duration} onSelect={selectSpan} />
          ) : (
            <Timeline spans={spans} duration={duration} />
          )}
        </div>
      ) : null}

      {videoStreams.length ? (
        <EpisodePlots
          tables={tables}
          signed={preview?.streams ?? null}
          spans={spans}
          engine={engine}
          length={engine.length}
        />
      ) : null}

      {otherStreams.length || (!videoStreams.length && tables.length) ? (
        <div className="mt-4">
          <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Other streams (not played)</h3>
          <ul className="mt-1 divide-y divide-slate-100 text-sm">
            {(videoStreams.length ? otherStreams : [...tables, ...otherStreams]).map((s) => (
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

function PlayingTimeline({
  engine,
  spans,
  duration,
  onSelect,
}: {
  engine: PlaybackEngine;
  spans: AnnotationRecord[];
  duration: number;
  onSelect: (span: AnnotationRecord) => void;
}) {
  const time = usePlayhead(engine);
  return <Timeline spans={spans} duration={duration} playback={{ time, onSelect }} />;
}
