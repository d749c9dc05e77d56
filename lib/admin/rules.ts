/**
 * The admin rules that forms check in the browser before the verbs check them again on the
 * server. Plain constants, so client components can import them without the database layer.
 */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const EMAIL_PATTERN = /^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+\.[^\s@\u0000-\u001f\u007f]+$/;
export const MIN_PASSWORD_LENGTH = 10;
export const KEY_NAME_MAX = 100;
/** The expiry choices the portal offers, in days; null is "never". */
export const KEY_EXPIRY_DAYS = [7, 30, 90, 365] as const;
/** An access request's purpose, and an admin's reason for rejecting one: a paragraph or a few. */
export const PURPOSE_MAX = 2000;
export const REJECTION_REASON_MAX = 2000;
/** A terms document's title. */
export const TERMS_TITLE_MAX = 200;
