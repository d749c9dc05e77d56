import type { FloatColumn, FrameCells } from "./cells";
import { cellWord, columnWord, isChosen, rowWords, upward, type MarkKey } from "./key";
import { markable32, markable64, steps32, steps64 } from "./ulp";

/**
 * Which licence's mark a changed frame table carries, by comparing it with the original.
 *
 * Each cell the leak holds is found in the original by its episode and frame index (or, when
 * those were renumbered, by matching each episode's values), and its difference counted in float
 * steps of the original's type. A cell moved by the mark differs by one step; whatever else
 * changed it (a CSV's rounding, noise) moves it by a sign that has nothing to do with any key.
 * The evidence is the moved cells (at most MAX_EVIDENCE of them).
 *
 * A licence is tested by a sign test on the moved cells its key chooses: under the hypothesis that
 * the file did not come from it, each such cell moved up or down independently of its key's
 * direction, so the number that moved its way is Binomial(n, 1/2), and the p-value is that tail.
 * Each p-value is multiplied by the number of licences tested (Bonferroni), so a file from none of
 * them names one below alpha with probability at most alpha. Once the strongest licence is named,
 * the cells its key chooses are explained and leave the pool, and the others are tested on what is
 * left: a file from one licence leaves nothing for another (p = 1), and a file averaged from several
 * licences' copies names each of them in turn.
 */

/** Moves further than this many steps are not the mark's (the cell was changed by something else). */
export const STEP_LIMIT = 64;
/** Moved cells kept as evidence: 2^16 decide a leak far beyond any p-value worth printing. */
export const MAX_EVIDENCE = 65_536;
/** Named when its Bonferroni-adjusted p-value is below this. */
export const DEFAULT_ALPHA = 1e-6;

export type Comparison = {
  /** Markable cells of the original that the leak holds (in the columns both have). */
  compared: number;
  unchanged: number;
  /** Within STEP_LIMIT and not equal: the evidence. */
  moved: number;
  /** Further than STEP_LIMIT. */
  far: number;
  leakedRows: number;
  /** Leaked rows found in the original. */
  matchedRows: number;
  /** How the rows were matched: by their indices, or by their values (renumbered episodes). */
  alignment: "indices" | "values";
  columns: string[];
  evidence: Evidence;
};

/** The moved cells: each cell's original row (by index into `episodes`/`frames`), column, element and direction. */
export type Evidence = {
  episodes: Float64Array;
  frames: Float64Array;
  row: Int32Array;
  column: Uint16Array;
  element: Int32Array;
  up: Uint8Array;
};

type RowIndex = { key: (e: number, f: number) => number; rows: Map<number, number> };

function rowIndex(cells: FrameCells): RowIndex {
  const key = (e: number, f: number) => e * 2 ** 26 + f;
  const rows = new Map<number, number>();
  for (let r = 0; r < cells.rows; r++) {
    const e = cells.episodes[r]!;
    const f = cells.frames[r]!;
    if (Number.isNaN(e) || Number.isNaN(f) || f >= 2 ** 26) continue;
    rows.set(key(e, f), r);
  }
  return { key, rows };
}

/** Per row, where its values start in a column (values are in row order). */
function rowStarts(column: FloatColumn, rows: number): Int32Array {
  const starts = new Int32Array(rows + 1).fill(-1);
  for (let i = column.values.length - 1; i >= 0; i--) starts[column.rows[i]!] = i;
  starts[rows] = column.values.length;
  for (let r = rows - 1; r >= 0; r--) if (starts[r] === -1) starts[r] = starts[r + 1]!;
  return starts;
}

export function compareCells(original: FrameCells, leaked: FrameCells): Comparison {
  const index = rowIndex(original);
  const byIndices = compareWith(original, leaked, index, null);
  if (byIndices.compared > 0 && (byIndices.unchanged + byIndices.moved) / byIndices.compared >= 0.5) return byIndices;
  const mapping = alignEpisodes(original, leaked, index);
  if (!mapping) return byIndices;
  const byValues = compareWith(original, leaked, index, mapping);
  return byValues.unchanged + byValues.moved > byIndices.unchanged + byIndices.moved ? byValues : byIndices;
}

