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
    value === null || value === undefined
      ? ""
      : Array.isArray(value)
        ? value.join(";")
        : typeof value === "object"
          ? JSON.stringify(value)
          : String(value);
  if (!NEEDS_CARE.test(text)) return text;
  // Quoted in any case: it holds a quote, a separator or a line break, has a space at an end, or
  // starts a formula somewhere a spreadsheet may start a cell.
  return `"${text.replace(CELL_STARTS_FORMULA, "$1'").replace(/"/g, '""')}"`;
}

/**
 * CSV records built from text as the database sends it (UTF-8 bytes, the driver's raw rows), with
 * exactly csvLine's output: a field that cannot need care by its bytes is copied as it is, one that
 * needs only quoting is quoted byte by byte, any other is decoded and written by `csvField`. A
 * large export spent most of its time decoding every column into a string, writing each string
 * out again and collecting both; most of its fields (ids, instants, hashes, counts) need nothing,
 * and now become neither.
 */
export class CsvRecords {
  private buffer = Buffer.allocUnsafe(1 << 20);
  private length = 0;
  private fieldsInRecord = 0;

  /** The next field of the current record: a number's text (never neutralised, as csvLine leaves numbers), a text, or null. */
  field(bytes: Uint8Array | null, kind: "number" | "text"): void {
    if (this.fieldsInRecord++ > 0) this.byte(COMMA);
    if (bytes === null || bytes.length === 0) return;
    const care = kind === "number" ? PLAIN : careFor(bytes);
    if (care === EXACT) {
      const text = csvField(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8"));
      this.reserve(Buffer.byteLength(text));
      this.length += this.buffer.write(text, this.length);
      return;
    }
    if (care === PLAIN) {
      this.reserve(bytes.length);
      this.buffer.set(bytes, this.length);
      this.length += bytes.length;
      return;
    }
    // Quoted, a quote may double every byte, plus the two around it.
    this.reserve(2 * bytes.length + 2);
    const out = this.buffer;
    let at = this.length;
    out[at++] = QUOTE_MARK;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i]!;
      out[at++] = byte;
      if (byte === QUOTE_MARK) out[at++] = QUOTE_MARK;
    }
    out[at++] = QUOTE_MARK;
    this.length = at;
  }

  /** Ends the current record (CRLF). */
  end(): void {
    this.fieldsInRecord = 0;
    this.byte(CR);
    this.byte(LF);
  }

  /**
   * The records written so far, as UTF-8 bytes of their own (the buffer is written again after
   * this); starts again empty. Bytes, not text: the export is sent as bytes, and decoding megabytes
   * into a string only to encode them again cost a third of its time per row.
   */
  take(): Buffer {
    const bytes = Buffer.allocUnsafe(this.length);
    this.buffer.copy(bytes, 0, 0, this.length);
    this.length = 0;
    return bytes;
  }

  /**
   * One byte of ASCII, set in place: `Buffer#write` of a one-character string, at every comma and
   * line end, was about a third of the time spent writing a record.
   */
  private byte(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}

const COMMA = 0x2c;
const QUOTE_MARK = 0x22;
const CR = 0x0d;
const LF = 0x0a;

/** What a field needs, by its bytes: nothing, quoting alone, or csvField's exact way round. */
const PLAIN = 0;
const QUOTE = 1;
const EXACT = 2;

/**
 * What a field's UTF-8 bytes need of csvField, decided without decoding them, erring only towards
 * EXACT (which is csvField itself):
 *
 * - a first byte that is a space, a control character, a formula sign or part of a multi-byte
 *   character (which may be one of the spaces `\s` means beyond ASCII), or any semicolon (after
 *   which a cell may start a formula): EXACT;
 * - otherwise no cell can start a formula, so a quote, comma or line break anywhere means the field
 *   is quoted with its quotes doubled and nothing more: QUOTE;
 * - otherwise a last byte that is a space, a control character or part of a multi-byte character
 *   may be a trailing space: EXACT; anything else needs nothing: PLAIN.
 *
 * Bytes below 0x80 occur in UTF-8 only as themselves, so a quote or semicolon cannot hide inside
 * another character.
 */
function careFor(bytes: Uint8Array): typeof PLAIN | typeof QUOTE | typeof EXACT {
  const first = bytes[0]!;
  if (first >= 0x80 || first <= 0x20 || first === 0x3d || first === 0x2b || first === 0x2d || first === 0x40)
    return EXACT;
  let quoted = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === 0x3b) return EXACT;
    if (byte === QUOTE_MARK || byte === COMMA || byte === 0x0d || byte === 0x0a) quoted = true;
  }
  if (quoted) return QUOTE;
  const last = bytes[bytes.length - 1]!;
  return last >= 0x80 || last <= 0x20 ? EXACT : PLAIN;
}
