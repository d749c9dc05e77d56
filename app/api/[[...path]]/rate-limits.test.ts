import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createTestKey, createTestOrg, grant, importTestDataset, randomEpisodes } from "@/lib/testing/fixtures";
import { randomIp } from "@/lib/testing/http";

// Rate limits as a client meets them: real `next start` processes, real HTTP.
let datasetId: string;
let orgId: string;

beforeAll(async () => {
  orgId = (await createTestOrg()).id;
  datasetId = await importTestDataset([{ version: "1.0.0", episodes: randomEpisodes(3, 5) }]);
  await grant(orgId, datasetId, "1.0.0");
});

const newKey = async () => (await createTestKey(orgId)).secret;

function request(server: AppServer, key: string | undefined, ip: string) {
  // As if through a TLS-terminating proxy that reports the client's address.
  const headers: Record<string, string> = { "x-forwarded-for": ip, "x-forwarded-proto": "https" };
  if (key) headers.authorization = `Bearer ${key}`;
  return fetch(`${server.url}/api/v1/datasets/${datasetId}/versions`, { headers });
}

async function expectRateLimited(res: Response) {
  expect(res.status).toBe(429);
  const body = await res.json();
  expect(body.error.code).toBe("rate_limited");
  expect(body.error.request_id).toBe(res.headers.get("x-request-id"));
  expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]?$/);
  expect(res.headers.get("ratelimit-remaining")).toBe("0");
}

describe("one instance, in-process counters", () => {
  let server: AppServer;
  beforeAll(async () => {
    server = await startAppServer({ RATE_LIMIT_PER_MINUTE: "5", AUTH_FAILURES_PER_MINUTE: "3" });
  });
  afterAll(() => server?.stop());

  it("allows RATE_LIMIT_PER_MINUTE requests per key, counting down, then 429 with Retry-After", async () => {
    const key = await newKey();
    const ip = randomIp();
    for (let remaining = 4; remaining >= 0; remaining--) {
      const res = await request(server, key, ip);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBe("5");
      expect(res.headers.get("ratelimit-remaining")).toBe(String(remaining));
      expect(Number(res.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    }
    await expectRateLimited(await request(server, key, ip));
    // Another key of the same organisation, from the same address, has its own budget.
    expect((await request(server, await newKey(), ip)).status).toBe(200);
  });

  it("limits failed authentication per client address without locking out valid keys from it", async () => {
    const ip = randomIp();
    const bad = `das_${"x".repeat(43)}`;
    for (let i = 0; i < 3; i++) expect((await request(server, bad, ip)).status).toBe(401);
    await expectRateLimited(await request(server, bad, ip));
    await expectRateLimited(await request(server, undefined, ip));
    expect((await request(server, await newKey(), ip)).status).toBe(200);
    expect((await request(server, bad, randomIp())).status).toBe(401);
  });
});

describe.runIf(process.env.REDIS_URL)("two instances sharing Redis", () => {
  let servers: AppServer[];
  beforeAll(async () => {
    const env = {
      REDIS_URL: process.env.REDIS_URL!,
      RATE_LIMIT_KEY_PREFIX: `das:rl:test:shared:${randomIp()}`,
      RATE_LIMIT_PER_MINUTE: "6",
      AUTH_FAILURES_PER_MINUTE: "4",
    };
    servers = await Promise.all([startAppServer(env), startAppServer(env)]);
  });
  afterAll(async () => {
    await Promise.all((servers ?? []).map((s) => s.stop()));
  });

  it("spend one budget per key between them", async () => {
    const key = await newKey();
    const statuses: number[] = [];
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await request(servers[i % 2]!, key, randomIp());
      statuses.push(res.status);
      remaining.push(res.headers.get("ratelimit-remaining"));
      if (res.status === 429) await expectRateLimited(res);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    expect(remaining.slice(0, 6)).toEqual(["5", "4", "3", "2", "1", "0"]);
  });

  it("spend one failed-authentication budget per address between them", async () => {
    const ip = randomIp();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await request(servers[i % 2]!, `das_${"y".repeat(43)}`, ip)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
  });
});
