// Next runs register() once per server process, before it serves: the place for hooks on Node's
// HTTP server and for the process's own schedules.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { guardRequests } = await import("./lib/http/request-guard");
  const { apiDispatcher } = await import("./lib/http/api-dispatch");
  const { API_ENDPOINTS } = await import("./app/api/v1/endpoints");
  // The API is answered as its requests arrive, by the route handlers Next would call, without Next's router.
  guardRequests(apiDispatcher(API_ENDPOINTS));
  // Signed head digests of the disclosure log, every DIGEST_INTERVAL_MINUTES (lib/disclosures/digest-schedule.ts).
  const { startDigestScheduleFromEnv } = await import("./lib/disclosures/digest-schedule");
  startDigestScheduleFromEnv();
}
