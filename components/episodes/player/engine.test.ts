import { describe, expect, it } from "vitest";
import { DEFAULT_FRAME_S, DRIFT_S, MEDIA_ERRORS, PlaybackEngine, type StreamRange, type VideoLike } from "./engine";

/**
 * A stand-in video element: the parts of HTMLVideoElement the engine uses, with a clock the test
 * moves by hand. `play()` resolves (or rejects, as a browser that refuses autoplay does).
 */
class StandInVideo implements VideoLike {
  currentTime = 0;
  playbackRate = 1;
  readyState = 0;
  paused = true;
  seeking = false;
  ended = false;
  error: { code: number } | null = null;
  plays = 0;
  refusePlay = false;
  seeks: number[] = [];
  constructor() {
    // Every write of currentTime is a seek: recorded, so a test can say none happened.
    let time = 0;
    Object.defineProperty(this, "currentTime", {
      get: () => time,
      set: (value: number) => {
        time = value;
        this.seeks.push(value);
      },
    });
  }
  play(): Promise<void> {
    this.plays += 1;
    if (this.refusePlay) return Promise.reject(new Error("NotAllowedError"));
    this.paused = false;
    return Promise.resolve();
  }
  pause(): void {
    this.paused = true;
  }
  /** The browser's clock moved on by itself, without a seek. */
  advance(seconds: number): void {
    const seeks = this.seeks.length;
    this.currentTime += seconds;
    this.seeks.length = seeks;
  }
}

// A v3.0 file holds the episode from 120 s to 130 s; the other stream is a file of its own.
const ranges: StreamRange[] = [
  { stream: "front", start_s: 120, end_s: 130 },
  { stream: "wrist", start_s: 0, end_s: 10 },
];

function loadedEngine() {
  const engine = new PlaybackEngine("front", 10);
  const front = new StandInVideo();
  const wrist = new StandInVideo();
  engine.setStreams(ranges);
  engine.attach("front", front);
  engine.attach("wrist", wrist);
  front.readyState = wrist.readyState = 1;
  return { engine, front, wrist };
}

