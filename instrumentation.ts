// Next runs register() once per server process, before it serves: the place for hooks on Node's
// HTTP server and for the process's own schedules.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // Requests Next cannot parse (TRACE, unknown methods, empty path segments) are refused before it sees them.
  const { guardRequests } = await import("./lib/http/request-guard");
  guardRequests();
  // Warnings, once, about the database connection: a pooler's missing limits, a role that owns the tables.
  const { checkServiceConnection } = await import("./lib/db/startup-checks");
  const { getDb } = await import("./lib/db/client");
  void checkServiceConnection(getDb()).catch(() => undefined);
  // Signed head digests of the disclosure log, every DIGEST_INTERVAL_MINUTES (lib/disclosures/digest-schedule.ts).
  const { startDigestScheduleFromEnv } = await import("./lib/disclosures/digest-schedule");
  startDigestScheduleFromEnv();
  // The log's months: partitions made ahead, ended months closed (lib/disclosures/months-schedule.ts).
  const { startMonthsScheduleFromEnv } = await import("./lib/disclosures/months-schedule");
  startMonthsScheduleFromEnv();
  // Rendered meta/ of views unused for RENDERED_VIEW_RETENTION_DAYS, collected (lib/views/collect-schedule.ts).
  const { startRenderedCollectionFromEnv } = await import("./lib/views/collect-schedule");
  startRenderedCollectionFromEnv();
  // Notice deliveries (webhooks, email): this process works the job queue (lib/notices/worker.ts).
  const { startNoticeWorkerFromEnv } = await import("./lib/notices/worker");
  startNoticeWorkerFromEnv();
  // Licences' copies of fingerprinted versions, made ahead of use (lib/fingerprints/jobs.ts).
  const { startCopyWorkerFromEnv } = await import("./lib/fingerprints/jobs");
  startCopyWorkerFromEnv();
}
