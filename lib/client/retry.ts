export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The longest das waits before a retry, whatever a Retry-After asks: a server (or a store, or
 * someone in between) asking for more is answered with an error that says so at once, rather than
 * holding the command for an hour per retry.
 */
export const MAX_WAIT_SECONDS = 60;

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^[0-9]+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Why a retry is not waited for: the wait asked is longer than MAX_WAIT_SECONDS. */
export const waitTooLong = (seconds: number) =>
  `it asks to wait ${seconds} s before a retry (Retry-After), longer than the ${MAX_WAIT_SECONDS} s das waits: try again later`;

/** Exponential backoff for the n-th attempt (1-based): 1, 2, 4 ... 60 s, with up to 25% jitter so clients do not retry in step. */
export function backoffSeconds(attempt: number): number {
  const base = Math.min(60, 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.75 + Math.random() * 0.25) * 1000) / 1000;
}
