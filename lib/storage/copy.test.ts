import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { getObjectBytes, putObject, s3Client } from "./client";
import { copyRanges, MAX_PART_BYTES, MIN_PART_BYTES, putCopyWithSuffix } from "./copy";
import { storeLocation } from "./config";
import { uniqueId } from "../testing/fixtures";

// The local store (s3rver) takes UploadPartCopy with ranges, as S3 does; it does not enforce S3's
// 5 MiB minimum part, so the rule that an original below it is never a part is held by copyRanges.

const client = s3Client(storeLocation());
const { bucket } = storeLocation();
afterAll(() => client.destroy());

describe("copyRanges", () => {
  it("copies nothing below S3's smallest part, and parts of at most 5 GiB, each at least 5 MiB, above it", () => {
    expect(copyRanges(MIN_PART_BYTES - 1)).toEqual([]);
    expect(copyRanges(MIN_PART_BYTES)).toEqual([{ first: 0, last: MIN_PART_BYTES - 1 }]);
    for (const size of [MAX_PART_BYTES, MAX_PART_BYTES + 1, 12 * 1024 ** 3, 5 * 1024 ** 4]) {
      const ranges = copyRanges(size);
      expect(ranges[0]!.first).toBe(0);
      expect(ranges.at(-1)!.last).toBe(size - 1);
      expect(ranges.length).toBeLessThan(10_000);
      for (const [i, r] of ranges.entries()) {
        if (i) expect(r.first).toBe(ranges[i - 1]!.last + 1);
        expect(r.last - r.first + 1).toBeLessThanOrEqual(MAX_PART_BYTES);
        expect(r.last - r.first + 1).toBeGreaterThanOrEqual(MIN_PART_BYTES);
      }
    }
  });
});

describe("putCopyWithSuffix", () => {
  it("has the store assemble a copy of an original of 5 MiB or more, and its first bytes are the original's", async () => {
    const original = randomBytes(MIN_PART_BYTES + 123);
    const source = `${uniqueId("copy-test")}/video.mp4`;
    await putObject(client, bucket, source, original);
    const suffix = randomBytes(48);
    const target = `${uniqueId("copy-test")}/video.mp4`;
    const made = await putCopyWithSuffix(client, bucket, source, target, original.length, suffix, "video/mp4");
    expect(made.assembledByStore).toBe(true);
    expect((await getObjectBytes(client, bucket, target)).equals(Buffer.concat([original, suffix]))).toBe(true);
  });

  it("writes a small original's copy in one PUT, keeping as many of its bytes as asked", async () => {
    const original = Buffer.from('{"a": 1}\n');
    const source = `${uniqueId("copy-test")}/info.json`;
    await putObject(client, bucket, source, original);
    const target = `${uniqueId("copy-test")}/info.json`;
    const made = await putCopyWithSuffix(client, bucket, source, target, original.length - 1, Buffer.from(" \t\n"));
    expect(made.assembledByStore).toBe(false);
    expect((await getObjectBytes(client, bucket, target)).toString()).toBe('{"a": 1} \t\n');
  });
});
