"use client";

import { useEffect, useState, useSyncExternalStore } from "react";
import type { PlaybackEngine, PlaybackState } from "./engine";

/** The engine's main stream and whether it plays, re-rendering only when one of them changes. */
export function usePlaybackState(engine: PlaybackEngine): PlaybackState {
  return useSyncExternalStore(
    (listener) => engine.onState(listener),
    () => engine.snapshot,
    () => engine.snapshot,
  );
}

/** The playhead, for a view that shows it as text (the clock, the current span): re-renders on each tick. */
export function usePlayhead(engine: PlaybackEngine): number {
  const [time, setTime] = useState(engine.time);
  useEffect(() => engine.onTime(setTime), [engine]);
  return time;
}
