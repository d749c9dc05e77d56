/** What our identifiers look like. A value of another shape cannot exist, so lookups answer "not found" without querying. */
export const DATASET_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;
// Episode ids appear as a path segment of /v1/episodes/{episode_id}/annotations: no slashes or spaces.
export const EPISODE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:~-]{0,199}$/;

const CONTROL_RANGE = "\\u0000-\\u001f\\u007f";
/** No identifier, filter or search value of this service contains one; PostgreSQL cannot even store NUL. */
export const CONTROL_CHARACTERS = new RegExp(`[${CONTROL_RANGE}]`);
/** A whole value free of control characters (a pattern, so that the OpenAPI document states the rule too). */
export const WITHOUT_CONTROL_CHARACTERS = new RegExp(`^[^${CONTROL_RANGE}]*$`);

/**
 * Characters no identifier, file path or filter value may hold: C0 and C1 control characters
 * (U+0000-U+001F, U+007F-U+009F), the Unicode line and paragraph separators (U+2028, U+2029) and
 * the bidirectional formatting controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069).
 * A line break in a value ends the line of a generated script or list it is written into and
 * starts a command or an option of its own; the others make what a person reads differ from what a
 * program uses (a right-to-left override shows "clip<U+202E>4pm.exe" as "clipexe.mp4"). Free text
 * (titles, tasks, labels, descriptions) is not an identifier: it may hold line breaks and tabs.
 */
const UNSAFE_RANGES = "\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069";
export const UNSAFE_CHARACTERS = new RegExp(`[${UNSAFE_RANGES}]`);
/** The same rule as a whole-value pattern, for schemas that publish it (query parameters in the OpenAPI document). */
export const WITHOUT_UNSAFE_CHARACTERS = new RegExp(`^[^${UNSAFE_RANGES}]*$`);

/** How problems and docs name the characters of UNSAFE_CHARACTERS. */
export const UNSAFE_CHARACTERS_DESCRIPTION = "control characters (U+0000-U+001F, U+007F-U+009F), line or paragraph separators (U+2028, U+2029) or bidirectional controls";

export const hasUnsafeCharacter = (text: string) => UNSAFE_CHARACTERS.test(text);

/**
 * Whether a file path is relative with '/' separators and no empty, '.' or '..' segment: the
 * shape of every object key under its version, so that it names a file below a directory
 * wherever it is written.
 */
export function isRelativePath(path: string): boolean {
  return !path.startsWith("/") && !path.includes("\\") && !path.split("/").some((s) => s === "" || s === "." || s === "..");
}

/**
 * A file path as the importer admits it: relative, no unsafe character, and no space at either
 * end (aria2c, for one, strips those from an option's value, so the file would land elsewhere).
 */
export function isSafeFilePath(path: string): boolean {
  return path !== "" && path === path.trim() && isRelativePath(path) && !hasUnsafeCharacter(path);
}
