/**
 * The service's own periodic work on one server process: `work` first `firstAttemptMs` after the
 * start (soon, but not in the middle of the server's own start), then every `minutes`; off when
 * `minutes` is 0, and started once per process whatever loads the module again (a global holder,
 * by `name`). Neither timer keeps the process alive. `work` handles its own failures (logs them
 * and waits for the next interval): none ever reaches a request.
 */
export function startSchedule(name: string, minutes: number, firstAttemptMs: number, work: () => Promise<void>): void {
  const holder = globalThis as unknown as { dasSchedules?: Map<string, NodeJS.Timeout> };
  const schedules = (holder.dasSchedules ??= new Map());
  if (schedules.has(name) || minutes === 0) return;
  const attempt = () => void work();
  setTimeout(attempt, firstAttemptMs).unref();
  const every = setInterval(attempt, minutes * 60_000);
  every.unref();
  schedules.set(name, every);
}
