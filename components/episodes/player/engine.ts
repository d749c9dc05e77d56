import { clamp, toEpisodeTime, toFileTime, type Range } from "./playback";

/**
 * The parts of an HTMLVideoElement the engine uses: a test hands in plain objects with these, so
 * the clocks, drift, failures and frame steps are checked without a browser.
 */
export type VideoLike = {
  currentTime: number;
  playbackRate: number;
  readonly readyState: number;
  readonly paused: boolean;
  readonly seeking: boolean;
  readonly ended: boolean;
  readonly error: { code: number } | null;
  play(): Promise<void>;
  pause(): void;
};

export type StreamRange = Range & { stream: string };

/** Streams further apart than this from the main one are moved to it. */
export const DRIFT_S = 0.15;
/** Until a frame's length is measured, steps of a frame assume this rate. */
export const DEFAULT_FRAME_S = 1 / 30;

/** Why a video element gave up, by its MediaError code. */
export const MEDIA_ERRORS: Record<number, string> = {
  1: "Loading it was stopped.",
  2: "The network failed while loading it.",
  3: "Its video could not be decoded.",
  // Also what a file that could not be fetched at all gives (the network failed before any byte arrived).
  4: "This browser could not load or read the file: the network failed, or it is damaged, or its format or codec is one the browser does not support.",
};

/** What the views draw from: changes only when one of these does (not on every clock tick, see `onTime`). */
export type PlaybackState = { main: string; playing: boolean };

/** A stream set aside: why, and what the engine did instead. */
export type SetAside = { reason: string; then: string };

/** What a failed stream means: the URLs ran out (ask for a new preview), or this stream alone is set aside. */
export type FailureOutcome = { kind: "renew"; resume: boolean } | { kind: "set-aside"; failure: SetAside } | null;

/**
 * The player's playback, apart from React: the video elements of a preview's streams, one of them
 * the main one whose clock the others follow. The engine speaks the episode's time (0 to its
 * length); each stream's file may hold the episode anywhere (`start_s` to `end_s`). Time changes
 * go to `onTime` listeners (the clock, the plots' cursor) without a React render per frame; the
 * rest goes to `onState`.
 */
export class PlaybackEngine {
  private readonly videos = new Map<string, VideoLike>();
  private ranges: StreamRange[] = [];
  private readonly timeListeners = new Set<(time: number) => void>();
  private readonly stateListeners = new Set<() => void>();
  private state: PlaybackState;
  private timeNow = 0;
  /** Playback asked for (play pressed, a span picked) and not yet stopped: a video that loads joins in. */
  private wantsPlay = false;
  private rate = 1;
  /** The streams set aside: their elements are gone, so nothing plays, seeks or syncs them. */
  private readonly failed = new Set<string>();
  /** The shortest gap measured between two frames shown one after the other (shift+arrow steps it). */
  frame = DEFAULT_FRAME_S;
  private shortestGap = Infinity;
  private lastFrameTime: number | null = null;

  constructor(
    main: string,
    /** The episode's length when no stream's range says it (before a preview). */
    private readonly duration: number,
  ) {
    this.state = { main, playing: false };
  }

  // --- what the views read ---

  get snapshot(): PlaybackState {
    return this.state;
  }
  get time(): number {
    return this.timeNow;
  }
  get length(): number {
    const range = this.rangeOf(this.state.main);
    return range ? range.end_s - range.start_s : this.duration;
  }
  get wanted(): boolean {
    return this.wantsPlay;
  }
  isSetAside(stream: string): boolean {
    return this.failed.has(stream);
  }

  onTime(listener: (time: number) => void): () => void {
    this.timeListeners.add(listener);
    return () => {
      this.timeListeners.delete(listener);
    };
  }
  onState(listener: () => void): () => void {
    this.stateListeners.add(listener);
    return () => {
      this.stateListeners.delete(listener);
    };
  }

