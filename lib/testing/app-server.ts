import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { hasProductionBuild, productionBuildIsCurrent, startNextServer, type NextServer } from "../dev/next-server";

export type AppServer = NextServer;

/**
 * The production build (`next build`, which `npm test` runs first) served by `next start`,
 * against this run's database and store: what a client meets over HTTP, Next's routing included.
 * Its requests come as through one trusted proxy (TRUSTED_PROXIES=1) unless `env` says otherwise.
 */
export async function startAppServer(
  env: Record<string, string> = {},
  options: { port?: number } = {},
): Promise<AppServer> {
  if (!hasProductionBuild()) throw new Error("No production build: run `npx next build` first (`npm test` does).");
  // A build older than the code would pass or fail the suite on code that is no longer there.
  if (!productionBuildIsCurrent()) {
    throw new Error("The production build is older than the code: run `npx next build` again (`npm test` does).");
  }
  // Counters of its own, as an instance with in-process counters has: with REDIS_URL set, every
  // server of the run would otherwise spend one budget per address (127.0.0.1). Instances that
  // are meant to share counters are given the same prefix.
  const rateLimitKeyPrefix = `das:rl:test:${randomBytes(6).toString("hex")}`;
  // The suite's own process runs without the API cache (worker-setup.ts); a server has it, as deployed.
  const { API_CACHE_MB: _inProcessOnly, ...inherited } = process.env;
  return startNextServer(
    {
      ...inherited,
      // As deployed: the service's role, which owns no table.
      DATABASE_URL: inject("serviceDatabaseUrl"),
      APP_SECRET: inject("appSecret"),
      RATE_LIMIT_KEY_PREFIX: rateLimitKeyPrefix,
      // The suites play the one proxy in front, reporting each client's address and scheme.
      TRUSTED_PROXIES: "1",
      // Servers of the run share its database: a delivery worker in each would take the jobs of the
      // suite that tests deliveries. That suite turns its own server's worker on. So would a copy
      // worker take the copy jobs of suites that make their copies themselves, or leave some unmade
      // on purpose (scripts/das-admin-trace.test.ts's 47 licences without copies).
      NOTICE_WORKER: "off",
      COPY_WORKER: "off",
      ...env,
    },
    [],
    options,
  );
}