function compareWith(
  original: FrameCells,
  leaked: FrameCells,
  index: RowIndex,
  episodeMap: Map<number, number> | null,
): Comparison {
  const columns = [...leaked.columns.keys()].filter((name) => original.columns.has(name));
  const leakedToOriginal = new Int32Array(leaked.rows).fill(-1);
  let matchedRows = 0;
  for (let r = 0; r < leaked.rows; r++) {
    let e = leaked.episodes[r]!;
    if (episodeMap) e = episodeMap.get(e) ?? Number.NaN;
    const found = index.rows.get(index.key(e, leaked.frames[r]!));
    if (found !== undefined) {
      leakedToOriginal[r] = found;
      matchedRows++;
    }
  }
  const out: Comparison = {
    compared: 0,
    unchanged: 0,
    moved: 0,
    far: 0,
    leakedRows: leaked.rows,
    matchedRows,
    alignment: episodeMap ? "values" : "indices",
    columns,
    evidence: emptyEvidence(),
  };
  const moved: { row: number; column: number; element: number; up: boolean }[] = [];
  for (const [c, name] of columns.entries()) {
    const o = original.columns.get(name)!;
    const l = leaked.columns.get(name)!;
    const starts = rowStarts(o, original.rows);
    for (let i = 0; i < l.values.length; i++) {
      const r = leakedToOriginal[l.rows[i]!]!;
      if (r < 0) continue;
      const element = l.elements[i]!;
      let at = starts[r]! + element;
      if (at >= starts[r + 1]! || o.elements[at] !== element) {
        at = -1;
        for (let k = starts[r]!; k < starts[r + 1]!; k++) if (o.elements[k] === element) at = k;
        if (at < 0) continue;
      }
      const value = o.values[at]!;
      if (!(o.float32 ? markable32(value) : markable64(value))) continue;
      out.compared++;
      const d = o.float32 ? steps32(value, l.values[i]!, STEP_LIMIT) : steps64(value, l.values[i]!, STEP_LIMIT);
      if (d === null) out.far++;
      else if (d === 0) out.unchanged++;
      else {
        out.moved++;
        moved.push({ row: r, column: c, element, up: d > 0 });
      }
    }
  }
  out.evidence = evidenceOf(original, sample(moved, MAX_EVIDENCE));
  return out;
}

/** Every n-th, so that the sample spreads over the whole file. */
function sample<T>(items: T[], most: number): T[] {
  if (items.length <= most) return items;
  const stride = items.length / most;
  return Array.from({ length: most }, (_, i) => items[Math.floor(i * stride)]!);
}

function emptyEvidence(): Evidence {
  return {
    episodes: new Float64Array(0),
    frames: new Float64Array(0),
    row: new Int32Array(0),
    column: new Uint16Array(0),
    element: new Int32Array(0),
    up: new Uint8Array(0),
  };
}

function evidenceOf(
  original: FrameCells,
  moved: { row: number; column: number; element: number; up: boolean }[],
): Evidence {
  const rows = new Map<number, number>();
  const out = {
    row: new Int32Array(moved.length),
    column: new Uint16Array(moved.length),
    element: new Int32Array(moved.length),
    up: new Uint8Array(moved.length),
  };
  for (const [i, m] of moved.entries()) {
    let at = rows.get(m.row);
    if (at === undefined) rows.set(m.row, (at = rows.size));
    out.row[i] = at;
    out.column[i] = m.column;
    out.element[i] = m.element;
    out.up[i] = m.up ? 1 : 0;
  }
  const episodes = new Float64Array(rows.size);
  const frames = new Float64Array(rows.size);
  for (const [r, at] of rows) {
    episodes[at] = original.episodes[r]!;
    frames[at] = original.frames[r]!;
  }
  return { episodes, frames, ...out };
}

/**
 * Which original episode each leaked episode is, by its values, when the indices were renumbered
 * (das pull renumbers a LeRobot v3.0 subset, decision 0075): for each leaked episode, the original
 * episode whose rows at the same frames hold the most values within STEP_LIMIT of the leak's.
 */
function alignEpisodes(original: FrameCells, leaked: FrameCells, index: RowIndex): Map<number, number> | null {
  const column = [...leaked.columns.keys()].find((name) => original.columns.has(name));
  if (!column) return null;
  const o = original.columns.get(column)!;
  const l = leaked.columns.get(column)!;
  const oStarts = rowStarts(o, original.rows);
  const lStarts = rowStarts(l, leaked.rows);
  const originalEpisodes = [...new Set(original.episodes)].filter((e) => !Number.isNaN(e));
  // A few rows of each leaked episode, as (frame, leaked row).
  const probes = new Map<number, [number, number][]>();
  for (let r = 0; r < leaked.rows; r++) {
    const e = leaked.episodes[r]!;
    const list = probes.get(e) ?? [];
    if (list.length < 3) list.push([leaked.frames[r]!, r]);
    probes.set(e, list);
  }
  const mapping = new Map<number, number>();
  for (const [e, rows] of probes) {
    let best = -1;
    let bestScore = 0;
    let possible = 0;
    for (const candidate of originalEpisodes) {
      let score = 0;
      let total = 0;
      for (const [f, lr] of rows) {
        const or = index.rows.get(index.key(candidate, f));
        if (or === undefined) continue;
        const n = Math.min(lStarts[lr + 1]! - lStarts[lr]!, oStarts[or + 1]! - oStarts[or]!);
        for (let j = 0; j < n; j++) {
          const a = o.values[oStarts[or]! + j]!;
          const b = l.values[lStarts[lr]! + j]!;
          total++;
          const d = o.float32 ? steps32(a, b, STEP_LIMIT) : steps64(a, b, STEP_LIMIT);
          if (d !== null) score++;
        }
      }
      if (score > bestScore) {
        bestScore = score;
        best = candidate;
        possible = total;
      }
    }
    if (best >= 0 && bestScore >= 0.9 * possible) mapping.set(e, best);
  }
  return mapping.size ? mapping : null;
}

