import { formatNumber } from "../ui/format";

export type BarItem = { label: string; count: number; color?: string };

/** Horizontal bars, one per value, with counts and shares; readable as a list without the bars. */
export function BarList({ title, items, total }: { title: string; items: BarItem[]; total: number }) {
  const max = Math.max(1, ...items.map((i) => i.count));
  return (
    <figure>
      <figcaption className="mb-3 text-sm font-medium text-slate-700">{title}</figcaption>
      <ul className="space-y-2">
        {items.map((item) => (
          <li key={item.label}>
            <div className="flex items-baseline justify-between gap-3 text-sm">
              <span className="truncate text-slate-700">{item.label}</span>
              <span className="shrink-0 tabular-nums text-slate-500">
                {formatNumber(item.count)}{" "}
                <span className="text-xs">({total ? ((item.count / total) * 100).toFixed(1) : "0"}%)</span>
              </span>
            </div>
            <div className="mt-1 h-2 rounded-full bg-slate-100" aria-hidden="true">
              <div
                className={`h-2 rounded-full ${item.color ?? "bg-brand-500"}`}
                style={{ width: `${(item.count / max) * 100}%` }}
              />
            </div>
          </li>
        ))}
      </ul>
    </figure>
  );
}
