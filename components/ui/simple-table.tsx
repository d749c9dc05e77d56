import type { ReactNode } from "react";
import { cn } from "./cn";

/** A column: its header, and the classes its cells share (type, wrapping, colour). */
export type SimpleColumn = { header: string; className?: string };
/** A row's cells, already rendered, in the columns' order; `id` makes the row a link target. */
export type SimpleRow = { key: string; id?: string; cells: ReactNode[] };

/**
 * A plain framed table for reading, rendered wherever it is used, on the server too. `DataTable`
 * is a client component over react-table whose cells are functions, which a server component
 * cannot pass across to it; what is shown here has nothing to sort or select, so the cells come
 * already rendered.
 */
export function SimpleTable({ columns, rows }: { columns: SimpleColumn[]; rows: SimpleRow[] }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200">
      <table className="min-w-full divide-y divide-slate-200 text-left text-sm">
        <thead className="bg-slate-50 text-xs font-semibold uppercase tracking-wide text-slate-500">
          <tr>
            {columns.map((column) => (
              <th key={column.header} scope="col" className="px-3 py-2">
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100 bg-white">
          {rows.map((row) => (
            <tr key={row.key} id={row.id} className="align-top">
              {row.cells.map((cell, i) => (
                <td key={i} className={cn("px-3 py-2", columns[i]?.className)}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
