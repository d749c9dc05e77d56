import path from "node:path";
import { describe, expect, it } from "vitest";
import { API_ROUTES, PUBLIC_ROUTES, routeFiles, runAuthContract } from "@/lib/testing/auth-contract";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { call } from "@/lib/testing/http";
import type { RouteHandler } from "@/lib/http/route";

// The shared authentication and licence-scope contract, run against every /api/v1 endpoint.
// A new endpoint is one row in API_ROUTES (lib/testing/auth-contract.ts).
runAuthContract(API_ROUTES);

describe("the contract's table", () => {
  it("has a row for every route file under app/api/v1", () => {
    expect(routeFiles().length).toBeGreaterThanOrEqual(5);
    expect([...new Set([...API_ROUTES, ...PUBLIC_ROUTES].map((row) => row.file))].sort()).toEqual(routeFiles());
  });

  it("has a row for every method a route file serves (anything else is 405)", async () => {
    for (const file of routeFiles()) {
      const module = (await import(/* @vite-ignore */ path.join(PROJECT_ROOT, file))) as Record<string, RouteHandler>;
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
        const res = await call(module[method]!, "/api/v1/probe", { method });
        const served = res.status !== 405;
        const listed = [...API_ROUTES, ...PUBLIC_ROUTES].some((row) => row.file === file && row.method === method);
        expect(served, `${method} ${file} answers ${res.status}: add a row for it to API_ROUTES`).toBe(listed);
        if (!served) expect(res.json.error.code).toBe("method_not_allowed");
      }
    }
  });
});
