import { inject } from "vitest";
import { hasProductionBuild, startNextServer, type NextServer } from "../dev/next-server";

export type AppServer = NextServer;

/**
 * The production build (`next build`, which `npm test` runs first) served by `next start`,
 * against this run's database and store: what a client meets over HTTP, Next's routing included.
 */
export async function startAppServer(env: Record<string, string> = {}): Promise<AppServer> {
  if (!hasProductionBuild()) throw new Error("No production build: run `npx next build` first (`npm test` does).");
  return startNextServer({ ...process.env, DATABASE_URL: inject("databaseUrl"), APP_SECRET: inject("appSecret"), ...env });
}
