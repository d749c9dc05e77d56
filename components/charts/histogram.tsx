import { formatNumber } from "../ui/format";

export type HistogramBucket = { from: number; to: number; count: number };

/** Vertical bars over contiguous ranges (durations); a table with the same numbers for screen readers. */
export function Histogram({ title, buckets, unit }: { title: string; buckets: HistogramBucket[]; unit: string }) {
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const label = (b: HistogramBucket) => `${b.from.toFixed(0)}–${b.to.toFixed(0)} ${unit}`;
  return (
    <figure>
      <figcaption className="mb-3 text-sm font-medium text-slate-700">{title}</figcaption>
      {/* A count axis on the left (0 and the tallest bar), each bar's count over it, durations under them. */}
      <div className="flex gap-2" aria-hidden="true">
        <div className="flex h-40 flex-col justify-between pt-4 text-right text-[10px] tabular-nums leading-none text-slate-400">
          <span>{formatNumber(max)}</span>
          <span>0</span>
        </div>
        <div className="flex h-40 min-w-0 flex-1 items-end gap-1 border-b border-l border-slate-200 pt-4">
          {buckets.map((b) => (
            <div
              key={b.from}
              className="relative flex h-full min-w-0 flex-1 flex-col justify-end"
              title={`${label(b)}: ${formatNumber(b.count)}`}
            >
              <span className="mb-0.5 truncate text-center text-[10px] tabular-nums leading-none text-slate-500">
                {b.count ? formatNumber(b.count) : ""}
              </span>
              <div
                className="rounded-t bg-brand-500/80"
                style={{ height: `${Math.max(b.count ? 2 : 0, (b.count / max) * 100)}%` }}
              />
            </div>
          ))}
        </div>
      </div>
      <div className="mt-1 flex justify-between pl-6 text-xs text-slate-500" aria-hidden="true">
        <span>
          {buckets[0]?.from.toFixed(0)} {unit}
        </span>
        {buckets.length > 2 ? (
          <span>
            {buckets[Math.floor(buckets.length / 2)]!.from.toFixed(0)} {unit}
          </span>
        ) : null}
        <span>
          {buckets.at(-1)?.to.toFixed(0)} {unit}
        </span>
      </div>
      <p className="mt-1 text-center text-[11px] text-slate-400" aria-hidden="true">
        episodes by duration
      </p>
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
