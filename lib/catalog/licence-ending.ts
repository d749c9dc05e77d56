/** From how long before its end a licence's holder and its owner are told it is ending. */
export const ENDING_WARNING_DAYS = 30;

const DAY_MS = 86_400_000;

/**
 * Whether a licence usable at `now` ends within `ENDING_WARNING_DAYS`, and in how many days:
 * whole days, counted up, so a licence ending later today ends "in 1 day" and none ends "in 0".
 * Null for a licence without an end, or further off, or already ended.
 */
export function licenceEnding(endsAt: Date | string | null, now: Date): { endsAt: Date; days: number } | null {
  if (endsAt === null) return null;
  const end = typeof endsAt === "string" ? new Date(endsAt) : endsAt;
  const left = end.getTime() - now.getTime();
  if (left <= 0 || left > ENDING_WARNING_DAYS * DAY_MS) return null;
  return { endsAt: end, days: Math.ceil(left / DAY_MS) };
}

/** "ends on 2026-12-24, in 12 days": the warning's words, the date in UTC as everywhere in the portal. */
export function endingText(ending: { endsAt: Date; days: number }): string {
  return `ends on ${ending.endsAt.toISOString().slice(0, 10)}, in ${ending.days} ${ending.days === 1 ? "day" : "days"}`;
}
