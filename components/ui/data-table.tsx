"use client";

import {
  flexRender,
  getCoreRowModel,
  useReactTable,
  type ColumnDef,
  type OnChangeFn,
  type RowData,
  type RowSelectionState,
} from "@tanstack/react-table";
import { cn } from "./cn";

declare module "@tanstack/react-table" {
  interface ColumnMeta<TData extends RowData, TValue> {
    /** Numbers read best right-aligned, header included. */
    align?: "right";
  }
}

/**
 * A table over react-table: sticky header, scrolls sideways on narrow screens, optional row
 * selection. `bare` drops the table's own frame where it sits inside a card.
 */
export function DataTable<T>({
  data,
  columns,
  rowId,
  selection,
  onSelectionChange,
  caption,
  empty = "Nothing to show.",
  bare = false,
}: {
  data: T[];
  columns: ColumnDef<T, unknown>[];
  rowId: (row: T) => string;
  selection?: RowSelectionState;
  onSelectionChange?: OnChangeFn<RowSelectionState>;
  caption: string;
  empty?: string;
  bare?: boolean;
}) {
  const table = useReactTable({
    data,
    columns,
    getRowId: rowId,
    getCoreRowModel: getCoreRowModel(),
    enableRowSelection: Boolean(onSelectionChange),
    state: selection ? { rowSelection: selection } : {},
    onRowSelectionChange: onSelectionChange,
  });
  return (
    <div className={cn("relative overflow-x-auto", !bare && "rounded-lg bg-white shadow-sm ring-1 ring-slate-200")}>
      <table className="min-w-full divide-y divide-slate-200 text-sm">
        <caption className="sr-only">{caption}</caption>
        <thead className="bg-slate-50">
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => (
                <th
                  key={header.id}
                  scope="col"
                  className={cn(
                    "whitespace-nowrap px-3 py-2.5 text-xs font-semibold uppercase tracking-wide text-slate-600",
                    header.column.columnDef.meta?.align === "right" ? "text-right" : "text-left",
                  )}
                >
                  {header.isPlaceholder ? null : flexRender(header.column.columnDef.header, header.getContext())}
                </th>
              ))}
            </tr>
          ))}
        </thead>
        <tbody className="divide-y divide-slate-100">
          {table.getRowModel().rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} className="px-3 py-10 text-center text-slate-500">
                {empty}
              </td>
            </tr>
          ) : (
            table.getRowModel().rows.map((row) => (
              <tr key={row.id} className={row.getIsSelected() ? "bg-brand-50/60" : "hover:bg-slate-50"}>
                {row.getVisibleCells().map((cell) => (
                  <td
                    key={cell.id}
                    className={cn(
                      "whitespace-nowrap px-3 py-2 text-slate-700",
                      cell.column.columnDef.meta?.align === "right" && "text-right tabular-nums",
                    )}
                  >
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
