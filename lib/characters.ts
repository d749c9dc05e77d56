/**
 * The character rules of every value that comes from outside, in one place. Three strengths:
 *
 * - control characters (C0 and DEL): never in any one-line value (ids, slugs, emails, key names,
 *   query values); PostgreSQL cannot even store NUL, so one would come back as a database error;
 * - free text (titles, tasks, labels, display names) may keep tabs and line breaks, nothing else
 *   of the control ranges (C0, DEL and C1: ESC and CSI drive terminals) and none of the
 *   bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), which make
 *   what a person reads differ from what is there. The marks (U+061C, U+200E, U+200F) and the
 *   line and paragraph separators stay: right-to-left writing and prose use them;
 * - unsafe characters: never in an identifier, file path or filter value: C0 and C1 control
 *   characters (U+0000-U+001F, U+007F-U+009F), the Unicode line and paragraph separators (U+2028,
 *   U+2029) and the bidirectional formatting controls (U+061C, U+200E, U+200F, U+202A-U+202E,
 *   U+2066-U+2069). A line break in a value ends the line of a generated script or list it is
 *   written into and starts a command or an option of its own; the others make what a person reads
 *   differ from what a program uses (a right-to-left override shows "clip<U+202E>4pm.exe" as
 *   "clipexe.mp4").
 *
 * Each comes as a search pattern and as a whole-value pattern (for zod schemas, so that the OpenAPI
 * document states the rule too).
 */
const CONTROL_RANGE = "\\u0000-\\u001f\\u007f";
const FREE_TEXT_FORBIDDEN_RANGE =
  "\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069";
const UNSAFE_RANGE = "\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069";

/** The unsafe characters as the inside of a character class, for patterns built elsewhere (the Hub's paths in the OpenAPI document). */
export const UNSAFE_CHARACTER_RANGE = UNSAFE_RANGE;

export const CONTROL_CHARACTERS = new RegExp(`[${CONTROL_RANGE}]`);
export const WITHOUT_CONTROL_CHARACTERS = new RegExp(`^[^${CONTROL_RANGE}]*$`);

export const FREE_TEXT = new RegExp(`^[^${FREE_TEXT_FORBIDDEN_RANGE}]*$`);
/** What String.prototype.trim removes from either end: white space and line terminators. */
const TRIMMED_RANGE = "\\t\\n\\u000b\\u000c\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";
/**
 * Free text that is not blank: FREE_TEXT with at least one character that trimming keeps, so that
 * a statement still says something once trimmed (and the rule can stand in a schema).
 */
export const NOT_BLANK_FREE_TEXT = new RegExp(
  `^[^${FREE_TEXT_FORBIDDEN_RANGE}]*[^${FREE_TEXT_FORBIDDEN_RANGE}${TRIMMED_RANGE}][^${FREE_TEXT_FORBIDDEN_RANGE}]*$`,
);
/** How problems name what FREE_TEXT refuses. */
export const FREE_TEXT_DESCRIPTION =
  "control characters other than tabs and line breaks (U+0000-U+001F, U+007F-U+009F) or bidirectional embeddings, overrides or isolates (U+202A-U+202E, U+2066-U+2069)";

export const UNSAFE_CHARACTERS = new RegExp(`[${UNSAFE_RANGE}]`);
export const WITHOUT_UNSAFE_CHARACTERS = new RegExp(`^[^${UNSAFE_RANGE}]*$`);
/** How problems and docs name the characters of UNSAFE_CHARACTERS. */
export const UNSAFE_CHARACTERS_DESCRIPTION =
  "control characters (U+0000-U+001F, U+007F-U+009F), line or paragraph separators (U+2028, U+2029) or bidirectional controls";
/** Characters as JSON Schema's `maxLength` counts them (code points), not UTF-16 units as `.length` does. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
export const hasUnsafeCharacter = (text: string) => UNSAFE_CHARACTERS.test(text);
/**
 * `text` with each unsafe character written as a \uXXXX escape, for a message that names a value
 * that was refused for holding one: printed as it is, the value would do to the terminal or the
 * log what it was refused for.
 */
export const showUnsafe = (text: string) =>
  text.replace(new RegExp(`[${UNSAFE_RANGE}]`, "g"), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