  // --- what the views tell it ---

  /** A new preview (or none): its streams' ranges; every stream is tried afresh. */
  setStreams(ranges: StreamRange[]): void {
    this.ranges = ranges;
    this.failed.clear();
  }
  attach(stream: string, video: VideoLike): void {
    this.videos.set(stream, video);
  }
  detach(stream: string): void {
    this.videos.delete(stream);
  }

  /**
   * The playhead now: the main video's own time when there is one (animation frames may run
   * seldom in a hidden or throttled tab, so the last tick's reading can be stale), else the last known.
   */
  now(): number {
    const video = this.videos.get(this.state.main);
    const range = this.rangeOf(this.state.main);
    if (video && range && video.readyState > 0) this.timeNow = toEpisodeTime(range, video.currentTime);
    return this.timeNow;
  }

  /** Moves every stream to an episode time (clamped to the episode). */
  seek(episodeTime: number): void {
    const t = clamp(episodeTime, 0, this.length);
    this.setTime(t);
    this.each((video, range) => {
      video.currentTime = toFileTime(range, t);
    });
  }

  /** Before the preview's videos exist: where they will start. */
  startAt(episodeTime: number): void {
    this.setTime(episodeTime);
  }

  /** Playback is wanted: the videos play once they have loaded. */
  want(): void {
    this.wantsPlay = true;
  }

  play(): void {
    if (this.timeNow >= this.length - 0.05) this.seek(0);
    this.wantsPlay = true;
    this.setState({ playing: true });
    this.each((video) => {
      video.play().catch(() => undefined);
    });
  }

  pause(): void {
    this.wantsPlay = false;
    this.setState({ playing: false });
    this.each((video) => video.pause());
    this.setTime(this.now());
  }

  setRate(rate: number): void {
    this.rate = rate;
    this.each((video) => {
      video.playbackRate = rate;
    });
  }

  /** A stream's video has its metadata: it goes to the playhead, and the main one starts everyone if playback is wanted. */
  loaded(stream: string): void {
    const video = this.videos.get(stream);
    const range = this.rangeOf(stream);
    if (!video || !range) return;
    video.playbackRate = this.rate;
    video.currentTime = toFileTime(range, this.timeNow);
    if (this.wantsPlay) video.play().catch(() => undefined);
    if (this.wantsPlay && stream === this.state.main) this.setState({ playing: true });
  }

  /**
   * Stops at the episode's end: a file may go on with the next episode. Whatever ran past the end
   * (frames are checked only so often) is put back on the episode's last frame.
   */
  atEnd(): boolean {
    const video = this.videos.get(this.state.main);
    const range = this.rangeOf(this.state.main);
    if (!video || !range || !this.state.playing) return false;
    if (video.currentTime < range.end_s - 0.01 && !video.ended) return false;
    this.pause();
    this.each((v, r) => {
      v.currentTime = Math.max(r.start_s, r.end_s - 0.001);
    });
    this.setTime(this.length);
    return true;
  }

  /**
   * One tick of the clock (every animation frame while playing): the main video's time becomes the
   * playhead, and any other stream drifted further than DRIFT_S is moved to it. A stream still
   * seeking (a slow network) is left to arrive: moving it again every frame would restart its seek.
   */
  tick(): void {
    const video = this.videos.get(this.state.main);
    const range = this.rangeOf(this.state.main);
    // A main video without its metadata yet (just made the large one) has no time to give.
    if (!video || !range || video.readyState === 0) return;
    const t = toEpisodeTime(range, video.currentTime);
    this.setTime(t);
    if (this.atEnd()) return;
    for (const [stream, other] of this.videos) {
      const otherRange = this.rangeOf(stream);
      if (other === video || !otherRange) continue;
      if (!other.seeking && Math.abs(toEpisodeTime(otherRange, other.currentTime) - t) > DRIFT_S)
        other.currentTime = toFileTime(otherRange, t);
      if (other.paused) other.play().catch(() => undefined);
    }
  }

