import http from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync, gzipSync, inflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiDispatcher } from "./api-dispatch";
import { route, type RouteHandler } from "./route";
import { JSON_HEADERS } from "./respond";
import { conditionalResponse } from "./conditional";
import { jsonBody } from "../cache/cacheable";

/*
 * The dispatcher in front of a bare Node HTTP server, with endpoints made for the test: what it
 * does around a handler (routing, params, the request it builds, HEAD, compression, streaming,
 * failures). The API's own answers through it are the HTTP suites' (app/api/v1/*.test.ts), which
 * run against `next start`, where the dispatcher answers every /api/v1 request.
 */

const NOT_OURS = 418;
const json = (value: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(value), { headers: { ...JSON_HEADERS, ...headers } });
const big = JSON.stringify({ items: Array.from({ length: 2000 }, (_, i) => ({ i, text: `item ${i}` })) });
let cancelled = 0;
/** One body served again and again, as the instance's cache serves a page. */
const cached = jsonBody(JSON.parse(big));

const echo: RouteHandler = async (request, context) =>
  json({
    method: request.method,
    params: await context.params,
    query: Object.fromEntries(new URL(request.url).searchParams),
    forwardedFor: request.headers.get("x-forwarded-for"),
    forwardedProto: request.headers.get("x-forwarded-proto"),
    body: request.method === "POST" ? (await request.text()).length : null,
  });

const streamed = (chunks: number, headers: Record<string, string> = {}): Response => {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === chunks) return controller.close();
      controller.enqueue(
        new TextEncoder().encode(
          `${sent === 0 ? "[" : ","}${JSON.stringify("x".repeat(1000))}${++sent === chunks ? "]" : ""}`,
        ),
      );
    },
    cancel() {
      cancelled++;
    },
  });
  return new Response(body, { headers: { ...JSON_HEADERS, ...headers } });
};

const dispatch = apiDispatcher([
  { path: "/api/v1/things/[id]/echo", methods: route({ GET: echo, POST: echo }) },
  {
    path: "/api/v1/big",
    methods: route({
      GET: async () => new Response(big, { headers: { ...JSON_HEADERS, Vary: "Authorization", ETag: '"e"' } }),
    }),
  },
  {
    path: "/api/v1/cached",
    methods: route({ GET: async (request) => conditionalResponse(request, cached, "immutable") }),
  },
  { path: "/api/v1/small", methods: route({ GET: async () => json({ small: true }) }) },
  {
    path: "/api/v1/untransformed",
    methods: route({
      GET: async () => new Response(big, { headers: { ...JSON_HEADERS, "Cache-Control": "private, no-transform" } }),
    }),
  },
  { path: "/api/v1/stream", methods: route({ GET: async () => streamed(200) }) },
  // 100 MB if read to the end: more than any socket buffers, so that a client going away stops it.
  { path: "/api/v1/endless", methods: route({ GET: async () => streamed(100_000) }) },
  { path: "/api/v1/ignores-body", methods: route({ POST: async () => json({ read: false }) }) },
  {
    path: "/api/v1/fails",
    methods: route({
      GET: async () => {
        throw new Error("boom");
      },
    }),
  },
]);

