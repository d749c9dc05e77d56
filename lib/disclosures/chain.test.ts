import { describe, expect, it } from "vitest";
import { canonicalJson } from "@/lib/canonical-json";
import { canonicalEntryAsObject } from "@/lib/testing/chain-oracle";
import { canonicalEntry, entryHash, filesDigest, sha256Hex, type ChainedEntry } from "./chain";

// canonicalEntry writes its JSON key by key for speed: for every kind of entry, the bytes must be
// those of the entry's canonical JSON built as an object (lib/testing/chain-oracle.ts).

const base: ChainedEntry = {
  id: "dl_0123456789",
  seq: 42,
  occurredAt: new Date("2026-03-04T05:06:07.000Z"),
  organizationId: "org_a",
  apiKeyId: "key_b",
  userId: null,
  reviewerRole: null,
  channel: "api",
  datasetId: "kitchen-pick",
  version: "1.2.3",
  licenceId: "lic_c",
  requestedScope: { episode_ids: ["e-2", "e-1"], streams: ["cam"], filter: { outcome: "success" } },
  episodeCount: 2,
  fileCount: 3,
  totalBytes: 12_345_678_901,
  episodesSha256: "a".repeat(64),
  expiresAt: new Date("2026-03-04T05:21:07.000Z"),
  requestId: "req_x",
  prevHash: "b".repeat(64),
};

const variants: [string, ChainedEntry][] = [
  ["an API download", base],
  ["a portal download by a user", { ...base, apiKeyId: null, userId: "usr_d", channel: "portal" }],
  [
    "a reviewer's preview (version 2)",
    {
      ...base,
      organizationId: null,
      licenceId: null,
      apiKeyId: null,
      userId: "usr_e",
      reviewerRole: "reviewer",
      channel: "preview",
    },
  ],
  [
    "a whole version with files",
    { ...base, requestedScope: { include_version_files: true }, episodeCount: 0, totalBytes: 0 },
  ],
  [
    "text that JSON must escape",
    { ...base, requestId: 'req "quoted" \\ back\nline \u2028 é 😀', datasetId: "ds\u0000x" },
  ],
  ["an empty scope", { ...base, requestedScope: {} }],
  ["an entry naming its licence's terms (version 3)", { ...base, termsSha256: "c".repeat(64) }],
  ["an entry naming a licence without terms (version 3)", { ...base, termsSha256: null }],
  [
    "an entry naming the per-licence copies it delivered (version 4)",
    { ...base, termsSha256: null, filesSha256: "e".repeat(64) },
  ],
];

describe("canonicalEntry", () => {
  it.each(variants)("gives the bytes of the entry's canonical JSON as an object for %s", (_, entry) => {
    expect(canonicalEntry(entry)).toBe(canonicalEntryAsObject(entry));
  });
});

describe("the hash input's versions", () => {
  const reviewed: ChainedEntry = {
    ...base,
    organizationId: null,
    licenceId: null,
    apiKeyId: null,
    userId: "usr_e",
    reviewerRole: "reviewer",
    channel: "preview",
  };

  it("hashes an entry that names no terms exactly as before migration 0017 (hashes computed then)", () => {
    expect(entryHash(base)).toBe("81df68ed7222257be0ffeb56b3276fd0a696d6ef134725152d0adbbf28ebad87");
    expect(entryHash(reviewed)).toBe("7a4d2bfe7a401fc2f32b848ad5fdbb98710c5635795e764eecf4b858fb00d808");
    expect(JSON.parse(canonicalEntry(base))).not.toHaveProperty("terms_sha256");
  });

  it("writes version 3 with the terms' SHA-256, or null, when the entry names them", () => {
    const withTerms = { ...base, termsSha256: "c".repeat(64) };
    const withoutTerms = { ...base, termsSha256: null };
    expect(JSON.parse(canonicalEntry(withTerms))).toMatchObject({ v: 3, terms_sha256: "c".repeat(64) });
    expect(JSON.parse(canonicalEntry(withoutTerms))).toMatchObject({ v: 3, terms_sha256: null });
    // Naming no terms, naming "none" and naming a document are three different assertions.
    const hashes = new Set([entryHash(base), entryHash(withTerms), entryHash(withoutTerms)]);
    expect(hashes.size).toBe(3);
    expect(entryHash({ ...base, termsSha256: "d".repeat(64) })).not.toBe(entryHash(withTerms));
  });

  it("writes version 4 with the delivered copies' digest, and hashes entries without one as before", () => {
    const withTerms = { ...base, termsSha256: "c".repeat(64) };
    const withFiles = { ...withTerms, filesSha256: filesDigest([{ path: "data/a.parquet", sha256: "f".repeat(64) }]) };
    expect(JSON.parse(canonicalEntry(withFiles))).toMatchObject({
      v: 4,
      resolved: { files_sha256: withFiles.filesSha256 },
    });
    expect(JSON.parse(canonicalEntry(withTerms)).resolved).not.toHaveProperty("files_sha256");
    expect(entryHash(withFiles)).not.toBe(entryHash(withTerms));
    const other = filesDigest([{ path: "data/a.parquet", sha256: "0".repeat(64) }]);
    expect(entryHash({ ...withFiles, filesSha256: other })).not.toBe(entryHash(withFiles));
  });
});

describe("filesDigest", () => {
  it("is the same whatever order the files come in, and changes with any path or sha256", () => {
    const a = { path: "b/x.mp4", sha256: "1".repeat(64) };
    const b = { path: "a/y.parquet", sha256: "2".repeat(64) };
    expect(filesDigest([a, b])).toBe(filesDigest([b, a]));
    expect(filesDigest([a, b])).toBe(sha256Hex(`a/y.parquet\t${"2".repeat(64)}\nb/x.mp4\t${"1".repeat(64)}`));
    expect(filesDigest([a, { ...b, sha256: "3".repeat(64) }])).not.toBe(filesDigest([a, b]));
  });
});

describe("canonicalJson of lists", () => {
  it("serialises a list of plain values as it serialises each value, and a list with objects with sorted keys", () => {
    const plain = ["b", "a", 1, 2.5, null, true, false, 'q"uote', "\u2028"];
    expect(canonicalJson(plain)).toBe(`[${plain.map((v) => JSON.stringify(v)).join(",")}]`);
    expect(canonicalJson([{ b: 1, a: 2 }, "x"])).toBe('[{"a":2,"b":1},"x"]');
    expect(canonicalJson({ z: [1, { y: 2, x: [3] }], a: [] })).toBe('{"a":[],"z":[1,{"x":[3],"y":2}]}');
  });
});