  /**
   * A frame of the main video was shown at `mediaTime`. The shortest gap between two frames shown
   * one after the other is a frame's length: a busy machine drops frames, which only lengthens a
   * gap, and a seek starts the measuring afresh (`seeked`: its jump is no frame's length).
   */
  frameShown(mediaTime: number): void {
    const gap = this.lastFrameTime === null ? 0 : mediaTime - this.lastFrameTime;
    if (gap > 0.001 && gap < 0.5 && gap < this.shortestGap) {
      this.shortestGap = gap;
      this.frame = gap;
    }
    this.lastFrameTime = mediaTime;
  }
  seeked(): void {
    this.lastFrameTime = null;
  }
  /** Another video's frames are measured (a new main stream): its own gaps decide. */
  measureAfresh(): void {
    this.lastFrameTime = null;
    this.shortestGap = Infinity;
  }

  /** One frame back or on (pausing first), by the measured length of a frame. */
  stepFrame(direction: -1 | 1): void {
    if (this.state.playing) this.pause();
    this.seek(this.now() + direction * this.frame);
  }

  /**
   * Makes a stream the large one, whose clock the others follow. If playback was wanted and the
   * stream is ready, it goes on from it (when the large one failed before it ever played).
   */
  showLarge(stream: string): void {
    this.setState({ main: stream });
    const video = this.videos.get(stream);
    if (this.wantsPlay && !this.state.playing && video && video.readyState > 0) {
      this.setState({ playing: true });
      video.play().catch(() => undefined);
    }
  }

  /**
   * A stream's video failed. A signed URL stops working after 15 minutes: within a minute of
   * `expiresAt`, every stream fails at once and one new preview is wanted for all of them. Otherwise
   * the file could not be fetched or this browser cannot play it: that stream alone is set aside,
   * and the others play on; if it was the large one, the next playable stream takes its place and
   * the clock. Null: already set aside, nothing to do.
   */
  fail(stream: string, expiresAt: number, nowMs: number): FailureOutcome {
    if (this.failed.has(stream)) return null;
    if (expiresAt - nowMs < 60_000) {
      const resume = this.state.playing;
      this.pause();
      this.wantsPlay = resume;
      return { kind: "renew", resume };
    }
    this.failed.add(stream);
    const reason = MEDIA_ERRORS[this.videos.get(stream)?.error?.code ?? 4] ?? MEDIA_ERRORS[4]!;
    let then = "The other streams play on without it.";
    if (stream === this.state.main) {
      const next = this.ranges.find((r) => !this.failed.has(r.stream));
      if (next) {
        then = `${next.stream} is shown large instead.`;
        this.showLarge(next.stream);
      } else {
        then = "No other stream of this episode can be played.";
        this.pause();
      }
    } else if (this.ranges.every((r) => this.failed.has(r.stream))) {
      then = "No other stream of this episode can be played.";
    }
    return { kind: "set-aside", failure: { reason, then } };
  }

  /** A set-aside stream is tried again: its video is made afresh and, once loaded, joins the others. */
  retry(stream: string): void {
    this.failed.delete(stream);
  }

  private rangeOf(stream: string): StreamRange | undefined {
    return this.ranges.find((r) => r.stream === stream);
  }

  private each(fn: (video: VideoLike, range: StreamRange) => void): void {
    for (const [stream, video] of this.videos) {
      const range = this.rangeOf(stream);
      if (range) fn(video, range);
    }
  }

  private setTime(time: number): void {
    this.timeNow = time;
    for (const listener of this.timeListeners) listener(time);
  }

  private setState(change: Partial<PlaybackState>): void {
    const next = { ...this.state, ...change };
    if (next.main === this.state.main && next.playing === this.state.playing) return;
    this.state = next;
    for (const listener of this.stateListeners) listener();
  }
}
