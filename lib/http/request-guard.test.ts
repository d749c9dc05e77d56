import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import nextConfig from "../../next.config";
import { ACTION_BODY_MAX_BYTES, actionRefusal } from "./request-guard";

// The server action rules of the guard, from the headers alone; app/(portal)/action-limits.test.ts
// holds a running `next start` to them.

const own = { host: "portal.example:3000" };

describe("actionRefusal", () => {
  it("passes a POST from the portal's own origin, or without an Origin, and everything that is not a POST", () => {
    expect(actionRefusal("POST", "/datasets/x", { ...own, origin: "https://portal.example:3000" })).toBeNull();
    expect(actionRefusal("POST", "/datasets/x", { ...own, "content-length": "10" })).toBeNull();
    expect(actionRefusal("GET", "/datasets/x", { ...own, origin: "https://elsewhere.example" })).toBeNull();
    // Behind a proxy that names the public host.
    expect(
      actionRefusal("POST", "/", {
        host: "10.0.0.5:3000",
        "x-forwarded-host": "portal.example, 10.0.0.5",
        origin: "https://portal.example",
      }),
    ).toBeNull();
  });

  it("leaves the API's paths to the API, the Hub protocol's under /hub included", () => {
    // paths-info takes a form body, which its router counts as every body (413 in the envelope).
    const hub = "/hub/api/datasets/das/ds-x/paths-info/main";
    for (const path of ["/api/v1/downloads", hub]) {
      expect(actionRefusal("POST", path, { ...own, origin: "https://elsewhere.example" }), path).toBeNull();
      expect(actionRefusal("POST", path, { ...own, "transfer-encoding": "chunked" }), path).toBeNull();
      expect(actionRefusal("POST", path, { ...own, "content-length": "200000000" }), path).toBeNull();
    }
  });

  it("refuses another origin (and the opaque `null`) with 403", () => {
    for (const origin of ["https://elsewhere.example", "null", "https://portal.example:3001", "not a url"])
      expect(actionRefusal("POST", "/datasets/x", { ...own, origin })).toMatchObject({ api: false, status: 403 });
  });

  it("refuses a declared length over the limit with 413, and a body without one with 411", () => {
    expect(actionRefusal("POST", "/", { ...own, "content-length": String(ACTION_BODY_MAX_BYTES) })).toBeNull();
    expect(actionRefusal("POST", "/", { ...own, "content-length": String(ACTION_BODY_MAX_BYTES + 1) })).toMatchObject({
      status: 413,
    });
    expect(actionRefusal("POST", "/", { ...own, "transfer-encoding": "chunked" })).toMatchObject({ status: 411 });
  });

  it("uses Next's own limit for server actions, so that no body it lets through makes Next answer a 500", () => {
    const bytes = createRequire(import.meta.url)("next/dist/compiled/bytes") as { parse(v: string): number };
    const limit = nextConfig.experimental?.serverActions?.bodySizeLimit;
    expect(bytes.parse(String(limit))).toBe(ACTION_BODY_MAX_BYTES);
  });
});