describe("the playback engine", () => {
  it("starts every stream at the playhead in its own file's time once loaded, and plays when playback was wanted", () => {
    const { engine, front, wrist } = loadedEngine();
    engine.startAt(4);
    engine.want();
    engine.loaded("wrist");
    expect(wrist.currentTime).toBe(4);
    expect(wrist.paused).toBe(false);
    expect(engine.snapshot.playing).toBe(false); // the main one decides
    engine.loaded("front");
    expect(front.currentTime).toBe(124);
    expect(engine.snapshot.playing).toBe(true);
  });

  it("follows the main video's clock and moves a drifted stream to it, but not one within the margin or still seeking", () => {
    const { engine, front, wrist } = loadedEngine();
    engine.want();
    engine.loaded("front");
    engine.loaded("wrist");
    const heard: number[] = [];
    engine.onTime((t) => heard.push(t));
    front.advance(2);
    wrist.advance(2 + DRIFT_S / 2);
    wrist.seeks.length = 0;
    engine.tick();
    expect(engine.time).toBeCloseTo(2);
    expect(heard.at(-1)).toBeCloseTo(2);
    expect(wrist.seeks).toEqual([]);
    wrist.advance(1); // now a second ahead
    wrist.seeking = true;
    engine.tick();
    expect(wrist.seeks).toEqual([]);
    wrist.seeking = false;
    engine.tick();
    expect(wrist.seeks).toEqual([2]);
  });

  it("restarts a follower that paused by itself (a stall) while the main one plays", () => {
    const { engine, front, wrist } = loadedEngine();
    engine.play();
    wrist.pause();
    const before = wrist.plays;
    front.advance(0.5);
    engine.tick();
    expect(wrist.plays).toBe(before + 1);
  });

  it("stops at the episode's end even when the file goes on with the next episode, and puts every stream on the last frame", () => {
    const { engine, front, wrist } = loadedEngine();
    engine.play();
    front.advance(130.2); // ran past 130, into the next episode of the file
    engine.tick();
    expect(engine.snapshot.playing).toBe(false);
    expect(engine.time).toBe(10);
    expect(front.currentTime).toBeCloseTo(129.999);
    expect(wrist.currentTime).toBeCloseTo(9.999);
    expect(front.paused && wrist.paused).toBe(true);
    // Play again at the end starts from the beginning.
    engine.play();
    expect(front.currentTime).toBe(120);
  });

  it("clamps seeks to the episode and maps them into each file", () => {
    const { engine, front, wrist } = loadedEngine();
    engine.seek(-3);
    expect([engine.time, front.currentTime, wrist.currentTime]).toEqual([0, 120, 0]);
    engine.seek(99);
    expect([engine.time, front.currentTime, wrist.currentTime]).toEqual([10, 130, 10]);
  });

  it("steps a frame by the shortest gap measured between shown frames, measuring afresh after a seek", () => {
    const { engine, front } = loadedEngine();
    expect(engine.frame).toBe(DEFAULT_FRAME_S);
    // 10 frames a second, one frame dropped by a busy machine (a gap of 0.2), and a seek's jump.
    for (const t of [120, 120.1, 120.3]) engine.frameShown(t);
    engine.seeked();
    engine.frameShown(125);
    engine.frameShown(125.1);
    expect(engine.frame).toBeCloseTo(0.1);
    engine.seek(5);
    engine.play();
    engine.stepFrame(1);
    expect(engine.snapshot.playing).toBe(false);
    expect(engine.time).toBeCloseTo(5.1);
    expect(front.currentTime).toBeCloseTo(125.1);
    engine.stepFrame(-1);
    engine.stepFrame(-1);
    expect(engine.time).toBeCloseTo(4.9);
  });

  it("sets a failed follower aside with its reason while the main one plays on", () => {
    const { engine, wrist } = loadedEngine();
    engine.play();
    wrist.error = { code: 3 };
    const outcome = engine.fail("wrist", Date.now() + 10 * 60_000, Date.now());
    expect(outcome).toEqual({
      kind: "set-aside",
      failure: { reason: MEDIA_ERRORS[3], then: "The other streams play on without it." },
    });
    expect(engine.isSetAside("wrist")).toBe(true);
    expect(engine.snapshot).toEqual({ main: "front", playing: true });
    // A second error event of the same stream changes nothing.
    expect(engine.fail("wrist", Date.now() + 10 * 60_000, Date.now())).toBeNull();
    engine.retry("wrist");
    expect(engine.isSetAside("wrist")).toBe(false);
  });

  it("hands the clock to the next playable stream when the main one fails, and stops when none is left", () => {
    const { engine, wrist } = loadedEngine();
    engine.play();
    const later = Date.now() + 10 * 60_000;
    const outcome = engine.fail("front", later, Date.now());
    expect(outcome?.kind === "set-aside" && outcome.failure.then).toBe("wrist is shown large instead.");
    expect(engine.snapshot).toEqual({ main: "wrist", playing: true });
    engine.detach("front");
    wrist.advance(3);
    engine.tick();
    expect(engine.time).toBeCloseTo(3);
    const last = engine.fail("wrist", later, Date.now());
    expect(last?.kind === "set-aside" && last.failure.then).toBe("No other stream of this episode can be played.");
    expect(engine.snapshot.playing).toBe(false);
    expect(wrist.paused).toBe(true);
  });

  it("asks for a new preview when the URLs are about to run out, resuming only what was playing", () => {
    const { engine } = loadedEngine();
    engine.play();
    const soon = Date.now() + 30_000;
    expect(engine.fail("front", soon, Date.now())).toEqual({ kind: "renew", resume: true });
    expect(engine.snapshot.playing).toBe(false);
    expect(engine.wanted).toBe(true);
    expect(engine.isSetAside("front")).toBe(false);
    engine.pause();
    expect(engine.fail("wrist", soon, Date.now())).toEqual({ kind: "renew", resume: false });
    expect(engine.wanted).toBe(false);
  });

  it("gives a large stream that was made large before it played the clock once it is ready", () => {
    const { engine, wrist } = loadedEngine();
    engine.want();
    wrist.readyState = 0;
    engine.showLarge("wrist");
    expect(engine.snapshot.playing).toBe(false);
    wrist.readyState = 1;
    engine.showLarge("wrist");
    expect(engine.snapshot).toEqual({ main: "wrist", playing: true });
    expect(wrist.paused).toBe(false);
  });

  it("survives a browser that refuses to play (autoplay rules) without an unhandled rejection", async () => {
    const { engine, front, wrist } = loadedEngine();
    front.refusePlay = wrist.refusePlay = true;
    engine.play();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(front.plays + wrist.plays).toBe(2);
  });

  it("tells state listeners only of real changes, and applies the speed to every stream and to late ones", () => {
    const { engine, front, wrist } = loadedEngine();
    let changes = 0;
    engine.onState(() => changes++);
    engine.play();
    engine.play();
    expect(changes).toBe(1);
    engine.setRate(1.5);
    expect([front.playbackRate, wrist.playbackRate]).toEqual([1.5, 1.5]);
    const late = new StandInVideo();
    late.readyState = 1;
    engine.setStreams([...ranges, { stream: "top", start_s: 0, end_s: 10 }]);
    engine.attach("top", late);
    engine.loaded("top");
    expect(late.playbackRate).toBe(1.5);
  });
});
