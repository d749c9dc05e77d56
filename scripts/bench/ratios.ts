/**
 * Every ratio the benchmarks report: a figure of ours over its limit on this machine, both measured
 * in the same run. The machines this project runs on differ by up to three times in raw speed from
 * one day to the next, so an absolute figure says more about the machine than about the code; a
 * ratio to a limit measured beside it says whether the code got better or worse. Each benchmark
 * names its ratios in its JSON line by these keys; `bench:all` records them, flags one that is more
 * than RATIO_MARGIN_PERCENT worse than its record, and docs/benchmarks.md lists them first.
 */
export type Ratio = {
  benchmark: string;
  /** The key in the benchmark's JSON line. */
  key: string;
  /** What is divided by what. */
  measures: string;
  /** A rate over a rate should rise; a time over a time, or a cost over a cost, should fall. */
  better: "higher" | "lower";
  /** At least (higher) or at most (lower) this; null where no issue has set one. */
  target: number | null;
};

export const RATIO_MARGIN_PERCENT = 10;

export const RATIOS: readonly Ratio[] = [
  {
    benchmark: "bench:api",
    key: "page_cost_in_floors",
    measures: "server CPU per episode page ÷ per Next's own JSON 404 (its floor), slowest shape",
    better: "lower",
    target: 1.2,
  },
  {
    benchmark: "bench:api",
    key: "min_http_to_floor_ratio",
    measures: "episode pages/s ÷ Next's 404s/s, slowest shape",
    better: "higher",
    target: null,
  },
  {
    benchmark: "bench:api",
    key: "min_http_to_sql_ratio",
    measures: "episode pages/s over HTTP ÷ the page's statement/s as a raw postgres.js loop, slowest shape",
    better: "higher",
    target: null,
  },
  {
    benchmark: "bench:downloads",
    key: "download_10k_to_hmac_ratio",
    measures: "10,000-file download over HTTP, p50 ÷ the time of 10,000 raw SigV4 HMACs",
    better: "lower",
    target: 3,
  },
  {
    benchmark: "bench:downloads",
    key: "sign_to_hmac_ratio",
    measures: "URLs signed/s by the presigner ÷ raw SigV4 HMACs/s, one core",
    better: "higher",
    target: 0.4,
  },
  {
    benchmark: "bench:downloads",
    key: "appends_to_raw_commit_ratio",
    measures: "disclosure appends/s ÷ single-row INSERT + COMMIT/s (no chain), 16 connections",
    better: "higher",
    target: 0.5,
  },
  {
    benchmark: "bench:review",
    key: "export_to_copy_ratio",
    measures: "CSV export rows/s over HTTP ÷ COPY (select ...) TO STDOUT of the same rows",
    better: "higher",
    target: 0.5,
  },
  {
    benchmark: "bench:review",
    key: "verify_to_sha256_ratio",
    measures: "full verification entries/s ÷ raw SHA-256 of the same bytes, same threads",
    better: "higher",
    target: 0.5,
  },
  {
    benchmark: "bench:import",
    key: "upload_to_raw_ratio",
    measures: "import --upload MB/s ÷ a raw PutObject loop, same files and concurrency",
    better: "higher",
    target: 0.7,
  },
  {
    benchmark: "bench:pull",
    key: "pull_to_aria2c_ratio",
    measures: "das pull MB/s ÷ aria2c fetching the same signed URLs, same parallelism",
    better: "higher",
    target: 0.9,
  },
  {
    benchmark: "bench:pull",
    key: "pull_to_verified_aria2c_ratio",
    measures: "das pull MB/s ÷ aria2c checking each file's SHA-256 (as das pull does), same URLs and turns",
    better: "higher",
    target: null,
  },
  {
    benchmark: "bench:pull",
    key: "cli_start_to_node_ratio",
    measures: "das and das-admin --help, slower of the two ÷ `node -e 0`",
    better: "lower",
    target: null,
  },
  {
    benchmark: "bench:hub",
    key: "hub_snapshot_to_pull_ratio",
    measures: "whole-version snapshot_download time ÷ das pull of the same version (issue 39)",
    better: "lower",
    target: 1.1,
  },
  {
    benchmark: "bench:hub",
    key: "hub_zero_work_to_pull_ratio",
    measures: "the same snapshot_download against a Hub that does no work ÷ das pull: the client's own bound",
    better: "lower",
    target: null,
  },
  {
    benchmark: "bench:hub",
    key: "hub_snapshot_to_zero_work_ratio",
    measures: "snapshot_download from the service ÷ from the zero-work Hub, same rounds: the service's own share",
    better: "lower",
    target: null,
  },
  {
    benchmark: "bench:scaling",
    key: "pgbouncer_to_direct_ratio",
    measures: "appends/s through PgBouncer in transaction mode ÷ appends/s direct, 16 at a time (issue 36)",
    better: "higher",
    target: 0.9,
  },
  {
    benchmark: "bench:episode",
    key: "drawing_to_uplot_ratio",
    measures: "the episode page's plot, read to drawn ÷ uPlot drawing the same arrays alone",
    better: "lower",
    target: null,
  },
];

