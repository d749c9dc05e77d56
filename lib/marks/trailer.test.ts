import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ResumableSha256, sha256After } from "./sha256";
import { BOX_BYTES, boxTrailer, trailerKind, trailerOf, trailerToken, whitespaceToken } from "./trailer";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("a SHA-256 that keeps its state", () => {
  it("gives node:crypto's digest of the original plus a suffix, from the original's kept state, at every length", () => {
    for (const size of [0, 1, 55, 56, 63, 64, 65, 127, 128, 1000, 4097, 65_536 + 3]) {
      const original = randomBytes(size);
      const suffix = randomBytes(48);
      // Fed in uneven pieces, as a stream from the store arrives.
      const hash = new ResumableSha256();
      for (let at = 0; at < size; at += 1000 + (at % 7)) hash.update(original.subarray(at, at + 1000 + (at % 7)));
      expect(hash.digest()).toBe(sha(original));
      expect(sha256After(hash.state(), suffix)).toBe(sha(Buffer.concat([original, suffix])));
      // Through JSON, as original_file_states keeps it.
      expect(sha256After(JSON.parse(JSON.stringify(hash.state())), suffix)).toBe(
        sha(Buffer.concat([original, suffix])),
      );
    }
  });
});

describe("trailers", () => {
  const token = Buffer.from("00112233445566778899aabbccddeeff", "hex");

  it("end a video with a box of our own that carries the token", () => {
    const box = boxTrailer(token);
    expect(box.length).toBe(BOX_BYTES);
    expect(Buffer.from(box).readUInt32BE(0)).toBe(BOX_BYTES);
    expect(Buffer.from(box).toString("latin1", 4, 8)).toBe("uuid");
    const video = Buffer.concat([randomBytes(1000), box]);
    expect(trailerToken(video)?.equals(token)).toBe(true);
    expect(trailerToken(randomBytes(1000))).toBeNull();
  });

  it("leave JSON and JSON Lines readable, the token in whitespace before the final line break", () => {
    expect(trailerKind("meta/info.json", "application/octet-stream")).toBe("text");
    expect(trailerKind("meta/episodes.jsonl", "application/octet-stream")).toBe("text");
    expect(trailerKind("videos/a.mp4", "video/mp4")).toBe("box");
    for (const text of ['{"a": 1}\n', '{"a": 1}', '{"a": 1}\n{"b": 2}\n']) {
      const original = Buffer.from(text);
      const { keep, suffix } = trailerOf("text", token, original.length, original.at(-1)!);
      const copy = Buffer.concat([original.subarray(0, keep), suffix]);
      expect(copy.toString().endsWith("\n")).toBe(text.endsWith("\n"));
      const lines = copy
        .toString()
        .split("\n")
        .filter((l) => l !== "");
      expect(lines.map((l) => JSON.parse(l))).toEqual(
        text
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l)),
      );
      expect(trailerToken(copy)?.equals(token)).toBe(true);
    }
    expect(whitespaceToken(token)).toMatch(/^[ \t]{128}$/);
  });
});
