// Patterns only, nothing of node: the portal's forms check ids with them in the browser.

/** What our identifiers look like. A value of another shape cannot exist, so lookups answer "not found" without querying. */
export const DATASET_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;
// Episode ids appear as a path segment of /v1/episodes/{episode_id}/annotations: no slashes or spaces.
export const EPISODE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:~-]{0,199}$/;
