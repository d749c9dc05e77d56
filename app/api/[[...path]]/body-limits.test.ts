import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "@/lib/api/operation";
import { API_OPERATIONS } from "@/lib/api/operations";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createTestKey, createTestOrg, grant, importTestDataset, randomEpisodes } from "@/lib/testing/fixtures";
import { randomIp } from "@/lib/testing/http";
import { residentBytes, sendLargeBody } from "@/lib/testing/raw-http";

// Request bodies as a hostile client sends them to a real `next start`: far over the limit, chunked
// (no length given in advance) or with a length declared up front. The server must count the bytes
// as they arrive and stop at the limit: answered 413 before the rest is sent, its memory flat.

const TOTAL = 200 * 1024 * 1024;
/** What the server may have taken in before answering: the 1 MB limit and the socket's buffers. */
const READ_AT_MOST = 16 * 1024 * 1024;
/** What its resident memory may grow by while refusing 200 MB (a body read whole costs several times that). */
const GROWTH_AT_MOST = 48 * 1024 * 1024;

let server: AppServer;
let key: string;
let datasetId: string;

beforeAll(async () => {
  const org = await createTestOrg();
  const episodes = randomEpisodes(2, 34);
  const files = episodes.map((e) => ({
    path: `${e.episode_id}.bin`,
    episode_id: e.episode_id,
    size_bytes: 1,
    sha256: "b".repeat(64),
  }));
  datasetId = await importTestDataset([{ version: "1.0.0", episodes, files }]);
  await grant(org.id, datasetId, "1.0.0");
  key = (await createTestKey(org.id)).secret;
  server = await startAppServer({ RATE_LIMIT_PER_MINUTE: "1000" });
});

afterAll(async () => {
  await server?.stop();
});

// Every operation that reads a body, taken from the list the router is built from, so that one
// added later is held to the limit here without being named.
const READS_A_BODY = API_OPERATIONS.filter((operation) => operation.body);

/**
 * The operation's path with its parameters filled in: the test's dataset and version (the Hub's
 * repository and revision of it) and a notice that does not exist, since a body is counted before
 * anything it is for is looked up.
 */
function pathOf(operation: Operation): string {
  const values: Record<string, string> = {
    id: datasetId,
    version: "1.0.0",
    notice_id: `nt_${"0".repeat(32)}`,
    namespace: "das",
    name: datasetId,
    revision: "main",
  };
  return operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`${operation.path}: give the test a value for {${name}}`);
    return values[name]!;
  });
}

const headers = (operation?: Operation) => ({
  Authorization: `Bearer ${key}`,
  "Content-Type": operation?.bodyType === "form" ? "application/x-www-form-urlencoded" : "application/json",
  "X-Forwarded-For": randomIp(),
  "X-Forwarded-Proto": "https",
});

function expectBodyTooLarge(answer: { status: number; text: string; closedByServer: boolean }) {
  expect(answer.status, answer.text.slice(0, 500)).toBe(413);
  expect(answer.text).toContain('"code":"body_too_large"');
  // The rest of the body is not waited for: the server closes the connection.
  expect(answer.closedByServer).toBe(true);
}

describe("a body over the limit", () => {
  it("is sent below to every operation that reads one, the pull plan and the Hub's paths-info among them", () => {
    // A filter that missed some (or all) would leave the sweep below passing over them unnoticed.
    expect(READS_A_BODY.map((operation) => operation.path)).toEqual(
      expect.arrayContaining([
        "/api/v1/datasets/{id}/versions/{version}/plan",
        "/api/v1/downloads",
        "/api/v1/notices/{notice_id}/acknowledgements",
        "/api/v1/previews",
        "/hub/api/datasets/{namespace}/{name}/paths-info/{revision}",
      ]),
    );
  });

  it.each(READS_A_BODY.map((operation) => [operation.path, operation] as const))(
    "chunked to %s: 413 body_too_large before the rest is sent, memory flat",
    async (_, operation) => {
      const path = pathOf(operation);
      // Warm: the route's code is loaded by a first ordinary request, not by the one measured.
      await fetch(`${server.url}${path}`, { method: "POST", headers: headers(operation), body: "{}" });
      const before = residentBytes(server.pid);
      const answer = await sendLargeBody(server.url, { path, headers: headers(operation), total: TOTAL });
      expectBodyTooLarge(answer);
      expect(answer.sentWhenAnswered).toBeLessThan(READ_AT_MOST);
      expect(residentBytes(server.pid) - before).toBeLessThan(GROWTH_AT_MOST);
    },
  );

  it("declared by Content-Length: 413 before the body is read", async () => {
    const before = residentBytes(server.pid);
    const answer = await sendLargeBody(server.url, {
      path: "/api/v1/downloads",
      headers: headers(),
      total: TOTAL,
      declared: true,
    });
    expectBodyTooLarge(answer);
    expect(answer.sentWhenAnswered).toBeLessThan(READ_AT_MOST);
    expect(residentBytes(server.pid) - before).toBeLessThan(GROWTH_AT_MOST);
  });

  it("to the sign-in endpoints (Auth.js reads form bodies): 413 in the envelope, before the rest is sent", async () => {
    const answer = await sendLargeBody(server.url, {
      path: "/api/auth/callback/credentials",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": randomIp() },
      total: TOTAL,
    });
    expectBodyTooLarge(answer);
    expect(answer.sentWhenAnswered).toBeLessThan(READ_AT_MOST);
  });

  it("still lets a body under the limit through, chunked or not", async () => {
    const body = JSON.stringify({ dataset_id: datasetId, version: "1.0.0" });
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body));
        controller.close();
      },
    });
    for (const sent of [body, chunked]) {
      const res = await fetch(`${server.url}/api/v1/downloads`, {
        method: "POST",
        headers: headers(),
        body: sent,
        duplex: "half",
      } as RequestInit);
      expect(res.status, await res.clone().text()).toBe(201);
      expect((await res.json()).download_id).toMatch(/^dl_/);
    }
  });
});
