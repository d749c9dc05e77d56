import { showUnsafe } from "@/lib/characters";
import { shorten, table } from "@/lib/client/format";

// The list commands of das-admin: a table for people on stdout, or with --json the records
// themselves for scripts. Names and titles are the operators' free text: a line break or a
// bidirectional control in one would break the table's lines or make it read differently, so each
// is shown escaped.

export type Column<T> = { header: string; cell: (row: T) => string | number };

/** The rows as a table on stdout, or as JSON with `json`; `none` (to stderr) when there are none. */
export function printList<T>(rows: T[], options: { json?: boolean; none: string; columns: Column<T>[] }): void {
  if (options.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  if (!rows.length) {
    process.stderr.write(`${options.none}\n`);
    return;
  }
  process.stdout.write(
    table(
      options.columns.map((c) => c.header),
      rows.map((row) => options.columns.map((c) => c.cell(row))),
    ),
  );
}

/** Free text in a table cell: one line, escaped, at most `max` characters. */
export const text = (value: string | null, max = 40) =>
  value === null ? "-" : shorten(showUnsafe(value.replace(/\s+/g, " ").trim()), max);

/** An ISO instant as its UTC day, or "-". */
export const day = (iso: string | null) => iso?.slice(0, 10) ?? "-";

/** An ISO instant to the minute (UTC), or "-". */
export const minute = (iso: string | null) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z` : "-");

/**
 * Names to choose from, in a message: all of a short list, the first few of a long one, e.g.
 * "acme-robotics, globex-ai" or "a, b, c, ... (40 in all)".
 */
export function choices(names: string[], shown = 10): string {
  if (names.length <= shown) return names.join(", ");
  return `${names.slice(0, shown).join(", ")}, ... (${names.length} in all)`;
}
