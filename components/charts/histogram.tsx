import { formatNumber } from "../ui/format";

export type HistogramBucket = { from: number; to: number; count: number };

/** Vertical bars over contiguous ranges (durations); a table with the same numbers for screen readers. */
export function Histogram({ title, buckets, unit }: { title: string; buckets: HistogramBucket[]; unit: string }) {
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const label = (b: HistogramBucket) => `${b.from.toFixed(0)}–${b.to.toFixed(0)} ${unit}`;
  return (
    <figure>
      <figcaption className="mb-3 text-sm font-medium text-slate-700">{title}</figcaption>
      <div className="flex h-40 items-end gap-1" aria-hidden="true">
        {buckets.map((b) => (
          <div key={b.from} className="group relative flex h-full flex-1 flex-col justify-end">
            <div
              className="rounded-t bg-brand-500/80 transition-colors group-hover:bg-brand-600"
              style={{ height: `${Math.max(b.count ? 2 : 0, (b.count / max) * 100)}%` }}
            />
            <span className="pointer-events-none absolute -top-6 left-1/2 hidden -translate-x-1/2 whitespace-nowrap rounded bg-slate-900 px-1.5 py-0.5 text-xs text-white group-hover:block">
              {formatNumber(b.count)}
            </span>
          </div>
        ))}
      </div>
      <div className="mt-1 flex justify-between text-xs text-slate-500" aria-hidden="true">
        <span>
          {buckets[0]?.from.toFixed(0)} {unit}
        </span>
        <span>
          {buckets.at(-1)?.to.toFixed(0)} {unit}
        </span>
      </div>
      <table className="sr-only">
        <caption>{title}</caption>
        <tbody>
          {buckets.map((b) => (
            <tr key={b.from}>
              <th scope="row">{label(b)}</th>
              <td>{b.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
