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
