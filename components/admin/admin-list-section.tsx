import type { ReactNode } from "react";
import { formatNumber } from "../ui/format";

/**
 * A list on an admin page: a heading that counts what is listed, the list's filters beside it, and
 * the table. `empty` takes the table's place only when there is nothing at all, not when a filter
 * matched nothing: then the table's own empty row says so, and the filters stay in reach.
 *
 * No hooks and no "use client": the server pages render it, and so does `LicencesTables`, a client
 * component, around its tables.
 */
export function AdminListSection({
  id,
  title,
  count,
  description,
  filters,
  filtered = false,
  empty,
  children,
}: {
  /** The heading's id, which labels the section. */
  id: string;
  title: string;
  count: number;
  description?: ReactNode;
  filters?: ReactNode;
  filtered?: boolean;
  empty?: ReactNode;
  children: ReactNode;
}) {
  const heading = (
    <h2 id={id} className="text-sm font-semibold text-slate-900">
      {title} <span className="font-normal text-slate-500">({formatNumber(count)})</span>
    </h2>
  );
  return (
    <section aria-labelledby={id} className="space-y-3">
      <div className="flex flex-wrap items-end justify-between gap-3">
        {description ? (
          <div>
            {heading}
            <p className="mt-0.5 text-sm text-slate-500">{description}</p>
          </div>
        ) : (
          heading
        )}
        {filters}
      </div>
      {count === 0 && !filtered && empty ? empty : children}
    </section>
  );
}
