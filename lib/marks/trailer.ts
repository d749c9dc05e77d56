/**
 * What a licence's copy of a file that carries no float mark adds to its end, so that each copy has
 * a hash of its own (and, while the end survives, says whose it is): the original's bytes followed
 * by a few bytes, which the object store can assemble by a server-side copy of the original and
 * one small part, never the service streaming the file.
 *
 * - MP4 (and any other binary file): a top-level `uuid` box, which ISO BMFF readers (players,
 *   ffmpeg, PyAV, torchcodec) skip as a box they do not know: 8 bytes of box header, our 16-byte
 *   user type, "das-copy" and the licence's 16-byte token for the file.
 * - Text (JSON, JSON Lines, Markdown, CSV, YAML): the token as 128 spaces and tabs before the final
 *   line break (or at the end when there is none). JSON allows whitespace after a value, and a JSON
 *   Lines reader that refuses a blank last line never sees one.
 */

export type TrailerKind = "box" | "text";

const TEXT_EXTENSIONS = /\.(json|jsonl|md|markdown|txt|csv|tsv|yaml|yml)$/i;

/** How a file that is not a marked parquet file gets its copy's bytes. */
export function trailerKind(path: string, mediaType: string): TrailerKind {
  return TEXT_EXTENSIONS.test(path) || mediaType.startsWith("text/") || mediaType === "application/json"
    ? "text"
    : "box";
}

/** Our box's user type (a UUID of this service's own, fixed once). */
const BOX_TYPE = Buffer.from("5d1e9c0a7b3f4e2a9c6d2f8e1a4b7c30", "hex");
const BOX_SIGNATURE = Buffer.from("das-copy");
export const BOX_BYTES = 8 + 16 + BOX_SIGNATURE.length + 16;

export function boxTrailer(token: Uint8Array): Uint8Array {
  const box = Buffer.alloc(BOX_BYTES);
  box.writeUInt32BE(BOX_BYTES, 0);
  box.write("uuid", 4, "latin1");
  BOX_TYPE.copy(box, 8);
  BOX_SIGNATURE.copy(box, 24);
  Buffer.from(token).copy(box, 24 + BOX_SIGNATURE.length);
  return box;
}

/** The token as spaces (0) and tabs (1), one character a bit. */
export function whitespaceToken(token: Uint8Array): string {
  let out = "";
  for (const byte of token) for (let bit = 7; bit >= 0; bit--) out += (byte >> bit) & 1 ? "\t" : " ";
  return out;
}

/**
 * Where the copy departs from the original and what follows: the copy is the original's first
 * `keep` bytes, then `suffix`. `lastByte` is the original's last byte (text keeps its final line
 * break after the token).
 */
export function trailerOf(
  kind: TrailerKind,
  token: Uint8Array,
  size: number,
  lastByte: number | null,
): { keep: number; suffix: Uint8Array } {
  if (kind === "box") return { keep: size, suffix: boxTrailer(token) };
  const spaces = whitespaceToken(token);
  return lastByte === 0x0a
    ? { keep: size - 1, suffix: Buffer.from(`${spaces}\n`) }
    : { keep: size, suffix: Buffer.from(spaces) };
}

/** The token a file's end carries, if its trailer survived: from our box, or from trailing whitespace. */
export function trailerToken(end: Uint8Array): Buffer | null {
  const tail = Buffer.from(end);
  if (tail.length >= BOX_BYTES) {
    const box = tail.subarray(tail.length - BOX_BYTES);
    if (
      box.readUInt32BE(0) === BOX_BYTES &&
      box.toString("latin1", 4, 8) === "uuid" &&
      box.subarray(8, 24).equals(BOX_TYPE) &&
      box.subarray(24, 24 + BOX_SIGNATURE.length).equals(BOX_SIGNATURE)
    )
      return Buffer.from(box.subarray(24 + BOX_SIGNATURE.length));
  }
  const text = tail.toString("latin1").replace(/\r?\n$/, "");
  const m = /[ \t]{128}$/.exec(text);
  if (!m) return null;
  const bits = m[0];
  const token = Buffer.alloc(16);
  for (let i = 0; i < 128; i++) if (bits[i] === "\t") token[i >> 3]! |= 1 << (7 - (i & 7));
  return token;
}