let server: http.Server;
let port: number;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (!dispatch(req, res)) {
      res.statusCode = NOT_OURS;
      res.end("not the API's");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

type Answer = { status: number; headers: http.IncomingHttpHeaders; bytes: Buffer; json: () => any };

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** A request with the path sent exactly as given, and the answer's bytes as they came (not decompressed). */
function send(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers =
      options.body === undefined
        ? options.headers
        : { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) };
    const req = http.request(
      { agent, host: "127.0.0.1", port, path, method: options.method ?? "GET", headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const bytes = Buffer.concat(chunks);
          resolve({ status: res.statusCode!, headers: res.headers, bytes, json: () => JSON.parse(bytes.toString()) });
        });
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

describe("which requests the dispatcher answers", () => {
  it.each([
    "/api/v1x",
    "/api/v10/datasets",
    "/api/auth/session",
    "/api",
    "/API/v1/big",
    "/review",
    "/",
    "/api/v1/../review",
    "/api/v1/%2e%2e/x",
  ])("leaves %s to Next", async (path) => {
    expect((await send(path)).status).toBe(NOT_OURS);
  });

  it.each(["/api/v1", "/api/v1/", "/api/v1?x=1", "/api/v1/nothing", "/api/v1/things/a/b/echo", "/api/v1/big/extra"])(
    "answers %s with the JSON 404",
    async (path) => {
      const res = await send(path);
      expect(res.status).toBe(404);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      expect(res.json().error.code).toBe("not_found");
      expect(res.headers["x-request-id"]).toMatch(/^req_/);
    },
  );

  it("answers a method the endpoint does not have with the JSON 405 naming those it has", async () => {
    const res = await send("/api/v1/small", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("GET");
    expect(res.json().error.code).toBe("method_not_allowed");
  });

  it("answers a path that is not valid percent-encoding with a 400 envelope", async () => {
    const res = await send("/api/v1/things/%ZZ/echo");
    expect(res.status).toBe(400);
    expect(res.json().error.code).toBe("invalid_parameter");
  });
});

describe("the request a handler receives", () => {
  it("has its params percent-decoded, a trailing slash and dot segments resolved as Next does, and the query as sent", async () => {
    const res = await send("/api/v1/things/a%2Fb%20%C3%BC/echo/?limit=5&cursor=a%2Bb");
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ method: "GET", params: { id: "a/b ü" }, query: { limit: "5", cursor: "a+b" } });
    expect((await send("/api/v1/things/x/../y/echo")).json().params).toEqual({ id: "y" });
  });

  it("carries the x-forwarded-* headers Next fills in when no proxy has, and keeps a proxy's", async () => {
    expect((await send("/api/v1/things/a/echo")).json()).toMatchObject({
      forwardedFor: "127.0.0.1",
      forwardedProto: "http",
    });
    const proxied = await send("/api/v1/things/a/echo", {
      headers: { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" },
    });
    expect(proxied.json()).toMatchObject({ forwardedFor: "203.0.113.9", forwardedProto: "https" });
  });

  it("streams a POST body to the handler, and a body it never reads does not spoil the connection", async () => {
    const body = "y".repeat(300_000);
    expect(
      (
        await send("/api/v1/things/a/echo", { method: "POST", body, headers: { "content-type": "application/json" } })
      ).json().body,
    ).toBe(body.length);
    // One socket (maxSockets 1): the next request follows the unread body on the same connection.
    expect((await send("/api/v1/ignores-body", { method: "POST", body })).status).toBe(200);
    expect((await send("/api/v1/small")).json()).toEqual({ small: true });
  });
});

describe("the answer", () => {
  it("carries a whole body with its length, and HEAD the same head without it", async () => {
    const get = await send("/api/v1/big");
    expect(get.bytes.toString()).toBe(big);
    expect(get.headers["content-length"]).toBe(String(Buffer.byteLength(big)));
    expect(get.headers.vary).toBe("Authorization, Accept-Encoding");
    const head = await send("/api/v1/big", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.bytes.length).toBe(0);
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.headers["content-type"]).toBe(get.headers["content-type"]);
  });

  it.each([
    ["gzip", "gzip"],
    ["gzip, deflate, br", "gzip"],
    ["deflate, gzip", "gzip"],
    ["deflate", "deflate"],
    ["gzip;q=0, deflate", "deflate"],
    ["br", undefined],
    ["identity", undefined],
    ["gzip;q=0", undefined],
  ])("compresses JSON of 1 KiB or more for Accept-Encoding %s as %s", async (accept, expected) => {
    const res = await send("/api/v1/big", { headers: { "accept-encoding": accept } });
    expect(res.headers["content-encoding"]).toBe(expected);
    expect(res.headers["content-length"]).toBe(String(res.bytes.length));
    const decoded =
      expected === "gzip" ? gunzipSync(res.bytes) : expected === "deflate" ? inflateSync(res.bytes) : res.bytes;
    expect(decoded.toString()).toBe(big);
    if (expected) expect(res.bytes.length).toBeLessThan(Buffer.byteLength(big) / 2);
  });

  it("gzips a cached body once, the first time a client takes gzip, and sends that copy from then on", async () => {
    expect(cached.gzipped).toBeUndefined();
    const plain = await send("/api/v1/cached");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(cached.gzipped).toBeUndefined();
    const first = await send("/api/v1/cached", { headers: { "accept-encoding": "gzip" } });
    expect(first.headers["content-encoding"]).toBe("gzip");
    expect(first.headers.etag).toBe(cached.etag);
    expect(gunzipSync(first.bytes).equals(plain.bytes)).toBe(true);
    expect(Buffer.from(await cached.gzipped!).equals(first.bytes)).toBe(true);
    // Another valid gzip of the same bytes, put in its place: what is sent is the kept copy, not a new one.
    const kept = gzipSync(cached.bytes, { level: 1 });
    cached.gzipped = Promise.resolve(kept);
    const again = await send("/api/v1/cached", { headers: { "accept-encoding": "gzip" } });
    expect(again.bytes.equals(kept)).toBe(true);
    expect(again.headers["content-length"]).toBe(String(kept.length));
    // deflate and 304 are as for any answer.
    expect(
      inflateSync((await send("/api/v1/cached", { headers: { "accept-encoding": "deflate" } })).bytes).equals(
        plain.bytes,
      ),
    ).toBe(true);
    const unchanged = await send("/api/v1/cached", {
      headers: { "accept-encoding": "gzip", "if-none-match": cached.etag },
    });
    expect(unchanged.status).toBe(304);
    expect(unchanged.bytes.length).toBe(0);
  });

  it("leaves small answers and no-transform answers as they are, still varying on Accept-Encoding", async () => {
    const small = await send("/api/v1/small", { headers: { "accept-encoding": "gzip" } });
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(small.headers.vary).toBe("Accept-Encoding");
    expect(small.json()).toEqual({ small: true });
    const untransformed = await send("/api/v1/untransformed", { headers: { "accept-encoding": "gzip" } });
    expect(untransformed.headers["content-encoding"]).toBeUndefined();
    expect(untransformed.bytes.toString()).toBe(big);
  });

  it("streams a body that comes in pieces, compressed or not, complete and in order", async () => {
    const plain = await send("/api/v1/stream");
    expect(plain.headers["transfer-encoding"]).toBe("chunked");
    expect(plain.headers["content-length"]).toBeUndefined();
    const parsed = plain.json() as string[];
    expect(parsed).toHaveLength(200);
    const gzipped = await send("/api/v1/stream", { headers: { "accept-encoding": "gzip" } });
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gzipped.bytes).equals(plain.bytes)).toBe(true);
    const deflated = await send("/api/v1/stream", { headers: { "accept-encoding": "deflate" } });
    expect(inflateSync(deflated.bytes).equals(plain.bytes)).toBe(true);
  });

  it("cancels a streamed body when the client goes away, and keeps serving", async () => {
    const before = cancelled;
    await new Promise<void>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, path: "/api/v1/endless" }, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", (error: NodeJS.ErrnoException) => (error.code === "ECONNRESET" ? resolve() : reject(error)));
      req.end();
    });
    await expect.poll(() => cancelled, { timeout: 5000 }).toBe(before + 1);
    expect((await send("/api/v1/small")).status).toBe(200);
  });

  it("turns a handler's failure into the 500 envelope", async () => {
    const res = await send("/api/v1/fails");
    expect(res.status).toBe(500);
    expect(res.json().error).toMatchObject({ code: "internal_error", request_id: res.headers["x-request-id"] });
    expect(res.bytes.toString()).not.toContain("boom");
  });
});
