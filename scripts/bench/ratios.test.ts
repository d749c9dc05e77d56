import { describe, expect, it } from "vitest";
import { compareRatios, meetsTarget, RATIOS, ratioOf, withRatioTable } from "./ratios";

describe("the benchmarks' ratios", () => {
  it("flags a ratio more than 10% worse than recorded, whichever way it should go, and nothing else", () => {
    const { flagged, lines } = compareRatios(
      {
        "bench:downloads": {
          appends_to_raw_commit_ratio: 0.44, // higher is better: 12% worse than 0.5
          sign_to_hmac_ratio: 0.73, // 9% worse than 0.8: within the margin
          download_10k_to_hmac_ratio: 3.4, // lower is better: 13% worse than 3.0
        },
        "bench:api": { page_cost_in_floors: 1.0 }, // lower is better: 17% better than 1.2
        "bench:pull": { pull_to_aria2c_ratio: 0.5 }, // never recorded: nothing to compare
      },
      {
        "bench:downloads": { appends_to_raw_commit_ratio: 0.5, sign_to_hmac_ratio: 0.8, download_10k_to_hmac_ratio: 3 },
        "bench:api": { page_cost_in_floors: 1.2 },
      },
    );
    expect(flagged.sort()).toEqual([
      "bench:downloads appends_to_raw_commit_ratio",
      "bench:downloads download_10k_to_hmac_ratio",
    ]);
    const line = (key: string) => lines.find((l) => l.ratio === key)!;
    expect(line("page_cost_in_floors").change).toBe("+17% better");
    expect(line("sign_to_hmac_ratio").flag).toBe("");
    expect(line("pull_to_aria2c_ratio")).toMatchObject({ recorded: "-", change: "", flag: "" });
    expect(line("download_10k_to_hmac_ratio").target).toBe("<= 3 NOT met");
  });

  it("names every key the issue asks for, each once, with the direction its division implies", () => {
    const keys = RATIOS.map((r) => r.key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const key of [
      "download_10k_to_hmac_ratio",
      "appends_to_raw_commit_ratio",
      "export_to_copy_ratio",
      "verify_to_sha256_ratio",
      "pull_to_aria2c_ratio",
      "page_cost_in_floors",
    ])
      expect(keys).toContain(key);
    expect(ratioOf("download_10k_to_hmac_ratio")!.better).toBe("lower");
    expect(meetsTarget(ratioOf("export_to_copy_ratio")!, 0.5)).toBe(true);
    expect(meetsTarget(ratioOf("export_to_copy_ratio")!, 0.49)).toBe(false);
  });

  it("writes the table between its markers and nothing else of the document", () => {
    const document = "# B\n\n<!-- ratios: written by bench:all --record -->\nold\n<!-- ratios end -->\n\n## Rest\n";
    const written = withRatioTable(document, {
      recorded_at: "2026-12-02T01:00:00.000Z",
      machine: { load_average_1m_at_start: 0.4, hmac_limit_per_s: 300000 },
      benchmarks: { "bench:pull": { figures: { pull_to_aria2c_ratio: 0.95 } } },
    });
    expect(
      written.startsWith("# B\n\n<!-- ratios: written by bench:all --record -->\nRecorded 2026-12-02 01:00 UTC"),
    ).toBe(true);
    expect(written.endsWith("<!-- ratios end -->\n\n## Rest\n")).toBe(true);
    expect(written).not.toContain("old");
    expect(written).toMatch(/\\| bench:pull +\\| `pull_to_aria2c_ratio` +\\|.*\\| ≥ 0.9 +\\| 0.95 +\\| yes +\\|/);
    expect(() =>
      withRatioTable("# no markers", {
        recorded_at: "",
        machine: { load_average_1m_at_start: 0, hmac_limit_per_s: null },
        benchmarks: {},
      }),
    ).toThrow(/no ratio table/);
  });
});
