import { inject } from "vitest";

// Before any module reads the environment: the run's database and secret.
process.env.DATABASE_URL = inject("databaseUrl");
process.env.APP_SECRET = inject("appSecret");
Object.assign(process.env, inject("storeEnv"));
// High enough that ordinary suites never meet it; the rate-limit suites build their own limiters and servers.
process.env.RATE_LIMIT_PER_MINUTE ??= "1000000";
process.env.AUTH_FAILURES_PER_MINUTE ??= "1000000";
// Route handlers called in-process read the database on every request: a suite that writes and at
// once reads in the same process would otherwise race the notification of its own write (which
// arrives within milliseconds, on another connection). Servers started by startAppServer run as
// deployed, with the cache (lib/testing/app-server.ts).
process.env.API_CACHE_MB = "0";

// Every response a suite produces through call() must match the OpenAPI document: a response that
// does not fails the test that made the request (lib/testing/contract.ts).
const { observeCalls } = await import("./http");
const { assertMatchesContract } = await import("./contract");
observeCalls(assertMatchesContract);