export type Candidate = { licenceId: string; key: MarkKey };

export type Verdict = {
  licenceId: string;
  /** Moved cells its key chooses (in the pool it was tested on), and how many moved its way. */
  chosen: number;
  agreeing: number;
  /** log10 of the p-value, and of the p-value times the number of licences tested. */
  log10P: number;
  log10Adjusted: number;
  named: boolean;
};

/** Tests each candidate's mark against the evidence (see above); verdicts strongest first. */
export function testLicences(comparison: Comparison, candidates: Candidate[], alpha = DEFAULT_ALPHA): Verdict[] {
  const { evidence, columns } = comparison;
  const n = evidence.row.length;
  const log10m = Math.log10(Math.max(1, candidates.length));
  // Per candidate, per evidence cell: 0 not chosen, 1 chosen and moved its way, 2 chosen and moved the other way.
  const choices = candidates.map(({ key }) => {
    const words = rowWords(key, evidence.episodes, evidence.frames);
    const columnWords = columns.map((name) => columnWord(key, name));
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const word = cellWord(words, evidence.row[i]!, columnWords[evidence.column[i]!]!, evidence.element[i]!);
      if (isChosen(word)) out[i] = upward(word) === (evidence.up[i] === 1) ? 1 : 2;
    }
    return out;
  });
  const active = new Uint8Array(n).fill(1);
  const verdicts = new Map<number, Verdict>();
  const tally = (c: number): Verdict => {
    let chosen = 0;
    let agreeing = 0;
    const choice = choices[c]!;
    for (let i = 0; i < n; i++) {
      if (!active[i] || !choice[i]) continue;
      chosen++;
      if (choice[i] === 1) agreeing++;
    }
    const log10P = binomialTailLog10(chosen, agreeing);
    return {
      licenceId: candidates[c]!.licenceId,
      chosen,
      agreeing,
      log10P,
      log10Adjusted: Math.min(0, log10P + log10m),
      named: false,
    };
  };
  for (;;) {
    let best: { c: number; verdict: Verdict } | null = null;
    for (let c = 0; c < candidates.length; c++) {
      if (verdicts.get(c)?.named) continue;
      const verdict = tally(c);
      verdicts.set(c, verdict);
      if (!best || verdict.log10P < best.verdict.log10P) best = { c, verdict };
    }
    if (!best || best.verdict.log10Adjusted >= Math.log10(alpha)) break;
    best.verdict.named = true;
    // Its cells are explained: the others are tested on what is left.
    const choice = choices[best.c]!;
    for (let i = 0; i < n; i++) if (choice[i]) active[i] = 0;
  }
  return [...verdicts.values()].sort(
    (a, b) => Number(b.named) - Number(a.named) || a.log10P - b.log10P || a.licenceId.localeCompare(b.licenceId),
  );
}

const lnFactorials: number[] = [0];
function lnFactorial(n: number): number {
  for (let i = lnFactorials.length; i <= n; i++) lnFactorials.push(lnFactorials[i - 1]! + Math.log(i));
  return lnFactorials[n]!;
}

/** log10 P(X >= k) for X ~ Binomial(n, 1/2). */
export function binomialTailLog10(n: number, k: number): number {
  if (k <= 0 || n === 0) return 0;
  if (k > n) return Number.NEGATIVE_INFINITY;
  const lnTerm = (i: number) => lnFactorial(n) - lnFactorial(i) - lnFactorial(n - i) - n * Math.LN2;
  if (k > n / 2) {
    // The terms fall from k upward: sum until they no longer count.
    const first = lnTerm(k);
    let sum = 0;
    for (let i = k; i <= n; i++) {
      const ratio = Math.exp(lnTerm(i) - first);
      sum += ratio;
      if (ratio < 1e-17) break;
    }
    return (first + Math.log(sum)) / Math.LN10;
  }
  // 1 - P(X <= k - 1), the lower tail falling from k - 1 downward.
  const first = lnTerm(k - 1);
  let sum = 0;
  for (let i = k - 1; i >= 0; i--) {
    const ratio = Math.exp(lnTerm(i) - first);
    sum += ratio;
    if (ratio < 1e-17) break;
  }
  const lower = Math.exp(first) * sum;
  return Math.log10(Math.max(Number.MIN_VALUE, 1 - lower));
}
