import type { RateLimitState } from "../limits/rate-limit";

/** A budget as the API tells it: RateLimit-* on every response, and Retry-After on a 429. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  const headers: Record<string, string> = {
    "RateLimit-Limit": String(state.limit),
    "RateLimit-Remaining": String(state.remaining),
    "RateLimit-Reset": String(state.resetSeconds),
  };
  if (state.limited) headers["Retry-After"] = String(state.resetSeconds);
  return headers;
}
