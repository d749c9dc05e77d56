import { describe, expect, it } from "vitest";
import { canonicalJson } from "@/lib/canonical-json";
import { canonicalEntryAsObject } from "@/lib/testing/chain-oracle";
import { canonicalEntry, type ChainedEntry } from "./chain";

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
];

describe("canonicalEntry", () => {
  it.each(variants)("gives the bytes of the entry's canonical JSON as an object for %s", (_, entry) => {
    expect(canonicalEntry(entry)).toBe(canonicalEntryAsObject(entry));
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
