import { showUnsafe } from "../characters";

/** Output for people (aligned tables, sizes) and for scripts (CSV, JSON Lines). */

/**
 * An aligned table for a terminal. Its cells hold what the API sent (titles, tasks, paths), so each
 * is shown with its control characters, separators and bidirectional controls escaped: printed as
 * they are they could retitle or clear the terminal, or make a cell read other than it is.
 */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((row) => row.map((cell) => showUnsafe(String(cell))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? "").length)));
  const right = rows[0]?.map((cell) => typeof cell === "number") ?? [];
  return cells
    .map((row) =>
      row
        .map((cell, i) =>
          right[i] ? cell.padStart(widths[i]!) : i === row.length - 1 ? cell : cell.padEnd(widths[i]!),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
    .concat("\n");
}

export { csvLine } from "../csv";

const UNITS = ["B", "KB", "MB", "GB", "TB", "PB"];

/** 1234567 -> "1.2 MB" (decimal units, as disks and networks count). */
export function bytes(n: number): string {
  let value = n;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ${UNITS[unit]}`;
}

/** 3725 -> "1:02:05", 65 -> "1:05". */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "--:--";
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${rest}` : `${m}:${rest}`;
}

export const shorten = (text: string, max = 60) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** `<dataset>@<version>` */
export function parseTarget(text: string | undefined): { datasetId: string; version: string } | undefined {
  const match = /^([^@\s/]+)@([^@\s/]+)$/.exec(text ?? "");
  return match ? { datasetId: match[1]!, version: match[2]! } : undefined;
}
