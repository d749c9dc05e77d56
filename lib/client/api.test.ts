import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, ApiError, MAX_ANSWER_BYTES, MAX_PAGES, TransportError } from "./api";
import { MAX_WAIT_SECONDS } from "./retry";
import { fetchFile } from "./transfer";

// `das`'s API client against a hostile service, served by the test itself on 127.0.0.1: one that
// answers a next cursor for ever (the same one, or always a new one), an answer without end, and a
// Retry-After of years. The client must stop each time, with an error that says why, in bounded
// memory and time.

type Handler = (request: IncomingMessage, response: ServerResponse, url: URL) => void;

let server: Server;
let base: string;
const asked = new Map<string, number>();
let sentOfEndless = 0;
let endlessClosed: Promise<void>;

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
};
const envelope = (code: string, message: string) => ({ error: { code, message, request_id: "req_hostile" } });

// A cursor of the shape the API documents (`<payload>.<22-character MAC>`), so that the client takes
// the answer as well formed and only its own bounds can stop it.
const cursor = (n: number) => `c${n}.${"m".repeat(22)}`;
const cursorNumber = (text: string | null) => Number((text ?? cursor(0)).split(".")[0]!.slice(1));

const routes: Record<string, Handler> = {
  // The same cursor, again and again.
  "/api/v1/notices": (_, response) => json(response, 200, { notices: [], next_cursor: cursor(0) }),
  // Always a new cursor.
  "/api/v1/datasets": (_, response, url) =>
    json(response, 200, {
      datasets: [],
      next_cursor: cursor(cursorNumber(url.searchParams.get("cursor")) + 1),
    }),
  // A body that never ends.
  "/api/v1/licences": (_, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.write('{"licences":[');
    const piece = Buffer.alloc(1024 * 1024, 0x20);
    endlessClosed = new Promise((resolve) => {
      response.on("close", () => resolve());
      const more = () => {
        while (!response.destroyed && sentOfEndless < 4 * MAX_ANSWER_BYTES) {
          sentOfEndless += piece.length;
          if (!response.write(piece)) return void response.once("drain", more);
        }
        response.end("]}");
      };
      more();
    });
  },
  // Come back in 31 years; or in a date as far away.
  "/api/v1/datasets/years/versions": (_, response) =>
    json(response, 429, envelope("rate_limited", "Too many requests for this key."), { "retry-after": "999999999" }),
  "/api/v1/datasets/dated/versions": (_, response) =>
    json(response, 503, envelope("unavailable", "Temporarily unavailable."), {
      "retry-after": new Date(Date.now() + 86_400_000).toUTCString(),
    }),
  // A wait within reason, once.
  "/api/v1/datasets/briefly/versions": (_, response) => {
    if ((asked.get("/api/v1/datasets/briefly/versions") ?? 0) === 1)
      return json(response, 429, envelope("rate_limited", "Too many requests for this key."), { "retry-after": "2" });
    json(response, 200, { dataset_id: "briefly", versions: [], next_cursor: null });
  },
  // A store that asks for years before a retry of a file.
  "/store/years": (_, response) => {
    response.writeHead(503, { "retry-after": "999999999" });
    response.end();
  },
};

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url!, "http://127.0.0.1");
    asked.set(url.pathname, (asked.get(url.pathname) ?? 0) + 1);
    const route = routes[url.pathname];
    if (route) return route(request, response, url);
    json(response, 404, envelope("not_found", "No such endpoint."));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A client whose waits are recorded, not slept. */
function client() {
  const waits: number[] = [];
  const api = new ApiClient({
    baseUrl: base,
    key: "das_hostile",
    sleep: async (ms) => void waits.push(ms),
  });
  return { api, waits };
}

describe("a list whose next cursor never ends", () => {
  it("stops at a cursor answered before, at the second page", async () => {
    const error = await client()
      .api.listNotices()
      .catch((e) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error.message).toMatch(/answered a next cursor it had answered before: stopped after 2 pages/);
    expect(asked.get("/api/v1/notices")).toBe(2);
  });

  it(`stops after ${MAX_PAGES} pages of new cursors`, async () => {
    const error = await client()
      .api.listDatasets()
      .catch((e) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error.message).toContain(`after ${MAX_PAGES} pages`);
    expect(asked.get("/api/v1/datasets")).toBe(MAX_PAGES);
  });
});

describe("an answer without end", () => {
  it("is read up to its bound and no further, the connection dropped", async () => {
    const before = process.memoryUsage().rss;
    const error = await client()
      .api.listLicences()
      .catch((e) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error.message).toContain(`more than ${MAX_ANSWER_BYTES} bytes`);
    await endlessClosed;
    // The server could send a little beyond the bound before it saw the connection go.
    expect(sentOfEndless).toBeLessThan(MAX_ANSWER_BYTES + 16 * 1024 * 1024);
    expect(process.memoryUsage().rss - before).toBeLessThan(3 * MAX_ANSWER_BYTES);
  });
});

describe("a Retry-After beyond a minute", () => {
  it("is not waited for: the error says how long the service asked for and that das waits a minute at most", async () => {
    for (const dataset of ["years", "dated"]) {
      const { api, waits } = client();
      const error = await api.listVersions(dataset).catch((e) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error.message).toMatch(
        new RegExp(`asks to wait [0-9]+ s before a retry \\(Retry-After\\), longer than the ${MAX_WAIT_SECONDS} s`),
      );
      expect(waits).toEqual([]);
      expect(asked.get(`/api/v1/datasets/${dataset}/versions`)).toBe(1);
    }
  });

  it("while one within it is waited for, and the request made again", async () => {
    const { api, waits } = client();
    expect(await api.listVersions("briefly")).toEqual([]);
    expect(waits).toEqual([2000]);
  });

  it("from the store fails that file at once, saying why", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "das-wait-"));
    try {
      const waits: number[] = [];
      const file = { path: "a.bin", size_bytes: 3, sha256: "0".repeat(64), episode_ids: [], stream: null };
      const result = await fetchFile(file as never, `${base}/store/years`, path.join(dir, "a.bin"), {
        sleep: async (ms) => void waits.push(ms),
      });
      expect(result).toMatchObject({
        ok: false,
        reason: expect.stringContaining(`longer than the ${MAX_WAIT_SECONDS} s`),
      });
      expect(waits).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
