import http from "node:http";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { openApiDocument } from "@/lib/api/openapi";
import { ERROR_STATUS, type ErrorCode } from "@/lib/errors";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { rawRequest, type RawResponse } from "@/lib/testing/raw-http";
import { createTestKey, createTestOrg, grant, importTestDataset, randomEpisodes } from "@/lib/testing/fixtures";

// The whole stack over real HTTP: Next's routing, the proxy, every handler, the production build.
let server: AppServer;
let key: string;
let datasetId: string;
let episodeId: string;
let episodeIds: string[];

beforeAll(async () => {
  const org = await createTestOrg();
  const episodes = randomEpisodes(30, 11);
  episodeId = episodes[0]!.episode_id;
  episodeIds = episodes.map((e) => e.episode_id);
  datasetId = await importTestDataset([
    {
      version: "1.0.0",
      episodes,
      annotations: [{ episode_id: episodeId, label: "grasp", start_s: 0, end_s: 1 }],
      // Files for some episodes, so that a fuzzed download can succeed as well as fail.
      files: [
        { path: "README.md", size_bytes: 10, sha256: "a".repeat(64) },
        ...episodes.slice(0, 10).map((e) => ({
          path: `${e.episode_id}/cam.mp4`,
          episode_id: e.episode_id,
          stream: "cam",
          size_bytes: 100,
          sha256: "b".repeat(64),
        })),
      ],
    },
    { version: "2.0.0", episodes },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  key = (await createTestKey(org.id)).secret;
  server = await startAppServer({ RATE_LIMIT_PER_MINUTE: "1000000", AUTH_FAILURES_PER_MINUTE: "1000000" });
});

afterAll(async () => {
  await server?.stop();
});

function header(res: RawResponse, name: string): string {
  const value = res.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(", ") : (value ?? "");
}

/** What every API response must be: JSON, with a request id; errors in the one envelope, never 5xx. */
function expectContract(res: RawResponse, method = "GET") {
  const context = `${res.status} ${JSON.stringify(res.headers)} ${res.text.slice(0, 300)}`;
  expect(res.status, context).toBeLessThan(500);
  expect(header(res, "x-request-id"), context).toMatch(/^req_[0-9A-Za-z]+$/);
  expect(header(res, "strict-transport-security"), context).toContain("max-age=");
  expect(header(res, "ratelimit-limit"), context).toMatch(/^\d+$/);
  if (method === "HEAD") return;
  expect(header(res, "content-type"), context).toMatch(/^application\/json/);
  const body = JSON.parse(res.text);
  if (res.status >= 400) {
    expect(Object.keys(body)).toEqual(["error"]);
    expect(Object.keys(body.error).sort()).toEqual(["code", "message", "request_id"]);
    expect(ERROR_STATUS[body.error.code as ErrorCode], context).toBe(res.status);
    expect(body.error.request_id).toBe(header(res, "x-request-id"));
    expect(body.error.message.length).toBeGreaterThan(10);
  }
}

const auth = () => ({ authorization: `Bearer ${key}` });
const get = (path: string, headers: Record<string, string> = auth()) => rawRequest(server.url, { path, headers });

/** Fills {id}, {version} and {episode_id}; a function replacer, because fuzzed text may contain `$'`. */
const fill = (template: string, values: Record<string, string>) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => values[name]!);

/**
 * Every operation of the API, from its OpenAPI document: a new endpoint is fuzzed as soon as it is
 * documented. The Hub protocol's (under /hub, whose answers include redirects and bodiless HEADs)
 * are fuzzed by app/hub/http.test.ts.
 */
const operations = () =>
  Object.entries(openApiDocument().paths ?? {})
    .filter(([template]) => template.startsWith("/api/v1/"))
    .flatMap(([template, item]) =>
      (["get", "post"] as const).filter((m) => item?.[m]).map((method) => ({ template, method })),
    );
const templates = () => [...new Set(operations().map((o) => o.template))];
const getTemplates = () => operations().flatMap((o) => (o.method === "get" ? [o.template] : []));
/** The query parameters the document names, and near misses of them. */
const queryNames = () => [
  ...new Set(
    operations().flatMap(({ template, method }) =>
      ((openApiDocument().paths![template]![method]!.parameters ?? []) as { in?: string; name?: string }[]).flatMap(
        (p) => (p.in === "query" && p.name ? [p.name] : []),
      ),
    ),
  ),
  "outcomes",
  "LIMIT",
  "%ZZ",
  "a[]",
];

// Segments a client might send: real values, near misses, and hostile bytes (sent unnormalised).
const segment = () =>
  fc.oneof(
    fc.constantFrom(
      datasetId,
      "1.0.0",
      "2.0.0",
      episodeId,
      "..",
      ".",
      "%",
      "%2F",
      "%00",
      "%ZZ",
      "%E0%A4%A",
      "%C3%BC",
      "~",
      "a b".replace(" ", "%20"),
      "x".repeat(3000),
    ),
    fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@%-]{1,40}$/),
  );