const byKey = new Map(RATIOS.map((r) => [r.key, r]));

export function ratioOf(key: string): Ratio | undefined {
  return byKey.get(key);
}

/** Whether a ratio meets its target (null when it has none, or was not measured). */
export function meetsTarget(ratio: Ratio, value: unknown): boolean | null {
  if (ratio.target === null || typeof value !== "number") return null;
  return ratio.better === "higher" ? value >= ratio.target : value <= ratio.target;
}

export function targetText(ratio: Ratio): string {
  if (ratio.target === null) return "";
  return `${ratio.better === "higher" ? ">=" : "<="} ${ratio.target}`;
}

type FiguresByBenchmark = Record<string, Record<string, unknown>>;

/**
 * Every ratio the benchmarks that ran reported, against its record and its target, as rows for a
 * table; `flagged` names those more than RATIO_MARGIN_PERCENT worse than recorded (an improvement
 * is never flagged, and a ratio without a record cannot be).
 */
export function compareRatios(
  now: FiguresByBenchmark,
  recorded: FiguresByBenchmark,
): { lines: Record<string, string>[]; flagged: string[] } {
  const lines: Record<string, string>[] = [];
  const flagged: string[] = [];
  for (const ratio of RATIOS) {
    const value = now[ratio.benchmark]?.[ratio.key];
    if (value === undefined) continue;
    const old = recorded[ratio.benchmark]?.[ratio.key];
    // Signed so that a positive change is better, whichever way the ratio should go.
    const change =
      typeof value === "number" && typeof old === "number" && old !== 0
        ? ((value - old) / Math.abs(old)) * 100 * (ratio.better === "higher" ? 1 : -1)
        : null;
    const worse = change !== null && change < -RATIO_MARGIN_PERCENT;
    if (worse) flagged.push(`${ratio.benchmark} ${ratio.key}`);
    const met = meetsTarget(ratio, value);
    lines.push({
      benchmark: ratio.benchmark,
      ratio: ratio.key,
      recorded: old === undefined ? "-" : String(old),
      now: String(value),
      change:
        change === null ? "" : `${change >= 0 ? "+" : ""}${change.toFixed(0)}% ${change >= 0 ? "better" : "worse"}`,
      target: targetText(ratio) + (met === null ? "" : met ? " met" : " NOT met"),
      flag: worse ? `FLAGGED: over ${RATIO_MARGIN_PERCENT}% worse than recorded` : "",
    });
  }
  return { lines, flagged };
}

/** A benchmark's ratios as rows of its table, first: what each divides, its value and its target. */
export function ratioRows(
  benchmark: string,
  figures: Record<string, unknown>,
): { measure: string; value: string; target: string }[] {
  return RATIOS.filter((r) => r.benchmark === benchmark && r.key in figures).map((r) => {
    const met = meetsTarget(r, figures[r.key]);
    return {
      measure: `${r.key}: ${r.measures}`,
      value: String(figures[r.key]),
      target: targetText(r) + (met === null ? "" : met ? " (met)" : " (NOT met)"),
    };
  });
}

const START = "<!-- ratios: written by bench:all --record -->";
const END = "<!-- ratios end -->";

/**
 * docs/benchmarks.md with its ratio table (between the two markers near its top) written from the
 * figures docs/benchmarks/latest.json records: every ratio, what it divides, its target and its
 * last recorded value.
 */
export function withRatioTable(
  document: string,
  recorded: {
    recorded_at: string;
    machine: { load_average_1m_at_start: number; hmac_limit_per_s: number | null };
    benchmarks: Record<string, { figures: Record<string, unknown> }>;
  },
): string {
  const from = document.indexOf(START);
  const to = document.indexOf(END);
  if (from === -1 || to < from)
    throw new Error(`docs/benchmarks.md has no ratio table between "${START}" and "${END}"`);
  const rows = RATIOS.map((ratio) => {
    const value = recorded.benchmarks[ratio.benchmark]?.figures[ratio.key];
    const met = meetsTarget(ratio, value);
    return {
      benchmark: ratio.benchmark,
      ratio: `\`${ratio.key}\``,
      "what it divides": ratio.measures,
      target: targetText(ratio).replace(">=", "≥").replace("<=", "≤") || "–",
      recorded: value === undefined ? "not yet measured" : String(value),
      met: met === null ? "" : met ? "yes" : "**no**",
    };
  });
  const when = `Recorded ${recorded.recorded_at.slice(0, 16).replace("T", " ")} UTC by \`npm run bench:all -- --record\` (load average ${recorded.machine.load_average_1m_at_start} at its start; raw HMAC loop ${recorded.machine.hmac_limit_per_s ?? "?"}/s):`;
  return `${document.slice(0, from + START.length)}\n${when}\n\n${markdownTable(rows)}\n${document.slice(to)}`;
}

function markdownTable(rows: Record<string, string>[]): string {
  const columns = Object.keys(rows[0] ?? {});
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]) => `| ${cells.map((v, i) => v.padEnd(widths[i]!)).join(" | ")} |`;
  return [
    line(columns),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map((r) => line(columns.map((c) => r[c]!))),
  ].join("\n");
}
