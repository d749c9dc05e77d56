// Next runs register() once per server process, before it serves: the place for hooks on Node's
// HTTP server and for the process's own schedules.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { guardRequests } = await import("./lib/http/request-guard");
  if (process.env.NODE_ENV === "production") {
    const { apiDispatcher } = await import("./lib/http/api-dispatch");
    const { API_ENDPOINTS } = await import("./app/api/v1/endpoints");
    // The API is answered as its requests arrive, by the route handlers Next would call, without Next's router.
    guardRequests(apiDispatcher(API_ENDPOINTS));
  } else {
    // `next dev` reloads a route file when it is edited; the dispatcher would go on serving the
    // handlers it imported at start, so in development Next's router serves the API.
    guardRequests();
  }
  // Signed head digests of the disclosure log, every DIGEST_INTERVAL_MINUTES (lib/disclosures/digest-schedule.ts).
  const { startDigestScheduleFromEnv } = await import("./lib/disclosures/digest-schedule");
  startDigestScheduleFromEnv();
}
