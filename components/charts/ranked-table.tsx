import type { ReactNode } from "react";
import { formatNumber } from "../ui/format";

export type RankedRow = {
  key: string;
  /** The row's name; a link into the log where the row can be searched there. */
  name: ReactNode;
  /** The name in full, shown on hover where a narrow screen cuts it short. */
  title?: string;
  /** A second line under the name (an organisation, a key's name). */
  detail?: ReactNode;
  entries: number;
  episodes: number;
};

/**
 * A breakdown as a table, largest first: a row per group with its entries and episodes, and a bar
 * for its entries beside them (drawn in SVG, hidden from screen readers: the numbers are in the
 * cells). The groups not listed are summed in a last row.
 */
export function RankedTable({
  caption,
  heading,
  rows,
  others,
  othersLabel,
}: {
  caption: string;
  heading: string;
  rows: RankedRow[];
  others?: { count: number; entries: number; episodes: number };
  othersLabel?: (count: number) => string;
}) {
  const max = Math.max(1, ...rows.map((r) => r.entries));
  const cell = "px-2 py-2 sm:px-3";
  const number = `${cell} whitespace-nowrap text-right tabular-nums`;
  const head = "px-2 py-2 text-xs font-semibold uppercase tracking-wide text-slate-600 sm:px-3";
  return (
    <div className="overflow-x-auto">
      <table className="min-w-full divide-y divide-slate-200 text-sm">
        <caption className="sr-only">{caption}</caption>
        <thead className="bg-slate-50">
          <tr>
            <th scope="col" className={`${head} text-left`}>
              {heading}
            </th>
            <th scope="col" className={`${head} hidden w-1/3 sm:table-cell`}>
              <span className="sr-only">Share of entries</span>
            </th>
            <th scope="col" className={`${head} text-right`}>
              Entries
            </th>
            <th scope="col" className={`${head} text-right`}>
              Episodes
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.length === 0 ? (
            <tr>
              <td colSpan={4} className={`${cell} text-center text-slate-500`}>
                Nothing was disclosed in this period.
              </td>
            </tr>
          ) : null}
          {rows.map((r) => (
            <tr key={r.key} className="hover:bg-slate-50">
              <th scope="row" className={`${cell} max-w-[10rem] text-left font-normal sm:max-w-[16rem]`}>
                <div className="truncate font-medium" title={r.title}>
                  {r.name}
                </div>
                {r.detail ? <div className="truncate text-xs text-slate-500">{r.detail}</div> : null}
              </th>
              <td className={`${cell} hidden sm:table-cell`} aria-hidden="true">
                <svg viewBox="0 0 100 8" preserveAspectRatio="none" className="block h-2 w-full">
                  <rect x={0} y={0} width={100} height={8} rx={4} className="fill-slate-100" />
                  <rect
                    x={0}
                    y={0}
                    width={Math.max(r.entries > 0 ? 2 : 0, (r.entries / max) * 100)}
                    height={8}
                    rx={4}
                    className="fill-brand-500"
                  />
                </svg>
              </td>
              <td className={number}>{formatNumber(r.entries)}</td>
              <td className={number}>{formatNumber(r.episodes)}</td>
            </tr>
          ))}
          {others && others.count > rows.length ? (
            <tr className="text-slate-500">
              <th scope="row" className={`${cell} text-left font-normal italic`}>
                {othersLabel
                  ? othersLabel(others.count - rows.length)
                  : `${formatNumber(others.count - rows.length)} more`}
              </th>
              <td className={`${cell} hidden sm:table-cell`} />
              <td className={number}>{formatNumber(others.entries)}</td>
              <td className={number}>{formatNumber(others.episodes)}</td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}