const queryPart = () =>
  fc.tuple(
    fc.constantFrom(...queryNames()),
    fc.oneof(
      fc.constantFrom("", "0", "1", "500", "501", "-1", "1e3", "failure", "%ZZ", "%00", "x".repeat(2000)),
      fc.stringMatching(/^[A-Za-z0-9._~%-]{0,60}$/),
    ),
  );

describe("every API response over HTTP", () => {
  it("fuzzes every operation the OpenAPI document lists, with every query parameter it names", () => {
    expect(templates()).toEqual(
      expect.arrayContaining([
        "/api/v1/datasets",
        "/api/v1/episodes/{episode_id}/annotations",
        "/api/v1/downloads",
        "/api/v1/previews",
      ]),
    );
    expect(queryNames()).toEqual(expect.arrayContaining(["outcome", "environment", "limit", "cursor", "version"]));
  });

  it.each(getTemplates().map((t) => [t]))(
    "%s: random path segments and query strings give 2xx JSON or a 4xx envelope",
    async (template) => {
      await fc.assert(
        fc.asyncProperty(
          segment(),
          segment(),
          segment(),
          fc.array(queryPart(), { maxLength: 4 }),
          async (id, version, episode, query) => {
            const path = fill(template, { id, version, episode_id: episode });
            const res = await get(`${path}${query.length ? `?${query.map(([k, v]) => `${k}=${v}`).join("&")}` : ""}`);
            expectContract(res);
          },
        ),
        { numRuns: 300 },
      );
    },
  );

  it("random paths anywhere under /api give the JSON 404 envelope, never Next's HTML page", async () => {
    await fc.assert(
      // Empty segments make `//`, which Next would answer with a bodiless 308 before any code of ours.
      fc.asyncProperty(
        fc.array(fc.oneof(segment(), fc.constant("")), { minLength: 1, maxLength: 6 }),
        fc.constantFrom("/api", "/API", "/Api", "/api/", "//api"),
        async (segments, prefix) => {
          const path = `${prefix}/${segments.join("/")}`;
          // `..` segments that climb out of /api address the portal, not the API.
          fc.pre(/^\/api(\/|$)/i.test(new URL(path.replace(/\/+/g, "/"), "http://x").pathname));
          const res = await get(path);
          expectContract(res);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("random methods, Accept, Authorization, Content-Type and bodies never break the envelope", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...templates()),
        fc.constantFrom(
          "GET",
          "POST",
          "PUT",
          "PATCH",
          "DELETE",
          "HEAD",
          "OPTIONS",
          "TRACE",
          "PROPFIND",
          "MKCOL",
          "PURGE",
        ),
        fc.option(
          fc.constantFrom(
            "application/json",
            "*/*",
            "text/html",
            "application/xml",
            "application/json;q=0",
            "text/*",
            "",
            "garbage;;;",
            "application/*",
          ),
          { nil: undefined },
        ),
        fc.option(
          fc.oneof(
            fc.constant(`Bearer ${"k".repeat(0)}`),
            fc.constant("Basic dXNlcjpwYXNz"),
            fc.stringMatching(/^[ -~]{0,80}$/),
            fc.constant(`Bearer ${key}`),
          ),
          { nil: undefined },
        ),
        fc.option(
          fc.constantFrom(
            "application/json",
            "text/plain",
            "multipart/form-data; boundary=x",
            "application/json; charset=utf-16",
          ),
          { nil: undefined },
        ),
        fc.option(fc.constantFrom("{", "null", "[]", '{"dataset_id":1}', "x".repeat(5000)), { nil: undefined }),
        async (template, method, accept, authorization, contentType, body) => {
          const path = fill(template, { id: datasetId, version: "1.0.0", episode_id: episodeId });
          const headers: Record<string, string> = {};
          if (accept !== undefined) headers.accept = accept;
          if (authorization !== undefined) headers.authorization = authorization;
          if (contentType !== undefined) headers["content-type"] = contentType;
          const res = await rawRequest(server.url, {
            method,
            path,
            headers,
            body: method === "GET" || method === "HEAD" ? undefined : body,
          });
          expectContract(res, method);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("sends a client that takes gzip the same page gzipped (Next compresses it), with the same ETag", async () => {
    const path = `/api/v1/datasets/${datasetId}/versions/1.0.0/episodes?limit=30`;
    const plain = await get(path);
    expect(plain.status).toBe(200);
    expect(Buffer.byteLength(plain.text)).toBeGreaterThan(1024);
    for (let i = 0; i < 2; i++) {
      const res = await new Promise<{ headers: http.IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
        http
          .get(`${server.url}${path}`, { headers: { ...auth(), "accept-encoding": "gzip" } }, (r) => {
            const chunks: Buffer[] = [];
            r.on("data", (c: Buffer) => chunks.push(c));
            r.on("end", () => resolve({ headers: r.headers, bytes: Buffer.concat(chunks) }));
          })
          .on("error", reject);
      });
      expect(res.headers["content-encoding"]).toBe("gzip");
      expect(res.headers.etag).toBe(header(plain, "etag"));
      expect(gunzipSync(res.bytes).toString()).toBe(plain.text);
    }
  });

  it("answers other methods with 405 and an Allow header", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const res = await rawRequest(server.url, { method, path: "/api/v1/datasets", headers: auth() });
      expectContract(res);
      expect(res.status).toBe(405);
      expect(header(res, "allow")).toBe("GET");
    }
  });

  it("answers OPTIONS and methods Next does not dispatch (TRACE, WebDAV's) with a JSON 405 naming the allowed ones", async () => {
    for (const [path, allowed] of [
      ["/api/v1/datasets", "GET"],
      [`/api/v1/datasets/${datasetId}/versions/1.0.0/episodes`, "GET"],
      [`/api/v1/episodes/${episodeId}/annotations`, "GET"],
      ["/api/v1/downloads", "POST"],
      ["/api/v1/openapi.json", "GET"],
    ]) {
      for (const method of ["OPTIONS", "TRACE", "PROPFIND", "MKCOL", "PURGE", "SEARCH"]) {
        const res = await rawRequest(server.url, { method, path: path!, headers: auth() });
        expectContract(res, method);
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(header(res, "allow"), `${method} ${path}`).toBe(allowed);
        expect(JSON.parse(res.text).error.message).toContain(`${method} is not supported here`);
      }
    }
    // HEAD is a GET without its body.
    const head = await rawRequest(server.url, { method: "HEAD", path: "/api/v1/datasets", headers: auth() });
    expectContract(head, "HEAD");
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    // A method on a path that is no endpoint is the 404 of that path.
    const nowhere = await rawRequest(server.url, { method: "TRACE", path: "/api/v1/nothing", headers: auth() });
    expectContract(nowhere, "TRACE");
    expect(nowhere.status).toBe(404);
  });

  it.each([
    ["/api", 404],
    ["/api/", 404],
    ["/api/v1", 404],
    ["/api//v1/datasets", 404],
    ["/api/v1//datasets", 404],
    ["//api/v1/datasets", 404],
    ["/api\\v1\\datasets", 404],
    ["/API/v1/datasets", 404],
    ["/Api", 404],
    ["/api/v1/datasets;x", 404],
    ["/api/v1/%2e%2e/datasets", 404],
    ["/api/v1/datasets/", 200],
  ])("answers %s with JSON (%i), not a redirect", async (path, status) => {
    const res = await get(path);
    expectContract(res);
    expect(res.status).toBe(status);
    expect(header(res, "location")).toBe("");
  });

  it("answers a path that is not valid percent-encoding with 400, not Next's plain-text 500", async () => {
    const res = await get(`/api/v1/datasets/%ZZ/versions`);
    expectContract(res);
    expect(res.status).toBe(400);
  });

  // Auth.js's endpoints share /api: what it has no action for comes in the same envelope, and any
  // method but GET and POST is the JSON 405. (Its browser flows answer with redirects to the
  // sign-in page, as they must.)
  it.each([
    ["GET", "/api/auth", 404],
    ["GET", "/api/auth/xyz", 404],
    ["POST", "/api/auth/xyz", 404],
    ["GET", "/api/auth/session/../../v1", 404],
    ["PUT", "/api/auth/session", 405],
    ["DELETE", "/api/auth/signout", 405],
    ["GET", "/api/auth/verify-request", 404],
    ["POST", "/api/auth/session", 400],
    ["GET", "/api/auth/session?callbackUrl=%", 400],
    ["GET", "/api/auth/signin?callbackUrl=javascript:alert(1)", 400],
  ])("answers %s %s in the envelope (%i)", async (method, path, status) => {
    const res = await rawRequest(server.url, { method, path });
    expectContract(res, method);
    expect(res.status).toBe(status);
  });
});

describe("POST /api/v1/downloads over HTTP", () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    rawRequest(server.url, { method: "POST", path: "/api/v1/downloads", headers: { ...auth(), ...headers }, body });

  /** A fuzzed download body: mostly the right shape with near-miss values, sometimes anything at all. */
  const downloadBody = () => {
    const often = <T>(value: T, ...others: fc.Arbitrary<unknown>[]) =>
      fc.oneof({ weight: 3, arbitrary: fc.constant(value) }, ...others);
    const chaotic = fc.record(
      {
        episode_ids: fc.oneof(
          fc.uniqueArray(fc.oneof(fc.constantFrom(...episodeIds), fc.string({ maxLength: 20 })), { maxLength: 6 }),
          fc.array(fc.constantFrom(...episodeIds.slice(0, 12)), { maxLength: 4 }),
          fc.jsonValue(),
        ),
        filter: fc.oneof(
          fc.record(
            {
              outcome: fc.constantFrom("success", "failure", "partial", "", "x"),
              environment: fc.constantFrom("kitchen", "lab", "outdoor yard", "\u0000"),
            },
            { requiredKeys: [] },
          ),
          fc.jsonValue(),
        ),
        streams: fc.oneof(
          fc.array(fc.constantFrom("cam", "joints", "lidar", "../cam", "", "CAM"), { maxLength: 3 }),
          fc.jsonValue(),
        ),
      },
      { requiredKeys: [] },
    );
    // Well-formed scopes, some of which match files (the first ten episodes have a cam file).
    const streams = fc.option(fc.uniqueArray(fc.constantFrom("cam", "joints"), { minLength: 1 }), { nil: undefined });
    const wellFormed = fc.oneof(
      streams.map((s) => ({ streams: s })),
      fc
        .tuple(fc.uniqueArray(fc.constantFrom(...episodeIds.slice(0, 14)), { minLength: 1, maxLength: 4 }), streams)
        .map(([ids, s]) => ({ episode_ids: ids, streams: s })),
      fc
        .tuple(fc.constantFrom("success", "failure", "partial"), streams)
        .map(([outcome, s]) => ({ filter: { outcome }, streams: s })),
    );
    const scope = fc.oneof({ weight: 2, arbitrary: wellFormed }, { weight: 1, arbitrary: chaotic });
    const shaped = fc
      .tuple(
        often(
          datasetId,
          fc.constantFrom("", "ds", datasetId.toUpperCase(), `${datasetId}/..`),
          fc.string(),
          fc.jsonValue(),
        ),
        often("1.0.0", fc.constantFrom("2.0.0", "9.9.9", "1.0", ""), fc.string(), fc.jsonValue()),
        scope,
        fc.option(fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue(), { maxKeys: 2 }), { freq: 4, nil: {} }),
      )
      .map(([dataset_id, version, scope, extra]) => ({ ...extra, dataset_id, version, ...scope }));
    return fc.oneof({ weight: 4, arbitrary: shaped }, { weight: 1, arbitrary: fc.jsonValue() });
  };

  it("answers random JSON bodies with a download or a 4xx envelope, never 5xx", async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        downloadBody(),
        fc.option(
          fc.oneof(fc.constant("fixed-key"), fc.stringMatching(/^[!-~]{1,40}$/), fc.constantFrom("", "two words")),
          { nil: undefined },
        ),
        async (body, idempotencyKey) => {
          const res = await post(JSON.stringify(body), {
            "content-type": "application/json",
            ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
          });
          expectContract(res, "POST");
          statuses.add(res.status);
          expect([200, 201, 400, 403, 404, 409, 422], res.text.slice(0, 300)).toContain(res.status);
          if (res.status < 300) {
            const download = JSON.parse(res.text);
            expect(download.dataset_id).toBe(datasetId);
            expect(download.file_count).toBe(download.files.length);
            expect(download.files.length).toBeGreaterThan(0);
            for (const file of download.files) expect(file.url).toContain("X-Amz-Signature=");
          } else {
            expect(res.text).not.toContain("X-Amz-");
          }
        },
      ),
      // Besides the random ones, a body of each kind, so that both sides are reached whatever the seed.
      {
        numRuns: 400,
        examples: [
          [{ dataset_id: datasetId, version: "1.0.0", episode_ids: [episodeIds[0]!] }, undefined],
          [{ dataset_id: datasetId }, undefined],
          [{ dataset_id: "no-such-dataset", version: "1.0.0" }, undefined],
        ],
      },
    );
    // The fuzzer reached both sides: new downloads and refusals.
    expect([...statuses]).toEqual(expect.arrayContaining([201, 400, 404]));
  });

  // No text of these lengths is a valid download (dataset_id and version are required): always 400.
  it("answers random text bodies, as JSON or not, with 400 invalid_body", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: "grapheme", maxLength: 200 }),
          fc.string({ unit: "binary-ascii", maxLength: 200 }),
          fc.constantFrom("{", "{}}", '{"dataset_id":', "\u0000", "[", "nul"),
        ),
        fc.constantFrom(
          "application/json",
          "application/json; charset=utf-8",
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
        ),
        async (text, contentType) => {
          const res = await post(text, { "content-type": contentType });
          expectContract(res, "POST");
          expect(res.status, res.text).toBe(400);
          expect(JSON.parse(res.text).error.code).toBe("invalid_body");
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("POST /api/v1/previews over HTTP", () => {
  /** A fuzzed preview body: mostly the right shape with near-miss values, sometimes anything at all. */
  const previewBody = () => {
    const shaped = fc.record(
      {
        episode_id: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...episodeIds) },
          fc.constantFrom("", `${episodeId}\u0000`, episodeId.toUpperCase(), "../x", "x".repeat(3000)),
          fc.string(),
          fc.jsonValue(),
        ),
        version: fc.oneof(
          fc.constantFrom("1.0.0", "2.0.0", "9.9.9", "1.0", ""),
          fc.string({ maxLength: 12 }),
          fc.jsonValue(),
        ),
        streams: fc.oneof(
          fc.array(fc.constantFrom("cam", "joints", "../cam", "", "CAM", "cam\u0000"), { maxLength: 3 }),
          fc.jsonValue(),
        ),
        extra: fc.jsonValue(),
      },
      { requiredKeys: ["episode_id"] },
    );
    // Well-formed: the first ten episodes have a cam file to watch.
    const wellFormed = fc.record(
      {
        episode_id: fc.constantFrom(...episodeIds.slice(0, 14)),
        version: fc.constantFrom("1.0.0", "2.0.0"),
        streams: fc.constantFrom(["cam"], ["joints"]),
      },
      { requiredKeys: ["episode_id"] },
    );
    return fc.oneof(
      { weight: 2, arbitrary: wellFormed },
      { weight: 3, arbitrary: shaped },
      { weight: 1, arbitrary: fc.jsonValue() },
    );
  };

  it("answers random JSON bodies with a preview or a 4xx envelope, never 5xx, and URLs only with a preview", async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(previewBody(), async (body) => {
        const res = await rawRequest(server.url, {
          method: "POST",
          path: "/api/v1/previews",
          headers: { ...auth(), "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        expectContract(res, "POST");
        statuses.add(res.status);
        expect([200, 201, 400, 403, 404], res.text.slice(0, 300)).toContain(res.status);
        if (res.status < 300) {
          const preview = JSON.parse(res.text);
          expect(preview.dataset_id).toBe(datasetId);
          expect(preview.streams.length).toBeGreaterThan(0);
          for (const stream of preview.streams) expect(stream.url).toContain("X-Amz-Signature=");
        } else {
          expect(res.text).not.toContain("X-Amz-");
        }
      }),
      // Besides the random ones, a body of each kind, so that every side is reached whatever the seed.
      {
        numRuns: 300,
        examples: [
          [{ episode_id: episodeIds[0]!, version: "1.0.0", streams: ["cam"] }],
          [{ episode_id: "" }],
          [{ episode_id: episodeIds[0]!, version: "2.0.0" }],
          [{ episode_id: "no-such-episode", version: "1.0.0" }],
        ],
      },
    );
    // The fuzzer reached both sides: previews and refusals (an unlicensed version is 403).
    expect([...statuses]).toEqual(expect.arrayContaining([201, 400, 403, 404]));
  });
});

