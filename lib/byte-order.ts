/**
 * Strings in the order of their UTF-8 bytes (PostgreSQL's "C" collation, in which episode ids are
 * stored, listed and digested), without encoding them: UTF-8's byte order is code-point order, and
 * UTF-16 code units compare in code-point order except that a surrogate (half of a character past
 * U+FFFF) must rank above U+E000-U+FFFF, so those two ranges are swapped at the first difference.
 * `Buffer.compare(Buffer.from(a), Buffer.from(b))` gives the same order for well-formed text (what
 * PostgreSQL stores; it would write a lone surrogate as U+FFFD), with two buffers per comparison:
 * sorting a whole version's 2,500 episode ids that way took about 8 ms, this about 1.
 */
export function byteOrder(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const codePointRank = (unit: number) => (unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800);
