/**
 * One CSV record (RFC 4180, CRLF line ends): a field is quoted when it holds a comma, a semicolon,
 * a quote or a line break, or starts or ends with a space (which spreadsheets would trim). Objects are written
 * as JSON, arrays as `a;b;c`, null and undefined as an empty field. Every CSV the product writes
 * goes through here, so that every one of them is safe to open in a spreadsheet.
 */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvField).join(",")}\r\n`;
}

/*
 * A spreadsheet runs a cell that starts with =, +, - or @ as a formula (and some strip a leading
 * tab or CR first), so a name such as =HYPERLINK("http://evil","x") would become a live link or
 * worse. OWASP's rule: put a single quote in front of such a cell, which spreadsheets read as
 * "text", and quote the field. Spaces or line breaks before the sign count too, for spreadsheets
 * that trim them on import.
 *
 * A cell starts after a semicolon too: a spreadsheet whose locale separates lists with ";" (most
 * of continental Europe) splits a comma-separated file on semicolons when it opens it, so
 * `acme;=HYPERLINK(..)` would arrive as two cells, the second a formula. The same quote goes in
 * front of whatever follows a semicolon, and a field holding one is quoted.
 *
 * Numbers are left alone: one we write is a JavaScript number, which a spreadsheet reads as a
 * number even when negative (-1.5 is never a formula), and a quote in front would turn it into
 * text. Our numeric columns (sizes, counts, durations, sequence numbers) are not negative anyway.
 * A string that looks like a number ("-1.5" as a contributor's name) is still neutralised.
 */
const CELL_STARTS_FORMULA = /(^|;)(?=[\t\r]|\s*[=+\-@])/g;

/**
 * Whatever needs either treatment: a formula's start, or a character or edge a field is quoted
 * for. Most fields need neither, and one test tells, where an export of a million rows of twenty
 * fields would otherwise run three on each.
 */
const NEEDS_CARE = /^[\s=+\-@]|[",;\r\n]|\s$/;

function csvField(value: unknown): string {
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  const text =
    value === null || value === undefined ? "" : Array.isArray(value) ? value.join(";") : typeof value === "object" ? JSON.stringify(value) : String(value);
  if (!NEEDS_CARE.test(text)) return text;
  // Quoted in any case: it holds a quote, a separator or a line break, has a space at an end, or
  // starts a formula somewhere a spreadsheet may start a cell.
  return `"${text.replace(CELL_STARTS_FORMULA, "$1'").replace(/"/g, '""')}"`;
}
