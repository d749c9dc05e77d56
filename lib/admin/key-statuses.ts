/**
 * The statuses a key is listed by. A module without imports, so that das-admin can offer them as
 * its `--status` choices without loading the database's client to print its help.
 */
export const KEY_STATUSES = ["active", "expired", "revoked"] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];
