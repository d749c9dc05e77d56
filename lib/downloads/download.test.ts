import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { FileRecord } from "@/lib/catalog/get-manifest";
import { objectKey } from "@/lib/storage/config";
import { issuedDownload, signDownload, signFiles } from "./download";

// A download's JSON is written from its signed URLs while its entry is appended, not by
// JSON.stringify of the document afterwards: it must be byte for byte what JSON.stringify writes,
// whatever the paths hold (quotes, backslashes, control characters, any script, astral planes).

const segment = fc.string({ unit: "binary", minLength: 1, maxLength: 12 }).filter((s) => s !== "." && s !== "..");
const record = fc.record({
  path: fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join("/")),
  episode_id: fc.option(fc.string({ unit: "binary", maxLength: 8 }), { nil: null }),
  episode_ids: fc.array(fc.string({ unit: "binary", maxLength: 8 }), { maxLength: 3 }),
  stream: fc.option(fc.string({ unit: "binary", maxLength: 8 }), { nil: null }),
  size_bytes: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
  sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
  media_type: fc.constant("video/mp4"),
});
const withKey = (records: readonly FileRecord[]) =>
  records.map((r) => Object.assign({}, r, { objectKey: objectKey("ds-odd", "1.0.0", r.path) }));

const issued = {
  id: "dl_01JTEST",
  datasetId: "ds-odd",
  version: "1.0.0",
  issuedAt: new Date("2026-12-03T04:30:00Z"),
  expiresAt: new Date("2026-12-03T04:45:00Z"),
};

describe("a download's JSON", () => {
  it("is JSON.stringify of its document, byte for byte, for any paths", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { maxLength: 30 }),
        fc.array(fc.string({ unit: "binary" }), { maxLength: 3 }),
        async (records, coDelivered) => {
          const made = await signDownload(issued, withKey(records), coDelivered);
          expect(Buffer.from(made.json).toString()).toBe(JSON.stringify(made.download));
          expect(made.download.files.map((f) => f.path)).toEqual(records.map((r) => r.path));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("writes its files in slices, and the licence's copies with their own sizes and digests", async () => {
    // More files than one slice; the copies differ from the resolved records in size and digest only.
    const records: FileRecord[] = Array.from({ length: 2500 }, (_, i) => ({
      path: `episode_${String(i).padStart(6, "0")}/cam "left".mp4`,
      episode_id: `ep_${i}`,
      episode_ids: [`ep_${i}`],
      stream: "cam",
      size_bytes: 1000 + i,
      sha256: "a".repeat(64),
      media_type: "video/mp4",
    }));
    const copies = withKey(records).map((r, i) =>
      Object.assign({}, r, { size_bytes: 2000 + i, sha256: "b".repeat(64) }),
    );
    const signed = await signFiles(issued.issuedAt, copies, records);
    expect(signed.json.length).toBe(3);
    const made = issuedDownload(issued, signed, []);
    const document = JSON.parse(Buffer.from(made.json).toString());
    expect(document).toEqual(made.download);
    expect(document.total_bytes).toBe(copies.reduce((sum, c) => sum + c.size_bytes, 0));
    expect(document.files[2499]).toMatchObject({ size_bytes: 4499, sha256: "b".repeat(64) });
    // Written again for the same records (kept by the cache), the same bytes.
    const again = issuedDownload(issued, await signFiles(issued.issuedAt, copies, records), []);
    expect(Buffer.compare(again.json, made.json)).toBe(0);
    // URLs signed for another second are never answered as this download's.
    const otherSecond = await signFiles(new Date(issued.issuedAt.getTime() + 1000), copies, records);
    expect(() => issuedDownload(issued, otherSecond, [])).toThrow(/signed at/);
  });
});
