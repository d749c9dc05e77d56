import { formatNumber } from "../ui/format";

export type ChartBar = {
  /** The bar's name in the table and its tooltip, e.g. 2026-11-21 or 2026-W47. */
  label: string;
  /** Its short name on the axis, e.g. 21 Nov. */
  tick: string;
  value: number;
  /** Where the bar leads: what it counts, in the log. */
  href: string;
  /** What the bar counts, said in full (its tooltip and what a screen reader reads). */
  description: string;
};

// Drawn at about the size it is shown at (half a desktop page, or a phone's width scrolled), so
// that its 12-unit text reads as about 12 px everywhere.
const WIDTH = 600;
const HEIGHT = 220;
const MARGIN = { top: 12, right: 8, bottom: 26, left: 56 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

/** Gridlines at round numbers (1, 2 or 5 times a power of ten), at most five steps, the last at or above `max`. */
export function axisTicks(max: number): number[] {
  if (max <= 0) return [0, 1];
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough)!;
  const top = Math.max(1, Math.ceil(max / step) * step);
  const ticks: number[] = [];
  for (let t = 0; t <= top + step / 2; t += Math.max(step, 1)) ticks.push(Math.round(t));
  return [...new Set(ticks)];
}

/** Which bars carry an axis label: the first, the last, and about `count` evenly between. */
function labelled(n: number, count = 7): Set<number> {
  if (n <= count) return new Set(Array.from({ length: n }, (_, i) => i));
  const every = Math.ceil((n - 1) / (count - 1));
  const shown = new Set<number>();
  for (let i = 0; i < n; i += every) shown.add(i);
  // The last, unless it would crowd the one before it.
  if (n - 1 - Math.max(...shown) >= every / 2) shown.add(n - 1);
  return shown;
}

/**
 * Vertical bars over time, drawn as SVG: a y axis with round gridlines, dates under the bars, each
 * bar a link into the log with its figure as its title (read by screen readers and shown on
 * hover), and the same figures and links as a table that opens below (the keyboard's way in). Scrolls sideways on a narrow screen
 * rather than shrinking its text, opening on the latest bars.
 */
export function BarChart({ title, unit, bars, id }: { title: string; unit: string; bars: ChartBar[]; id: string }) {
  const ticks = axisTicks(Math.max(0, ...bars.map((b) => b.value)));
  const top = ticks.at(-1)!;
  const slot = PLOT_W / Math.max(1, bars.length);
  const gap = slot > 6 ? Math.min(slot * 0.2, 6) : slot > 2 ? 0.5 : 0;
  const y = (v: number) => MARGIN.top + PLOT_H - (v / top) * PLOT_H;
  const shown = labelled(bars.length);
  return (
    // min-w-0: as a grid or flex item it must be allowed to be narrower than the drawing, which scrolls inside it.
    <figure aria-labelledby={`${id}-title`} className="min-w-0">
      <figcaption id={`${id}-title`} className="mb-2 text-sm font-medium text-slate-700">
        {title}
      </figcaption>
      {/* Right to left, so that on a narrow screen it opens scrolled to the latest bars; the drawing itself is left to right. */}
      <div className="overflow-x-auto [direction:rtl]">
        <svg
          viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
          className="block h-auto w-full min-w-[32rem] [direction:ltr]"
          role="group"
          aria-labelledby={`${id}-title`}
        >
          <g aria-hidden="true" className="text-[12px]">
            {ticks.map((t) => (
              <g key={t}>
                <line
                  x1={MARGIN.left}
                  x2={WIDTH - MARGIN.right}
                  y1={y(t)}
                  y2={y(t)}
                  className={t === 0 ? "stroke-slate-400" : "stroke-slate-200"}
                  strokeWidth={1}
                />
                <text x={MARGIN.left - 6} y={y(t)} dy="0.32em" textAnchor="end" className="fill-slate-500 tabular-nums">
                  {compact.format(t)}
                </text>
              </g>
            ))}
            <text
              transform={`translate(12 ${MARGIN.top + PLOT_H / 2}) rotate(-90)`}
              textAnchor="middle"
              className="fill-slate-500"
            >
              {unit}
            </text>
            {bars.map((b, i) =>
              shown.has(i) ? (
                <text
                  key={b.label}
                  x={MARGIN.left + slot * (i + 0.5)}
                  y={HEIGHT - 8}
                  textAnchor={i === 0 && slot < 40 ? "start" : i === bars.length - 1 && slot < 40 ? "end" : "middle"}
                  className="fill-slate-500"
                >
                  {b.tick}
                </text>
              ) : null,
            )}
          </g>
          {bars.map((b, i) => {
            const height = b.value > 0 ? Math.max(1.5, (b.value / top) * PLOT_H) : 0;
            const x = MARGIN.left + slot * i;
            return (
              // Out of the tab order: a year of days would be hundreds of stops before the rest of the
              // page. The table below holds the same links, one stop each, for the keyboard.
              <a key={b.label} href={b.href} aria-label={b.description} tabIndex={-1} className="group outline-none">
                <title>{b.description}</title>
                {/* The whole column is the link, so a short bar is as easy to hit as a tall one. */}
                <rect
                  x={x}
                  y={MARGIN.top}
                  width={slot}
                  height={PLOT_H}
                  className="fill-transparent group-hover:fill-slate-100 group-focus-visible:fill-brand-100"
                />
                <rect
                  x={x + gap / 2}
                  y={y(0) - height}
                  width={Math.max(0.5, slot - gap)}
                  height={height}
                  rx={slot > 8 ? 2 : 0}
                  className="fill-brand-500 group-hover:fill-brand-700 group-focus-visible:fill-brand-700"
                />
              </a>
            );
          })}
        </svg>
      </div>
      <details className="mt-2 text-sm">
        <summary className="cursor-pointer text-slate-600 hover:text-slate-900">Show as a table</summary>
        <div className="mt-2 max-h-72 overflow-y-auto rounded-md ring-1 ring-slate-200">
          <table className="min-w-full divide-y divide-slate-200 text-sm">
            <caption className="sr-only">{title}</caption>
            <thead className="sticky top-0 bg-slate-50">
              <tr>
                <th
                  scope="col"
                  className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-600"
                >
                  Period
                </th>
                <th
                  scope="col"
                  className="px-3 py-2 text-right text-xs font-semibold uppercase tracking-wide text-slate-600"
                >
                  {unit}
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 bg-white">
              {bars.map((b) => (
                <tr key={b.label}>
                  <th scope="row" className="px-3 py-1.5 text-left font-normal">
                    <a href={b.href} className="text-brand-700 hover:underline">
                      {b.label}
                    </a>
                  </th>
                  <td className="px-3 py-1.5 text-right tabular-nums">{formatNumber(b.value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
