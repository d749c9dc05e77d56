import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { rawRequest } from "@/lib/testing/raw-http";

// X-Forwarded-For and X-Forwarded-Proto are read from the same trusted hop (TRUSTED_PROXIES), over
// real HTTP: a client cannot name another address to escape the per-address limits, nor claim https.
const BAD_KEY = { authorization: "Bearer das_0000000000000000000000000000000000000000000" };

async function failedAttempts(server: AppServer, headersOf: (i: number) => Record<string, string>, count: number) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await rawRequest(server.url, { method: "GET", path: "/api/v1/datasets", headers: headersOf(i) });
    statuses.push(res.status);
  }
  return statuses;
}

/** A request from a non-loopback host that claims `proto` for its scheme is refused as plain HTTP. */
async function expectHttpsRequired(server: AppServer, proto: string) {
  const res = await rawRequest(server.url, {
    method: "GET",
    path: "/api/v1/openapi.json",
    headers: { host: "api.example.com", "x-forwarded-proto": proto, "x-forwarded-for": "203.0.113.7" },
  });
  expect(res.status).toBe(403);
  expect(JSON.parse(res.text).error.code).toBe("https_required");
}

describe("no proxy in front (TRUSTED_PROXIES=0, the default)", () => {
  let server: AppServer;
  beforeAll(async () => {
    server = await startAppServer({ TRUSTED_PROXIES: "0", AUTH_FAILURES_PER_MINUTE: "3" });
  }, 120_000);
  afterAll(() => server?.stop());

  it("counts failed authentication by the socket's address, whatever X-Forwarded-For the client rotates", async () => {
    const statuses = await failedAttempts(
      server,
      (i) => ({ ...BAD_KEY, "x-forwarded-for": `198.51.100.${i + 1}`, "x-forwarded-proto": "https" }),
      5,
    );
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });

  it("takes the scheme of the connection, not a claimed X-Forwarded-Proto", async () => {
    await expectHttpsRequired(server, "https");
  });
});

describe("one proxy in front (TRUSTED_PROXIES=1)", () => {
  let server: AppServer;
  beforeAll(async () => {
    server = await startAppServer({ TRUSTED_PROXIES: "1", AUTH_FAILURES_PER_MINUTE: "3" });
  }, 120_000);
  afterAll(() => server?.stop());

  it("reads the scheme from the proxy's own entry: `https, http` is plain HTTP", async () => {
    await expectHttpsRequired(server, "https, http");
  });

  it("counts by the address the proxy appended; what the client put further left changes nothing", async () => {
    const statuses = await failedAttempts(
      server,
      (i) => ({ ...BAD_KEY, "x-forwarded-for": `198.51.100.${i + 1}, 203.0.113.77`, "x-forwarded-proto": "https" }),
      5,
    );
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const other = await failedAttempts(
      server,
      () => ({ ...BAD_KEY, "x-forwarded-for": "203.0.113.78", "x-forwarded-proto": "https" }),
      1,
    );
    expect(other).toEqual([401]);
  });
});
