import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "@/lib/api/openapi";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";

// Over HTTP, on the production build: needs a build that contains this route and /docs/api
// (`npm test` builds first). In-process checks of the same route are in lib/api/openapi.test.ts.
describe("GET /api/v1/openapi.json and /docs/api over HTTP", () => {
  let server: AppServer;
  beforeAll(async () => {
    server = await startAppServer();
  }, 120_000);
  afterAll(() => server?.stop());

  it("serves the generated document without a key, with X-Request-Id and RateLimit-* headers", async () => {
    const res = await fetch(`${server.url}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]+$/);
    for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"])
      expect(res.headers.get(name), name).toMatch(/^[0-9]+$/);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });

  it("answers other methods with 405 and Allow: GET", async () => {
    const res = await fetch(`${server.url}/api/v1/openapi.json`, { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    expect((await res.json()).error.code).toBe("method_not_allowed");
  });

  it("renders the reference page for anyone, from the same document", async () => {
    const res = await fetch(`${server.url}/docs/api`, { redirect: "manual" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    for (const id of [
      "listDatasets",
      "listVersions",
      "getManifest",
      "listEpisodes",
      "listAnnotations",
      "createDownload",
      "getOpenApiDocument",
    ]) {
      expect(html).toContain(`id="${id}"`);
    }
    expect(html).toContain("das_YOUR_KEY");
    expect(html).toContain('id="error-version_not_licensed"');
  });
});