describe("transport", () => {
  it("refuses an Accept header that excludes JSON with 406 and accepts the usual ones", async () => {
    for (const accept of ["text/html", "application/xml", "application/json;q=0", "image/*"]) {
      const res = await get("/api/v1/datasets", { ...auth(), accept });
      expectContract(res);
      expect(res.status, accept).toBe(406);
      expect(JSON.parse(res.text).error.code).toBe("not_acceptable");
    }
    for (const accept of ["application/json", "*/*", "application/*", "text/html, application/json;q=0.5", ""]) {
      const res = await get("/api/v1/datasets", { ...auth(), accept });
      expect(res.status, accept).toBe(200);
    }
  });

  it("refuses plain HTTP behind a proxy with 403 https_required instead of redirecting", async () => {
    const res = await get("/api/v1/datasets", {
      ...auth(),
      host: "api.example.com",
      "x-forwarded-proto": "http",
      "x-forwarded-for": "203.0.113.7",
    });
    expectContract(res);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text).error.code).toBe("https_required");
    expect(header(res, "location")).toBe("");
  });

  it("serves HTTPS behind a proxy, and plain HTTP only to loopback clients on a loopback host", async () => {
    const viaProxy = await get("/api/v1/datasets", {
      ...auth(),
      host: "api.example.com",
      "x-forwarded-proto": "https",
      "x-forwarded-for": "203.0.113.7",
    });
    expect(viaProxy.status).toBe(200);
    const local = await get("/api/v1/datasets", auth());
    expect(local.status).toBe(200);
    const spoofedHost = await get("/api/v1/datasets", {
      ...auth(),
      host: "localhost",
      "x-forwarded-proto": "http",
      "x-forwarded-for": "203.0.113.7",
    });
    expect(spoofedHost.status).toBe(403);
  });
});
