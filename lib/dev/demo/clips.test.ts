import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { videoDuration } from "@/lib/testing/lerobot-fixtures";
import { clipOfLength, DEMO_CLIPS, demoClip } from "./generate";

const dir = mkdtempSync(path.join(os.tmpdir(), "das-demo-clips-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the demo's clips cut to an episode's length", () => {
  it.each(DEMO_CLIPS)("%s plays for the whole seconds that cover the episode, as ffprobe reads it", async (name) => {
    for (const seconds of [8.37, 20, 77.9]) {
      const file = path.join(dir, `${name}-${seconds}.mp4`);
      writeFileSync(file, clipOfLength(demoClip(name), seconds));
      expect(await videoDuration(file)).toBeCloseTo(Math.ceil(seconds), 1);
    }
  });

  it("keeps the whole clip for an episode as long as it, and differs in bytes between lengths", () => {
    const clip = demoClip("bars-h264");
    expect(clipOfLength(clip, 80).length).toBeLessThanOrEqual(clip.length);
    expect(clipOfLength(clip, 12).equals(clipOfLength(clip, 13))).toBe(false);
    expect(clipOfLength(clip, 12.2).equals(clipOfLength(clip, 13))).toBe(true);
  });
});
