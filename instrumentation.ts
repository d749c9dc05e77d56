// Next runs register() once per server process, before it serves: the place for hooks on Node's
// HTTP server and for the process's own schedules.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // Requests Next cannot parse (TRACE, unknown methods, empty path segments) are refused before it sees them.
  const { guardRequests } = await import("./lib/http/request-guard");
  guardRequests();
  // Signed head digests of the disclosure log, every DIGEST_INTERVAL_MINUTES (lib/disclosures/digest-schedule.ts).
  const { startDigestScheduleFromEnv } = await import("./lib/disclosures/digest-schedule");
  startDigestScheduleFromEnv();
  // Notice deliveries (webhooks, email): this process works the job queue (lib/notices/worker.ts).
  const { startNoticeWorkerFromEnv } = await import("./lib/notices/worker");
  startNoticeWorkerFromEnv();
  // Licences' copies of fingerprinted versions, made ahead of use (lib/fingerprints/jobs.ts).
  const { startCopyWorkerFromEnv } = await import("./lib/fingerprints/jobs");
  startCopyWorkerFromEnv();
}
